import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {filesUnder} from '../helpers/tree.js'
import {describe, expect, it} from 'vitest'

/*
 * The environment is read in one place, src/config.ts (environment()), checked once as each
 * command starts. These files read or set process.env besides it, each for the reason given; a new
 * reader fails this test until it is listed here (and in config.ts's comment on environment()).
 */
const READERS: Record<string, string> = {
  'src/config.ts': 'the one reader: every MEDPANEL_* setting without a flag, checked as a command starts',
  'src/cli/main.ts': "sets SHELL when unset, for oclif's completion plugin",
  'src/cli/code-cache.ts': "where V8's code cache goes (MEDPANEL_CACHE_DIR, XDG_CACHE_HOME, HOME) or that it is off (NODE_DISABLE_COMPILE_CACHE), read before the CLI loads",
  'src/registry/throttle.ts': "UV_THREADPOOL_SIZE: libuv's own setting, which bounds how many password hashes run at once",
  'src/store/sqlite/better-sqlite3.ts': 'sets SQLITE_USE_URI, the driver switch that lets it open file: URIs',
  'commands/base-command.ts': 'MEDPANEL_LOG_FORMAT before flags are parsed, so a parse error is written in the asked-for format',
  'commands/serve.ts': "systemd's: the metrics token from its credentials ($CREDENTIALS_DIRECTORY) when no flag gives it, and NOTIFY_SOCKET for compose's notifier",
  'commands/support/secrets.ts': 'the variable a --NAME-from-env flag names, read only when that flag is given',
  'commands/support/store.ts': 'MEDPANEL_DB set but empty, refused as a mistake rather than taken as the default store',
}

const root = fileURLToPath(new URL('../..', import.meta.url))

describe('reading the environment', () => {
  it('happens only in the files listed, each with its reason', () => {
    const readers = [...filesUnder('src', /\.tsx?$/), ...filesUnder('commands', /\.tsx?$/)].filter((file) => /process\.env\b/.test(readFileSync(join(root, file), 'utf8'))).sort()
    expect(readers).toEqual(Object.keys(READERS).sort())
  })
})
