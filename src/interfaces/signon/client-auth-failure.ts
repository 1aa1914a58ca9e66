import {AppError} from '../../errors.js'

/**
 * What every client that failed to authenticate is told, whatever the reason (node-oidc-provider's
 * InvalidClientAuth): an unknown client, a wrong secret, a method other than the registered one, a
 * public client where credentials are needed, an assertion that does not hold, keys that could not
 * be fetched. One text, so a caller learns neither which clients exist nor which are public, nor
 * what a client's jwks_uri answered; the reason goes to the operator's log instead.
 */
export const CLIENT_AUTH_FAILED = 'client authentication failed'

/**
 * The invalid_client refusal, with `reason` for the log only. `clientId` is the client the request
 * named, when it named one. Neither may hold a secret or the assertion itself.
 */
export function clientAuthFailed(reason: string, clientId?: string): AppError {
  return new AppError('invalid_client', CLIENT_AUTH_FAILED, {logged: {reason, ...(clientId === undefined ? {} : {fields: {client_id: clientId}})}})
}
