import type {Kysely} from 'kysely'
import type {Metrics} from '../../../metrics/metrics.js'
import type {StoreParts} from '../../../store/database.js'
import type {z} from 'zod'
import type {Client} from '../../../registry/tables.js'
import type {SignonView as Database} from '../tables.js'
import type {tokenForm} from '../schema.js'
import type {TokenResponse} from '../tokens.js'

/**
 * A token request as the route read it: the form, and the client's proof, checked on demand; with
 * the store's parts (its connection, reader and keys: an ID token is signed with a sealed key).
 */
export interface TokenRequest extends StoreParts<Kysely<Database>> {
  form: z.infer<typeof tokenForm>
  /**
   * Authenticates the calling client (HTTP Basic or the form's fields) and answers it, or throws
   * invalid_client. A grant calls it once its own fields are known to be there, so a request
   * missing a field is refused as malformed before any secret is checked.
   */
  authenticate: () => Promise<Client>
  /**
   * The JWK thumbprint of the request's DPoP proof, already checked (RFC 9449 §5): the access
   * token is bound to that key; null without a proof (a bearer token).
   */
  dpopJkt: string | null
  /** The issuer ID tokens name: the service's base URL. */
  issuer: string
  now: Date
  /** The serving app's registry, where the tokens a replayed code or refresh token revokes are counted; undefined with metrics off. */
  metrics?: Metrics | undefined
}

/**
 * One grant type of the token endpoint (RFC 6749 §4, §6): the endpoint looks the request's
 * grant_type up among those flows/index.ts lists, hands the request over, and counts the token
 * it answers under the grant's name. A new grant is one module that exports a GrantFlow, and its
 * name in that list.
 */
export interface GrantFlow {
  /** The grant_type value, as discovery lists it and the metrics count it. */
  readonly grantType: string
  exchange(request: TokenRequest): Promise<TokenResponse>
}
