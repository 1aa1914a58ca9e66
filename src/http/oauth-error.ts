import {type Challenge, isOAuthCode} from '../errors.js'
import {type ErrorRenderer, errorHeaders} from './error-shape.js'
import {jsonResponse, requestHeader} from './fast.js'

/** The realm OAuth client authentication by HTTP Basic names in its challenge. */
export const OAUTH_REALM = 'medpanel'

const CLIENT_CHALLENGE: Challenge = {scheme: 'Basic', realm: OAUTH_REALM}

/**
 * OAuth error bodies: `{error, error_description}`, never cached (RFC 6749 §5.1). Used by A, and by
 * D, whose spec shows no error body, so it answers like A. A client that failed to authenticate
 * with the Authorization header is told which scheme to use (RFC 6749 §5.2), whichever step
 * refused it: the renderer adds the challenge, so no route has to remember to.
 */
export const renderOAuthError: ErrorRenderer = (c, error) => {
  const code = isOAuthCode(error.code) ? error.code : error.status >= 500 ? (error.status === 503 ? 'temporarily_unavailable' : 'server_error') : 'invalid_request'
  const challenge = code === 'invalid_client' && requestHeader(c, 'authorization') !== undefined ? CLIENT_CHALLENGE : undefined
  return jsonResponse(c, {error: code, error_description: error.message}, error.status as 400, {
    ...errorHeaders(error, challenge),
    'Cache-Control': 'no-store',
    Pragma: 'no-cache',
  })
}
