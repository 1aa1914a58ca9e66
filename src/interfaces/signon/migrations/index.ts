import type {AnyMigration} from '../../../store/migration-types.js'
import * as signinSessions from './2026112601_signin_sessions.js'
import * as openidConnect from './2026112701_openid_connect.js'
import * as usedJtis from './2026120202_used_jtis.js'
import * as pushedRequests from './2026120204_pushed_requests.js'
import * as backchannelLogoutSessions from './2026120312_backchannel_logout_sessions.js'
import * as codeDpopJkt from './2026120313_code_dpop_jkt.js'

/** Sign-on's migrations. Names sort in the order they run; append new ones, never edit one that has shipped. */
export const migrations: Record<string, AnyMigration> = {
  '2026112601_signin_sessions': signinSessions,
  '2026112701_openid_connect': openidConnect,
  '2026120202_used_jtis': usedJtis,
  '2026120204_pushed_requests': pushedRequests,
  '2026120312_backchannel_logout_sessions': backchannelLogoutSessions,
  '2026120313_code_dpop_jkt': codeDpopJkt,
}
