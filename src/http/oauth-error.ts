import {basicChallenge} from './basic-auth.js'
import type {ErrorRenderer} from './error-shape.js'

/** The realm OAuth client authentication by HTTP Basic names in its challenge. */
export const OAUTH_REALM = 'medpanel'

/**
 * OAuth error bodies: `{error, error_description}`, never cached (RFC 6749 §5.1). Used by A, and by
 * D, whose spec shows no error body, so it answers like A. A client that failed to authenticate
 * with the Authorization header is told which scheme to use (RFC 6749 §5.2), whichever step
 * refused it: the renderer adds the challenge, so no route has to remember to.
 */
export const renderOAuthError: ErrorRenderer = (c, error) => {
  const code = error.code in OAUTH_CODES ? error.code : error.status >= 500 ? (error.status === 503 ? 'temporarily_unavailable' : 'server_error') : 'invalid_request'
  const challenge: Record<string, string> =
    code === 'invalid_client' && error.headers['WWW-Authenticate'] === undefined && c.req.header('authorization') !== undefined
      ? {'WWW-Authenticate': basicChallenge(OAUTH_REALM)}
      : {}
  return c.json({error: code, error_description: error.message}, error.status as 400, {
    ...error.headers,
    ...challenge,
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
  login_required: true,
  consent_required: true,
  request_not_supported: true,
  request_uri_not_supported: true,
}
