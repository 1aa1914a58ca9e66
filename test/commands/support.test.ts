import {describe, expect, it} from 'vitest'
import {AppError} from '../../src/errors.js'
import {failureLine} from '../../commands/support/messages.js'
import {requireAsked} from '../../commands/support/prompts.js'
import {readSecret} from '../../commands/support/secrets.js'
import {DEFAULT_STORE, DEMO_STORE, storeName} from '../../commands/support/store.js'

// The helpers BaseCommand hands each concern to, checked without starting a CLI (the CLI tests
// check the same words end to end).
describe("the commands' support helpers", () => {
  it('names every missing asked-for flag at once, a -stdin flag counting for its secret', () => {
    expect(() => requireAsked(['name', 'url'], {})).toThrow('missing required flags --name, --url (a terminal would be asked for them)')
    expect(() => requireAsked(['password'], {'password-stdin': true})).not.toThrow()
    expect(() => requireAsked(['grant'], {grant: []})).toThrow('missing required flag --grant (a terminal would be asked for it)')
  })

  it('refuses a secret named twice, and reads a named variable', async () => {
    const argv = ['--password', 'x']
    await expect(readSecret('x', 'password', {argv, fromStdin: true})).rejects.toThrow('give one of --password, --password-stdin, not several')
    process.env.MEDPANEL_SUPPORT_TEST_SECRET = 's3cret'
    try {
      const fromEnv = {env: 'MEDPANEL_SUPPORT_TEST_SECRET', given: true}
      await expect(readSecret(undefined, 'password', {argv: [], fromStdin: false, fromEnv})).resolves.toBe('s3cret')
    } finally {
      delete process.env.MEDPANEL_SUPPORT_TEST_SECRET
    }
    // A value from the variable alone (not on the command line) is no second source.
    await expect(readSecret('from-env', 'password', {argv: [], fromStdin: false})).resolves.toBe('from-env')
  })

  it('names the store as the operator gave it, a URL without its password', () => {
    expect(storeName(undefined, false)).toBe('the store')
    expect(storeName({}, false)).toBe(DEFAULT_STORE)
    expect(storeName({}, true)).toBe(DEMO_STORE)
    expect(storeName({'database-url': 'postgres://u:pw@db.example/panel'}, false)).not.toContain('pw')
  })

  it('prints one Error line, or one JSON line, and hides an internal error', () => {
    const none = () => undefined
    expect(failureLine(new AppError('bad_request', 'no such client'), none, 'text')).toBe('Error: no such client')
    expect(failureLine(new AppError('internal', 'stack details'), none, 'text')).toBe('Error: internal error')
    expect(JSON.parse(failureLine(new Error('Parsing --port\n  expected an integer'), none, 'json'))).toMatchObject({level: 'error', msg: 'Parsing --port: expected an integer'})
  })
})
