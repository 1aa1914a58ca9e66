/**
 * Every failure the service reports on purpose is an AppError with a code from this closed union.
 * One table maps a code to its HTTP status; `app.onError` turns the error into the body shape of
 * the interface that raised it (see src/http/error-shape.ts).
 */
export type ErrorCode =
  // RFC 6749 / RFC 6750 codes, used verbatim as the `error` field of interface A
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'invalid_token'
  | 'insufficient_scope'
  | 'unsupported_token_type'
  // OpenID Connect Core §3.1.2.6: sent to the client on the redirect, never as a page
  | 'login_required'
  | 'consent_required'
  | 'request_not_supported'
  | 'request_uri_not_supported'
  // generic codes for the other interfaces
  | 'bad_request'
  | 'unauthorized'
  | 'payment_required'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'not_acceptable'
  | 'conflict'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'unprocessable'
  | 'too_many_requests'
  | 'internal'
  | 'unavailable'

export const CODE_TO_STATUS = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  unsupported_response_type: 400,
  invalid_scope: 400,
  access_denied: 403,
  invalid_token: 401,
  insufficient_scope: 403,
  unsupported_token_type: 400,
  login_required: 400,
  consent_required: 400,
  request_not_supported: 400,
  request_uri_not_supported: 400,
  bad_request: 400,
  unauthorized: 401,
  payment_required: 402,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  not_acceptable: 406,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  unprocessable: 422,
  too_many_requests: 429,
  internal: 500,
  unavailable: 503,
} as const satisfies Record<ErrorCode, number>

export type ErrorStatus = (typeof CODE_TO_STATUS)[ErrorCode]

export interface AppErrorOptions {
  /** Overrides the table, for the few places a spec pins another status to a code. */
  status?: ErrorStatus | 401
  /** Extra response headers, e.g. WWW-Authenticate or Retry-After. */
  headers?: Record<string, string>
  /** Longer text for shapes that carry it (interface E's `details`). */
  details?: string
  /** For browser flows: answer by redirecting here (an OAuth error sent back to the client). */
  location?: string
  cause?: unknown
}

export class AppError extends Error {
  readonly code: ErrorCode
  readonly status: number
  readonly headers: Record<string, string>
  readonly details: string | undefined
  readonly location: string | undefined

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : {cause: options.cause})
    this.name = 'AppError'
    this.code = code
    this.status = options.status ?? CODE_TO_STATUS[code]
    this.headers = options.headers ?? {}
    this.details = options.details
    this.location = options.location
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
