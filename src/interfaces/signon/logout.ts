import {AppError} from '../../errors.js'
import {narrow} from '../../store/database.js'
import {findClient} from '../../registry/repository.js'
import type {Client} from '../../registry/tables.js'
import type {SignonDb as Db} from './tables.js'
import {uriListed} from './authorize.js'
import {redirectWith} from './authorization-response.js'
import {isPublicClient} from './client-auth.js'
import {readOwnIdToken} from './signing-keys.js'

export interface LogoutRequest {
  id_token_hint?: string | undefined
  post_logout_redirect_uri?: string | undefined
  state?: string | undefined
  client_id?: string | undefined
}

const invalidRequest = (why: string) => new AppError('invalid_request', why)

/**
 * Checks an RP-initiated logout request (OpenID Connect RP-Initiated Logout 1.0): the client the
 * hint (or client_id) names, the member the hint names, and where the browser may go afterwards,
 * only to a URI that client registered (postLogoutAllowed). Anything unproven is invalid_request;
 * nothing ends: it only reads, through `reader`.
 */
export async function checkLogoutRequest(
  reader: Db,
  params: LogoutRequest,
  issuer: string,
  now: Date,
): Promise<{client: Client | undefined; subject: unknown; destination: string | undefined}> {
  let client: Client | undefined
  let subject: unknown
  if (params.id_token_hint !== undefined) {
    const claims = await readOwnIdToken(reader, params.id_token_hint, issuer, now)
    if (!claims) throw invalidRequest('id_token_hint is not an ID token this service issued')
    const audience = Array.isArray(claims.aud) ? claims.aud[0] : claims.aud
    if (params.client_id !== undefined && params.client_id !== audience) throw invalidRequest("client_id is not the ID token's audience")
    client = typeof audience === 'string' ? await findClient(narrow(reader), audience) : undefined
    subject = claims.sub
  } else if (params.client_id !== undefined) {
    client = await findClient(narrow(reader), params.client_id)
    if (!client) throw invalidRequest('unknown client_id')
  }
  let destination: string | undefined
  if (params.post_logout_redirect_uri !== undefined) {
    if (!client) throw invalidRequest('post_logout_redirect_uri needs an id_token_hint or a client_id to say whose it is')
    if (!postLogoutAllowed(client, params.post_logout_redirect_uri)) {
      throw invalidRequest("post_logout_redirect_uri is not registered for this application, nor one of its redirect URIs or their sites' roots")
    }
    destination = redirectWith(params.post_logout_redirect_uri, {state: params.state})
  }
  return {client, subject, destination}
}

/**
 * Where a client may send the browser after logout: a post-logout URI it registered, exactly; or,
 * with nothing more to register (as Keycloak's "+" does), one of its redirect URIs, matched as the
 * authorize endpoint matches them, or the root of one's origin (https://app.example/, also
 * written https://app.example). A client may already send members to those, so they open
 * nothing new; every library that sends post_logout_redirect_uri then works with defaults.
 */
export function postLogoutAllowed(client: Client, uri: string): boolean {
  if (client.post_logout_redirect_uris.includes(uri)) return true
  const roots = client.redirect_uris.flatMap((registered) => {
    const origin = URL.canParse(registered) ? new URL(registered).origin : 'null'
    // A private-use scheme (com.example.app:/cb) has an opaque origin: no root to go to.
    return origin === 'null' ? [] : [`${origin}/`]
  })
  const asked = URL.canParse(uri) && new URL(uri).origin === uri ? `${uri}/` : uri
  return uriListed([...client.redirect_uris, ...roots], asked, isPublicClient(client))
}
