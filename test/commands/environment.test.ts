import {existsSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {cli, tempDir} from '../helpers/cli.js'

/**
 * Settings from environment variables are read and checked once, as a command starts
 * (src/config.ts): a bad one stops `serve` and every other command with one `Error:` line naming
 * the variable and what it accepts, exit 1, before a store is opened or a port taken. Before,
 * a bad MEDPANEL_PASSWORD_COST let `serve` start and answered every sign-in with a 500.
 */
const BAD: [variable: string, value: string, message: string][] = [
  ['MEDPANEL_PASSWORD_COST', 'fast', 'MEDPANEL_PASSWORD_COST must be an integer from 14 to 20 (got "fast")'],
  ['MEDPANEL_PASSWORD_COST', '21', 'MEDPANEL_PASSWORD_COST must be an integer from 14 to 20 (got "21")'],
  ['MEDPANEL_SECRET_KEY', 'c2hvcnQ=', 'MEDPANEL_SECRET_KEY must hold one or more base64-encoded 32-byte keys (the first seals, the rest only open)'],
  ['MEDPANEL_SQLITE_DRIVER', 'sqlite4', 'MEDPANEL_SQLITE_DRIVER must be one of better-sqlite3, node:sqlite (got "sqlite4")'],
  ['MEDPANEL_NOW', 'yesterday', 'MEDPANEL_NOW must be an ISO 8601 date and time, e.g. 2026-01-01T00:00:00Z (got "yesterday")'],
]

describe('a bad environment variable', () => {
  const dir = tempDir()

  for (const [variable, value, message] of BAD) {
    it(`${variable}=${value}: serve and the other commands refuse to start, naming it`, () => {
      const file = join(dir, `${variable}-${value}.db`)
      // serve, a command that only reads, and for the cost the command that hashes a password.
      const runs = [
        ['serve', '--db', file, '--port', '0'],
        ['list-clients', '--db', file],
        ...(variable === 'MEDPANEL_PASSWORD_COST'
          ? [
              [
                'add-member',
                '--db',
                file,
                '--email',
                'ana@clinic.example',
                '--first-name',
                'Ana',
                '--last-name',
                'Ruiz',
                '--country',
                'US',
                '--specialty',
                'Oncology',
                '--password',
                'long-enough-pw-1',
              ],
            ]
          : []),
      ]
      for (const args of runs) {
        const result = cli(args, {[variable]: value})
        expect({args: args[0], status: result.status, stderr: result.stderr, stdout: result.stdout}).toEqual({args: args[0], status: 1, stderr: `Error: ${message}\n`, stdout: ''})
      }
      expect(existsSync(file)).toBe(false)
    })
  }
})
