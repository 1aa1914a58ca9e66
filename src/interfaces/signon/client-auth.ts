import {AppError} from '../../errors.js'
import {findClient} from '../../registry/repository.js'
import {authenticateClient} from '../../registry/service.js'
import type {Client} from '../../registry/tables.js'
import {readerOf} from '../../store/db.js'
import type {Db} from '../../store/database.js'

/** How a client proved itself at the token, revocation or introspection endpoint. */
export interface ClientCredentials {
  clientId: string
  /** Undefined when the request named the client without a secret: only a public client may. */
  clientSecret: string | undefined
  /** Where the request came from, for the failed-attempt throttle. */
  address?: string | undefined
}

/** Whether a client is public (RFC 6749 §2.1): it holds no secret and authenticates with none. */
export function isPublicClient(client: Pick<Client, 'token_endpoint_auth_method'>): boolean {
  return client.token_endpoint_auth_method === 'none'
}

/**
 * The client the credentials prove, or invalid_client; an expired client's account proves nothing.
 * A request without a secret proves a public client by its id alone (token_endpoint_auth_method
 * none): what it may do is bound by PKCE and its exact redirect URIs instead. Any other client
 * named without a secret, known or not, gets the same refusal, so the answer tells nothing of
 * which confidential clients exist.
 */
export async function requireClient(db: Db, credentials: ClientCredentials, now: Date): Promise<Client> {
  const client =
    credentials.clientSecret === undefined
      ? await publicClient(db, credentials.clientId)
      : await authenticateClient(db, credentials.clientId, credentials.clientSecret, {now, address: credentials.address})
  if (!client) throw new AppError('invalid_client', 'client authentication failed: unknown client or wrong secret')
  if (client.expired_at !== null) throw new AppError('invalid_client', 'client account has expired')
  return client
}

async function publicClient(db: Db, clientId: string): Promise<Client> {
  const client = await findClient(readerOf(db), clientId)
  if (!client || !isPublicClient(client)) throw new AppError('invalid_client', 'client_secret is required')
  return client
}
