import type {ErrorRenderer} from './error-shape.js'

/**
 * OAuth error bodies: `{error, error_description}`, never cached (RFC 6749 §5.1). Used by A, and by
 * D, whose spec shows no error body, so it answers like A.
 */
export const renderOAuthError: ErrorRenderer = (c, error) => {
  const code = error.code in OAUTH_CODES ? error.code : error.status >= 500 ? (error.status === 503 ? 'temporarily_unavailable' : 'server_error') : 'invalid_request'
  return c.json({error: code, error_description: error.message}, error.status as 400, {
    ...error.headers,
    'Cache-Control': 'no-store',
    Pragma: 'no-cache',
  })
}
const OAUTH_CODES: Record<string, true> = {
  invalid_request: true,
  invalid_client: true,
  invalid_grant: true,
  unauthorized_client: true,
  unsupported_grant_type: true,
  unsupported_response_type: true,
  invalid_scope: true,
  access_denied: true,
  invalid_token: true,
  insufficient_scope: true,
  unsupported_token_type: true,
}
