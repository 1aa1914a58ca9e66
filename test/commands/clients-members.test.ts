import {join} from 'node:path'
import {beforeEach, describe, expect, it} from 'vitest'
import {authenticateClient} from '../../src/registry/service.js'
import {cli, cliJson, tempDir} from '../helpers/cli.js'
import {openCliStore} from '../helpers/store.js'

/** Exit 1 with exactly one `Error:` line on stderr and nothing on stdout. */
function expectUserError(result: ReturnType<typeof cli>, pattern: RegExp) {
  expect(result.status).toBe(1)
  expect(result.stdout).toBe('')
  const lines = result.stderr.trim().split('\n')
  expect(lines).toHaveLength(1)
  expect(lines[0]).toMatch(/^Error: /)
  expect(lines[0]).toMatch(pattern)
}

describe('client and member commands', () => {
  // Every test gets a new, empty store; the ones that need a registered client make it themselves.
  let db: string
  let base: string[]
  beforeEach(() => {
    db = join(tempDir(), 'cmd.db')
    base = ['--db', db]
  })

  /** Registers "Acme" (signon and balance, two redirect URIs) and returns its id. */
  const registerAcme = (): string =>
    cliJson([
      'register-client',
      ...base,
      '--name',
      'Acme',
      '--url',
      'https://acme.example',
      '--logo-url',
      'https://acme.example/l.png',
      '--redirect-uri',
      'https://acme.example/cb,http://127.0.0.1:9999/cb',
      '--grant',
      'signon',
      '--grant',
      'balance',
    ]).client_id

  it('register-client --json prints the id, the secret once, and the registration', () => {
    const client = cliJson([
      'register-client',
      ...base,
      '--name',
      'Beta',
      '--url',
      'https://beta.example',
      '--logo-url',
      'https://beta.example/l.png',
      '--redirect-uri',
      'https://beta.example/cb',
      '--token-ttl',
      '3600',
    ])
    expect(client.client_id).toMatch(/^[0-9a-f]{24}$/)
    expect(client.client_secret.length).toBeGreaterThanOrEqual(43)
    expect(client).toMatchObject({name: 'Beta', grants: ['signon'], token_ttl: 3600, redirect_uris: ['https://beta.example/cb'], expired: false})
  })

  it('lists and shows clients without secrets; list flags take commas and repeats', () => {
    const clientId = registerAcme()
    const list = cliJson<Array<Record<string, unknown>>>(['list-clients', ...base])
    expect(list.map((c) => c.client_id)).toContain(clientId)
    expect(JSON.stringify(list)).not.toMatch(/secret"/)
    const shown = cliJson(['show-client', clientId, ...base])
    expect(shown.grants).toEqual(['signon', 'balance'])
    expect(shown.redirect_uris).toEqual(['https://acme.example/cb', 'http://127.0.0.1:9999/cb'])
    expect(shown).not.toHaveProperty('client_secret')
    const human = cli(['list-clients', ...base])
    expect(human.stdout).toMatch(/client_id\s+name\s+grants/)
  })

  it('refuses bad registrations with one line naming the field, and stores nothing', () => {
    const before = cliJson<unknown[]>(['list-clients', ...base]).length
    expectUserError(
      cli(['register-client', ...base, '--name', 'X', '--url', 'https://x.example', '--logo-url', 'https://x.example/l.png', '--redirect-uri', 'http://x.example/cb']),
      /redirect_uris\[0\]: must use https/,
    )
    expectUserError(
      cli(['register-client', ...base, '--name', 'X', '--url', 'https://x.example', '--logo-url', 'https://x.example/l.png']),
      /redirect_uris: a signon client needs at least one redirect URI/,
    )
    expectUserError(
      cli(['register-client', ...base, '--name', 'X', '--url', 'not a url', '--logo-url', 'https://x.example/l.png', '--redirect-uri', 'https://x.example/cb']),
      /url: must be an http\(s\) URL/,
    )
    expectUserError(
      cli(['register-client', ...base, '--name', 'X', '--url', 'https://x.example', '--logo-url', 'https://x.example/l.png', '--grant', 'partner']),
      /partner_url: is required/,
    )
    expect(cliJson<unknown[]>(['list-clients', ...base])).toHaveLength(before)
  })

  it('without a terminal, a missing value is an error naming the flag', () => {
    expectUserError(cli(['register-client', ...base, '--name', 'X']), /missing required flags --url, --logo-url \(a terminal would be asked for them\)/)
  })

  it('oclif parse errors follow the same rule', () => {
    expectUserError(cli(['register-client', ...base, '--bogus']), /Nonexistent flag: --bogus/)
    expectUserError(cli(['register-client', ...base, '--grant', 'root']), /--grant: Expected one of signon, balance, pulses, conversations, partner \(any case\), got "root"/)
    expectUserError(cli(['show-client', ...base]), /Missing 1 required arg/)
  })

  it('unknown ids are one-line errors', () => {
    const clientId = registerAcme()
    expectUserError(cli(['show-client', 'nope', ...base]), /no client with id "nope"/)
    expectUserError(cli(['show-member', '999', ...base]), /no member with user_id 999/)
    expectUserError(cli(['show-member', 'abc', ...base]), /member id must be a positive integer/)
    expectUserError(cli(['update-client', clientId, ...base]), /nothing to change/)
  })

  it('rotate-client-secret replaces the secret: the old one stops working', async () => {
    const registered = cliJson([
      'register-client',
      ...base,
      '--name',
      'Rot',
      '--url',
      'https://r.example',
      '--logo-url',
      'https://r.example/l.png',
      '--redirect-uri',
      'https://r.example/cb',
    ])
    const rotated = cliJson(['rotate-client-secret', registered.client_id, ...base])
    expect(rotated.client_id).toBe(registered.client_id)
    expect(rotated.client_secret).not.toBe(registered.client_secret)
    const store = await openCliStore(db)
    try {
      expect(await authenticateClient(store.db, registered.client_id, registered.client_secret)).toBeUndefined()
      expect(await authenticateClient(store.db, registered.client_id, rotated.client_secret)).toBeDefined()
    } finally {
      await store.close()
    }
  })

  it('add-member, list-members, show-member, update-member', () => {
    const member = cliJson([
      'add-member',
      ...base,
      '--email',
      'Jo@Clinic.Example',
      '--password',
      'long-enough-1',
      '--first-name',
      'Jo',
      '--last-name',
      'Park',
      '--country',
      'us',
      '--specialty',
      'Pediatrics',
      '--npi',
      '1234567893',
      '--me',
      '12345678901',
    ])
    expect(member).toMatchObject({email: 'jo@clinic.example', country_of_practice: 'US', npi: '1234567893', me: '12345678901', active: true})
    expect(member).not.toHaveProperty('password_hash')
    expect(cliJson<unknown[]>(['list-members', ...base]).length).toBeGreaterThanOrEqual(1)
    expect(cliJson(['show-member', String(member.user_id), ...base]).email).toBe('jo@clinic.example')
    expect(cliJson(['update-member', String(member.user_id), ...base, '--deactivate'])).toMatchObject({active: false, revoked_tokens: 0})
    expectUserError(
      cli(['add-member', ...base, '--email', 'jo@clinic.example', '--password', 'long-enough-1', '--first-name', 'J', '--last-name', 'P', '--country', 'US', '--specialty', 'X']),
      /email: a member with email jo@clinic.example already exists/,
    )
  })

  it('refuses an invalid NPI, short password or bad country, storing nothing', () => {
    const before = cliJson<unknown[]>(['list-members', ...base]).length
    const args = ['add-member', ...base, '--email', 'new@clinic.example', '--first-name', 'N', '--last-name', 'M', '--specialty', 'X']
    expectUserError(cli([...args, '--password', 'long-enough-1', '--country', 'US', '--npi', '1234567890']), /npi: must be a valid 10-digit NPI/)
    expectUserError(cli([...args, '--password', 'short', '--country', 'US']), /password: must be at least 8 characters/)
    expectUserError(cli([...args, '--password', 'long-enough-1', '--country', 'USA']), /country: must be an ISO 3166-1 alpha-2/)
    expect(cliJson<unknown[]>(['list-members', ...base])).toHaveLength(before)
  })
})
