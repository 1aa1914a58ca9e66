import {AppError} from '../../errors.js'
import {clientAuthFailed} from './client-auth-failure.js'
import {narrow, narrowParts, type StoreParts} from '../../store/database.js'
import {type PresentedAssertion, verifyClientAssertion} from './client-assertion.js'
import {findClient} from '../../registry/repository.js'
import {authenticateClient} from '../../registry/service.js'
import type {Client} from '../../registry/tables.js'
import type {Metrics} from '../../metrics/metrics.js'
import type {SignonDb as Db} from './tables.js'

/** How a client proved itself at the token, revocation or introspection endpoint. */
export interface ClientCredentials {
  clientId: string
  /** Undefined when the request named the client without a secret: only a public client may. */
  clientSecret: string | undefined
  /** Where the request came from, for the failed-attempt throttle. */
  address?: string | undefined
  /** private_key_jwt: the signed assertion presented instead of a secret (clientId is its iss). */
  assertion?: PresentedAssertion
  /**
   * The serving app's registry: a wrong secret refused by the guessing limits, and the tokens a
   * revocation ends, are counted there. Undefined with metrics off (and in an operator's command).
   */
  metrics?: Metrics | undefined
}

/** Whether a client is public (RFC 6749 §2.1): it holds no secret and authenticates with none. */
export function isPublicClient(client: Pick<Client, 'token_endpoint_auth_method'>): boolean {
  return client.token_endpoint_auth_method === 'none'
}

/**
 * The client the credentials prove, or invalid_client; an expired client's account proves nothing.
 * A request without a secret proves a public client by its id alone (token_endpoint_auth_method
 * none): what it may do is bound by PKCE and its exact redirect URIs instead. Every refusal says
 * the same (client-auth-failure.ts), so the answer tells nothing of which clients exist, which
 * are public or how they authenticate; the log says why.
 */
export async function requireClient(store: StoreParts<Db>, credentials: ClientCredentials, now: Date): Promise<Client> {
  const client = credentials.assertion
    ? await assertedClient(store, credentials.clientId, credentials.assertion, now)
    : credentials.clientSecret === undefined
      ? await publicClient(store.reader, credentials.clientId)
      : await authenticateClient(narrowParts(store), credentials.clientId, credentials.clientSecret, {now, address: credentials.address, metrics: credentials.metrics})
  if (!client) throw clientAuthFailed('unknown client or wrong secret', credentials.clientId)
  if (client.expired_at !== null) throw clientAuthFailed('the client account has expired', credentials.clientId)
  return client
}

/**
 * A client that signed an assertion: only one registered for private_key_jwt, with the assertion
 * checked against its keys. A client registered for a secret cannot switch to assertions, nor the
 * other way round (OpenID Connect Core §9: the method is the registered one).
 */
async function assertedClient({db, reader}: StoreParts<Db>, clientId: string, assertion: PresentedAssertion, now: Date): Promise<Client> {
  const client = await findClient(narrow(reader), clientId)
  if (client?.token_endpoint_auth_method !== 'private_key_jwt') {
    throw clientAuthFailed(
      client === undefined ? 'client_assertion for an unknown client' : `client_assertion from a client registered for ${client.token_endpoint_auth_method}`,
      clientId,
    )
  }
  await verifyClientAssertion(db, client, assertion, now)
  return client
}

async function publicClient(reader: Db, clientId: string): Promise<Client> {
  const client = await findClient(narrow(reader), clientId)
  if (!client) throw clientAuthFailed('unknown client, named without a secret', clientId)
  if (!isPublicClient(client)) throw clientAuthFailed(`no credentials from a client registered for ${client.token_endpoint_auth_method}`, clientId)
  return client
}

/**
 * The client of a token request, authenticated, with its DPoP rule applied: a client registered
 * with --require-dpop (dpop_bound_access_tokens) gets nothing without a proof (`dpopJkt` null).
 */
export async function requireTokenClient(store: StoreParts<Db>, credentials: ClientCredentials, dpopJkt: string | null, now: Date): Promise<Client> {
  const client = await requireClient(store, credentials, now)
  if (client.dpop_bound_access_tokens === 1 && dpopJkt === null) {
    throw new AppError('invalid_request', 'this client takes only DPoP-bound tokens: send a DPoP proof with the request (RFC 9449)')
  }
  return client
}
