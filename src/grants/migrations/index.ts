import type {AnyMigration} from '../../store/migration-types.js'
import * as tokenLastUsed from './2026112404_token_last_used.js'
import * as refreshTokensAndConsents from './2026120102_refresh_tokens_and_consents.js'
import * as dpop from './2026120301_dpop.js'
import * as codeResource from './2026120402_code_resource.js'
import * as replayStore from './2026120403_replay_store.js'

/** The grants' migrations (their tables came with the registry's first one). Names sort in the order they run; append new ones, never edit one that has shipped. */
export const migrations: Record<string, AnyMigration> = {
  '2026112404_token_last_used': tokenLastUsed,
  '2026120102_refresh_tokens_and_consents': refreshTokensAndConsents,
  '2026120301_dpop': dpop,
  '2026120402_code_resource': codeResource,
  '2026120403_replay_store': replayStore,
}
