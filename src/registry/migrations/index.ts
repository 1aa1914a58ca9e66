import type {AnyMigration} from '../../store/migration-types.js'
import * as registrySignon from './2026112201_registry_signon.js'
import * as sealedSecrets from './2026112401_sealed_secrets.js'
import * as authFailures from './2026112402_auth_failures.js'
import * as memberSessions from './2026112403_member_sessions.js'
import * as clientAuthMethod from './2026120101_client_auth_method.js'
import * as clientKeys from './2026120201_client_keys.js'
import * as requirePar from './2026120203_require_par.js'
import * as dpopBound from './2026120302_dpop_bound_access_tokens.js'
import * as backchannelLogout from './2026120311_backchannel_logout.js'
import * as accessTokenFormat from './2026120401_access_token_format.js'
import * as clientRegistration from './2026120401_client_registration.js'

/** The registry's migrations: clients, members, settings and the guessing limits (the first one also made the tables of the grants, which sign-on issues). Names sort in the order they run; append new ones, never edit one that has shipped. */
export const migrations: Record<string, AnyMigration> = {
  '2026112201_registry_signon': registrySignon,
  '2026112401_sealed_secrets': sealedSecrets,
  '2026112402_auth_failures': authFailures,
  '2026112403_member_sessions': memberSessions,
  '2026120101_client_auth_method': clientAuthMethod,
  '2026120201_client_keys': clientKeys,
  '2026120203_require_par': requirePar,
  '2026120302_dpop_bound_access_tokens': dpopBound,
  '2026120311_backchannel_logout': backchannelLogout,
  '2026120401_access_token_format': accessTokenFormat,
  '2026120401_client_registration': clientRegistration,
}
