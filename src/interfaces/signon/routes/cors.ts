import type {Context, MiddlewareHandler} from 'hono'
import {narrow, type StoreParts} from '../../../store/database.js'
import {hasGrant} from '../../../registry/service.js'
import {listClients} from '../../../registry/repository.js'
import type {SignonDb as Db} from '../tables.js'
import {versionCache} from '../../../store/version-cache.js'
import {requestHeader} from '../../../http/fast.js'

/**
 * Cross-origin access for the endpoints a browser app calls itself, never `*` (these answers carry
 * a client's tokens and a member's claims). The token endpoint and revocation take a client's
 * credentials, and a confidential client's secret (or private key) never belongs in a browser, so
 * they answer only the origins of public clients' (token_endpoint_auth_method none) registered
 * http(s) redirect URIs. UserInfo takes a bearer token and no client credentials, so it answers
 * the origins of every live sign-on client. A preflight names no client, so it is answered for an
 * origin one of those clients registered; the answer itself carries Access-Control-Allow-Origin
 * only when the origin is one of the client the request named (its client_id, or the client of
 * the presented token) and that client is among them. No cookie is read on these paths, so no
 * credentials mode is offered.
 */

/** Whose origins an endpoint answers: public clients' only, or every live sign-on client's. */
export type CorsClients = 'public' | 'sign-on'

/** Each origin of the chosen live sign-on clients' http(s) redirect URIs, with the clients that registered it. */
const originOwners = versionCache<CorsClients, Map<string, Set<string>>>(2)

async function ownersOf({db, reader}: StoreParts<Db>, kind: CorsClients): Promise<Map<string, Set<string>>> {
  return originOwners(db, kind, async () => {
    const owners = new Map<string, Set<string>>()
    for (const client of await listClients(narrow(reader))) {
      if (client.expired_at !== null || !hasGrant(client, 'signon')) continue
      if (kind === 'public' && client.token_endpoint_auth_method !== 'none') continue
      for (const uri of client.redirect_uris) {
        const url = new URL(uri)
        if (url.protocol !== 'https:' && url.protocol !== 'http:') continue
        const clients = owners.get(url.origin) ?? new Set<string>()
        clients.add(client.id)
        owners.set(url.origin, clients)
      }
    }
    return owners
  })
}

/** The client a request named, as the handler found it (set with `corsClient`). */
const namedClients = new WeakMap<Context, string>()

/** Records which client a request to a CORS endpoint speaks for: only its origins may read the answer. */
export function corsClient(c: Context, clientId: string): void {
  namedClients.set(c, clientId)
}

export function clientCors(store: StoreParts<Db>, kind: CorsClients): MiddlewareHandler {
  return async function crossOrigin(c, next) {
    const origin = requestHeader(c, 'origin')
    const owners = origin === undefined ? undefined : (await ownersOf(store, kind)).get(origin)
    if (origin === undefined || owners === undefined) return next()
    if (c.req.method === 'OPTIONS') {
      return c.body(null, 204, {
        'Access-Control-Allow-Origin': origin,
        'Access-Control-Allow-Methods': 'GET, POST',
        // DPoP: a browser app sends its proof in the DPoP header (RFC 9449 §4.1).
        'Access-Control-Allow-Headers': 'Authorization, Content-Type, DPoP',
        'Access-Control-Max-Age': '600',
        Vary: 'Origin',
      })
    }
    await next()
    c.res.headers.append('Vary', 'Origin')
    const named = namedClients.get(c)
    if (named === undefined || owners.has(named)) {
      c.res.headers.set('Access-Control-Allow-Origin', origin)
      // The nonce for the next DPoP proof, and a resource's DPoP challenge, are for the app to read.
      c.res.headers.set('Access-Control-Expose-Headers', 'DPoP-Nonce, WWW-Authenticate')
    }
  }
}
