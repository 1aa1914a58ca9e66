import type {Kysely} from 'kysely'
import type {Metrics} from '../../../metrics/metrics.js'
import type {StoreParts} from '../../../store/database.js'
import type {z} from 'zod'
import type {Client} from '../../../registry/tables.js'
import type {SignonView as Database} from '../tables.js'
import type {tokenForm} from '../schema.js'
import type {TokenResponse} from '../tokens.js'

/** The token endpoint's form, every field it may carry. */
export type TokenForm = z.infer<typeof tokenForm>

/**
 * The fields a grant may read: those of the form that are neither the grant type (the endpoint's,
 * to choose the grant) nor the client's credentials (client authentication's, behind
 * `authenticate`).
 */
export type GrantParameter = Exclude<keyof TokenForm, 'grant_type' | 'client_id' | 'client_secret' | 'client_assertion_type' | 'client_assertion'>

/**
 * A token request as the route read it: the fields of the form its grant declared, and the
 * client's proof, checked on demand; with the store's parts (its connection, reader and keys: an
 * ID token is signed with a sealed key).
 */
export interface TokenRequest<P extends GrantParameter = GrantParameter> extends StoreParts<Kysely<Database>> {
  /** The form's fields this grant declared in `parameters`, and no other. */
  form: Pick<TokenForm, P>
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
export interface GrantFlow<P extends GrantParameter = GrantParameter> {
  /** The grant_type value, as discovery lists it and the metrics count it. */
  readonly grantType: string
  /**
   * The form fields the grant reads, as node-oidc-provider's grants declare their `parameters`:
   * the endpoint hands it these alone, so a field it does not name cannot steer it.
   */
  readonly parameters: readonly P[]
  exchange(request: TokenRequest<P>): Promise<TokenResponse>
}

/** The declared fields of `form`, for `flow`. */
export function grantParameters<P extends GrantParameter>(flow: GrantFlow<P>, form: TokenForm): Pick<TokenForm, P> {
  const fields: Partial<Pick<TokenForm, P>> = {}
  for (const name of flow.parameters) if (form[name] !== undefined) fields[name] = form[name]
  return fields as Pick<TokenForm, P>
}
