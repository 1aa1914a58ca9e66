/**
 * Every failure the service reports on purpose is an AppError with a code from the one table
 * below, which gives each code its HTTP status and says whether OAuth bodies may carry it. The
 * lookups the error shapes need (a bare status to its code, the codes of OAuth's own) are read
 * from it, never written out again; `app.onError` turns the error into the body shape of the
 * interface that raised it (see src/http/error-shape.ts).
 */
export const ERROR_CODES = {
  // RFC 6749 / RFC 6750 codes, used verbatim as the `error` field of interface A
  invalid_request: {status: 400, oauth: true},
  invalid_client: {status: 401, oauth: true},
  invalid_grant: {status: 400, oauth: true},
  unauthorized_client: {status: 400, oauth: true},
  unsupported_grant_type: {status: 400, oauth: true},
  unsupported_response_type: {status: 400, oauth: true},
  invalid_scope: {status: 400, oauth: true},
  access_denied: {status: 403, oauth: true},
  invalid_token: {status: 401, oauth: true},
  insufficient_scope: {status: 403, oauth: true},
  unsupported_token_type: {status: 400, oauth: true},
  // RFC 8707 §2: a resource indicator that is not an absolute URI, or carries a fragment
  invalid_target: {status: 400, oauth: true},
  // OpenID Connect Core §3.1.2.6: sent to the client on the redirect, never as a page
  login_required: {status: 400, oauth: true},
  consent_required: {status: 400, oauth: true},
  request_not_supported: {status: 400, oauth: true},
  request_uri_not_supported: {status: 400, oauth: true},
  // RFC 9449 §5, §7.1, §8: a DPoP proof that does not hold, or one without the nonce asked for
  // (401 at a resource, which says so in its DPoP challenge)
  invalid_dpop_proof: {status: 400, oauth: true},
  use_dpop_nonce: {status: 400, oauth: true},
  // RFC 7591 §3.2.2: a registration refused for its redirect URIs, or for other metadata
  invalid_redirect_uri: {status: 400, oauth: true},
  invalid_client_metadata: {status: 400, oauth: true},
  // generic codes for the other interfaces, one per status: a bare status (an HTTPException from
  // a Hono middleware) is read back through them
  bad_request: {status: 400, oauth: false},
  unauthorized: {status: 401, oauth: false},
  payment_required: {status: 402, oauth: false},
  forbidden: {status: 403, oauth: false},
  not_found: {status: 404, oauth: false},
  method_not_allowed: {status: 405, oauth: false},
  not_acceptable: {status: 406, oauth: false},
  conflict: {status: 409, oauth: false},
  payload_too_large: {status: 413, oauth: false},
  unsupported_media_type: {status: 415, oauth: false},
  unprocessable: {status: 422, oauth: false},
  too_many_requests: {status: 429, oauth: false},
  internal: {status: 500, oauth: false},
  unavailable: {status: 503, oauth: false},
} as const satisfies Record<string, {status: number; oauth: boolean}>

/** The closed union of codes: the keys of the table. */
export type ErrorCode = keyof typeof ERROR_CODES

export type ErrorStatus = (typeof ERROR_CODES)[ErrorCode]['status']

/** True for RFC 6749 / RFC 6750 / OpenID Connect codes, which an OAuth body names as they are. */
export function isOAuthCode(code: ErrorCode): boolean {
  return ERROR_CODES[code].oauth
}

const GENERIC_BY_STATUS = new Map<number, ErrorCode>()
for (const [code, {status, oauth}] of Object.entries(ERROR_CODES) as [ErrorCode, (typeof ERROR_CODES)[ErrorCode]][]) {
  if (!oauth) GENERIC_BY_STATUS.set(status, code)
}

/**
 * The generic code of a status, for an error that came with a status alone: the table read
 * backwards. Undefined for a status no code has.
 */
export function codeOfStatus(status: number): ErrorCode | undefined {
  return GENERIC_BY_STATUS.get(status)
}

/**
 * What a refused caller is asked to authenticate with (RFC 9110 §11.6.1). It travels on the error
 * as data; the error shape writes it as the WWW-Authenticate header (src/http/error-shape.ts). A
 * Bearer challenge's error_description is the error's message (RFC 6750 §3).
 */
export type Challenge =
  | {readonly scheme: 'Basic'; readonly realm: string}
  | {readonly scheme: 'Bearer'; readonly error: 'invalid_request' | 'invalid_token' | 'insufficient_scope'; readonly scope?: string}
  /** RFC 9449 §7.1: a resource refusing a DPoP-bound token or its proof, with the algorithms it takes. */
  | {readonly scheme: 'DPoP'; readonly error: 'invalid_request' | 'invalid_token' | 'invalid_dpop_proof' | 'use_dpop_nonce'; readonly algs: string}

/**
 * An authorization response on its way back to the client (RFC 6749 §4.1.2): the redirect URI, the
 * response mode that carries it (a redirect with a query, or a form the browser posts), and its
 * parameters.
 */
export interface ClientReturn {
  readonly redirectUri: string
  readonly mode: 'query' | 'form_post'
  readonly params: Readonly<Record<string, string | undefined>>
}

export interface AppErrorOptions {
  /** Overrides the table, for the few places a spec pins another status to a code. */
  status?: ErrorStatus
  /** Extra response headers, e.g. Retry-After. A challenge goes in `challenge`, never here. */
  headers?: Record<string, string>
  /** The authentication a refusal asks for, sent as WWW-Authenticate. */
  challenge?: Challenge
  /** Longer text for shapes that carry it (interface E's `details`). */
  details?: string
  /** For browser flows: answer by sending this back to the client (an OAuth error in the authorization response). */
  clientReturn?: ClientReturn
  /**
   * For a refusal whose answer says less than the operator needs (a client that failed to
   * authenticate is told nothing of why): the real reason, written to the log by `app.onError`
   * with the request id, and any fields for its JSON line. Never a secret.
   */
  logged?: LoggedReason
  cause?: unknown
}

/** The reason of a refusal that goes to the log only (see AppErrorOptions.logged). */
export interface LoggedReason {
  readonly reason: string
  readonly fields?: Readonly<Record<string, string>>
}

export class AppError extends Error {
  readonly code: ErrorCode
  readonly status: number
  readonly headers: Record<string, string>
  readonly challenge: Challenge | undefined
  readonly details: string | undefined
  readonly clientReturn: ClientReturn | undefined
  readonly logged: LoggedReason | undefined

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : {cause: options.cause})
    this.name = 'AppError'
    this.code = code
    this.status = options.status ?? ERROR_CODES[code].status
    this.headers = options.headers ?? {}
    this.challenge = options.challenge
    this.details = options.details
    this.clientReturn = options.clientReturn
    this.logged = options.logged
  }
}

/** True for errors a caller caused (4xx); those are shown to them as they are. */
export function isClientError(error: unknown): error is AppError {
  return error instanceof AppError && error.status < 500
}

/** Thrown by services for a bad argument from any caller: an HTTP client or a CLI flag. */
export function badRequest(message: string, options?: AppErrorOptions): AppError {
  return new AppError('bad_request', message, options)
}

export function notFound(message: string, options?: AppErrorOptions): AppError {
  return new AppError('not_found', message, options)
}
