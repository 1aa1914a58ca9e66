import {AppError} from '../../errors.js'
import {authenticateClient} from '../../registry/service.js'
import type {Client} from '../../registry/tables.js'
import type {Db} from '../../store/database.js'

/** How a client proved itself at the token, revocation or introspection endpoint. */
export interface ClientCredentials {
  clientId: string
  clientSecret: string
  /** Where the request came from, for the failed-attempt throttle. */
  address?: string | undefined
}

/** The client the credentials prove, or invalid_client; an expired client's account proves nothing. */
export async function requireClient(db: Db, credentials: ClientCredentials, now: Date): Promise<Client> {
  const client = await authenticateClient(db, credentials.clientId, credentials.clientSecret, {now, address: credentials.address})
  if (!client) throw new AppError('invalid_client', 'client authentication failed: unknown client or wrong secret')
  if (client.expired_at !== null) throw new AppError('invalid_client', 'client account has expired')
  return client
}
