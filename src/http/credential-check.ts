import type {Context} from 'hono'
import type {AppError} from '../errors.js'

/**
 * The one contract of the authentication factories (basicClientAuth, apiKey, bearerTokenGuard):
 * a refusal is always a thrown AppError, whoever finds it. The factory throws `missing()` when
 * the request carries no credentials of its kind; `verify` resolves to what the credentials
 * grant or throws the interface's refusal. The refusal carries what the answer needs (its code,
 * status, and the challenge as data), and the interface's error shape is the one place it is
 * rendered, WWW-Authenticate included (src/http/error-shape.ts).
 */
export interface CredentialCheck<Credentials, T> {
  /** The refusal when no credentials of this kind were sent (or they cannot be parsed). */
  missing: () => AppError
  /** Resolves to what the credentials grant; throws an AppError to refuse them. */
  verify: (credentials: Credentials, c: Context) => Promise<T>
  /** Hands what was granted to the handlers. */
  accept?: (c: Context, granted: T) => void
}
