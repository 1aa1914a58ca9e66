import {existsSync} from 'node:fs'
import {join} from 'node:path'
import {beforeAll, beforeEach, describe, expect, it} from 'vitest'
import {authenticateClient} from '../../src/registry/service.js'
import {acmeRegistration, cli, cliJson, tempDir, expectUserError} from '../helpers/cli.js'
import {makeStoreFile, openCliStore} from '../helpers/store.js'

describe('client and member commands', () => {
  // Every test gets a new, empty store; the ones that need a registered client make it themselves.
  let db: string
  let base: string[]
  beforeEach(async () => {
    db = join(tempDir(), 'cmd.db')
    base = ['--db', db]
    await makeStoreFile(db)
  })

  /** Registers "Acme" (signon and balance, two redirect URIs) and returns its id. */
  const registerAcme = (): string => cliJson([...acmeRegistration(base, 'https://acme.example/cb,http://127.0.0.1:9999/cb'), '--grant', 'signon', '--grant', 'balance']).client_id

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

  it('refuses a redirect URI that is not https or not absolute, and a missing one, with one line naming it, and stores nothing', () => {
    const before = cliJson<unknown[]>(['list-clients', ...base]).length
    expectUserError(
      cli(['register-client', ...base, '--name', 'X', '--url', 'https://x.example', '--logo-url', 'https://x.example/l.png', '--redirect-uri', 'http://x.example/cb']),
      /redirect_uris\[0\]: must use https/,
    )
    expectUserError(
      cli(['register-client', ...base, '--name', 'X', '--url', 'https://x.example', '--logo-url', 'https://x.example/l.png', '--redirect-uri', '/cb']),
      /redirect_uris\[0\]: must be an absolute URL$/,
    )
    expectUserError(
      cli(['register-client', ...base, '--name', 'X', '--url', 'https://x.example', '--logo-url', 'https://x.example/l.png']),
      // Named with the other values a sign-on client cannot do without, before anything else is checked.
      /missing required flag --redirect-uri \(a terminal would be asked for it\)/,
    )
    expect(cliJson<unknown[]>(['list-clients', ...base])).toHaveLength(before)
  })

  it('refuses a redirect URI on port 0, at register-client and update-client, with one line, changing nothing', () => {
    const id = registerAcme()
    const before = cli(['show-client', id, ...base, '--json']).stdout
    const portZero = /redirect_uris\[0\]: must not name port 0 \(no app listens there; register a loopback URI without a port to match any\)$/
    expectUserError(
      cli(['register-client', ...base, '--name', 'X', '--url', 'https://x.example', '--logo-url', 'https://x.example/l.png', '--redirect-uri', 'http://127.0.0.1:0/cb']),
      portZero,
    )
    expectUserError(cli(['update-client', id, ...base, '--redirect-uri', 'http://127.0.0.1:0/cb']), portZero)
    expect(cliJson<unknown[]>(['list-clients', ...base])).toHaveLength(1)
    expect(cli(['show-client', id, ...base, '--json']).stdout).toBe(before)
  })

  it('refuses a site URL that is no URL, and a partner client without its partner URL, with one line naming the field, and stores nothing', () => {
    const before = cliJson<unknown[]>(['list-clients', ...base]).length
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
    expectUserError(cli(['register-client', ...base, '--name', 'X']), /missing required flags --url, --logo-url, --redirect-uri \(a terminal would be asked for them\)/)
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
    expectUserError(cli(['show-member', 'abc', ...base]), /^Error: "abc" names no member: give a user_id \(digits\), an e-mail \(name@domain\) or an NPI \(10 digits\)$/)
    expectUserError(cli(['update-client', clientId, ...base]), /nothing to change/)
  })

  it('a client registers without OpenID Connect settings: no post-logout redirect URIs, ID tokens signed RS256', () => {
    const clientId = registerAcme()
    expect(cliJson(['show-client', clientId, ...base])).toMatchObject({post_logout_redirect_uris: [], id_token_alg: 'RS256'})
  })

  const postLogoutUris = ['https://acme.example/bye', 'http://127.0.0.1:9999/bye', 'https://acme.example/logged-out?from=medpanel']
  /** Registers Acme with the three post-logout redirect URIs above (two flags, one with a comma) and ES256 ID tokens. */
  const registerWithLogoutUris = () =>
    cliJson([
      ...acmeRegistration(base),
      '--post-logout-redirect-uri',
      'https://acme.example/bye,http://127.0.0.1:9999/bye',
      '--post-logout-redirect-uri',
      'https://acme.example/logged-out?from=medpanel',
      '--id-token-alg',
      'es256',
    ])

  it('register-client sets post-logout redirect URIs and the ID-token algorithm; show-client and list-clients show them', () => {
    const registered = registerWithLogoutUris()
    expect(registered).toMatchObject({post_logout_redirect_uris: postLogoutUris, id_token_alg: 'ES256', redirect_uris: ['https://acme.example/cb']})
    const id = registered.client_id as string
    expect(cliJson(['show-client', id, ...base])).toMatchObject({post_logout_redirect_uris: postLogoutUris, id_token_alg: 'ES256'})
    expect(cliJson<Array<Record<string, unknown>>>(['list-clients', ...base]).find((c) => c.client_id === id)).toMatchObject({
      post_logout_redirect_uris: postLogoutUris,
      id_token_alg: 'ES256',
    })
    const shown = cli(['show-client', id, ...base])
    expect(shown.stdout).toMatch(/^post_logout_redirect_uris\s+\["https:\/\/acme\.example\/bye","http:\/\/127\.0\.0\.1:9999\/bye",/m)
    expect(shown.stdout).toMatch(/^id_token_alg\s+ES256$/m)
    const listed = cli(['list-clients', ...base]).stdout.split('\n')
    expect(listed[0]).toMatch(/\bid_token_alg\s+logout_uris\b/)
    expect(listed.find((line) => line.startsWith(id))).toMatch(/\sES256\s+3\s/)
  })

  it('update-client changes the post-logout redirect URIs and the ID-token algorithm, each flag only its own setting', () => {
    const registered = registerWithLogoutUris()
    expect(registered).toMatchObject({post_logout_redirect_uris: postLogoutUris, id_token_alg: 'ES256'})
    const id = registered.client_id as string
    const moved = cliJson(['update-client', id, ...base, '--post-logout-redirect-uri', 'https://acme.example/signed-out'])
    expect(moved).toMatchObject({post_logout_redirect_uris: ['https://acme.example/signed-out'], id_token_alg: 'ES256', redirect_uris: ['https://acme.example/cb']})
    const rs = cliJson(['update-client', id, ...base, '--id-token-alg', 'RS256'])
    expect(rs).toMatchObject({post_logout_redirect_uris: ['https://acme.example/signed-out'], id_token_alg: 'RS256'})
    expect(cliJson(['update-client', id, ...base, '--no-post-logout-redirect-uri'])).toMatchObject({post_logout_redirect_uris: [], id_token_alg: 'RS256'})
    expect(cliJson(['show-client', id, ...base])).toMatchObject({post_logout_redirect_uris: [], id_token_alg: 'RS256', redirect_uris: ['https://acme.example/cb']})
  })

  it('register-client --require-dpop and update-client --no-require-dpop / --require-pushed-authorization-requests set what show-client says', () => {
    const registered = cliJson([...acmeRegistration(base), '--require-dpop'])
    expect(registered).toMatchObject({dpop_bound_access_tokens: true, require_pushed_authorization_requests: false})
    const id = registered.client_id as string
    expect(cliJson(['update-client', id, ...base, '--no-require-dpop', '--require-pushed-authorization-requests'])).toMatchObject({
      dpop_bound_access_tokens: false,
      require_pushed_authorization_requests: true,
    })
    expect(cliJson(['show-client', id, ...base])).toMatchObject({dpop_bound_access_tokens: false, require_pushed_authorization_requests: true})
    expect(cli(['show-client', id, ...base]).stdout).toMatch(/^dpop_bound_access_tokens\s+false$/m)
  })

  it('register-client and update-client --access-token-format set what show-client says; a bad value is one Error line and changes nothing', () => {
    const registered = cliJson(acmeRegistration(base))
    expect(registered).toMatchObject({access_token_format: 'opaque'})
    const id = registered.client_id as string
    expect(cliJson(['update-client', id, ...base, '--access-token-format', 'jwt'])).toMatchObject({access_token_format: 'jwt'})
    expect(cliJson(['show-client', id, ...base])).toMatchObject({access_token_format: 'jwt'})
    expect(cli(['show-client', id, ...base]).stdout).toMatch(/^access_token_format\s+jwt$/m)
    const before = cli(['show-client', id, ...base, '--json']).stdout
    expectUserError(cli(['update-client', id, ...base, '--access-token-format', 'paseto']), /--access-token-format: Expected one of opaque, jwt \(any case\), got "paseto"/)
    expect(cli(['show-client', id, ...base, '--json']).stdout).toBe(before)
    expect(cliJson([...acmeRegistration(base), '--access-token-format', 'JWT'])).toMatchObject({access_token_format: 'jwt'})
    expectUserError(cli([...acmeRegistration(base), '--access-token-format', 'paseto']), /--access-token-format: Expected one of opaque, jwt/)
  })

  const acmeFlags = ['--name', 'Acme', '--url', 'https://acme.example', '--logo-url', 'https://acme.example/l.png', '--redirect-uri', 'https://acme.example/cb']
  /** register-client for Acme with `flags` added, as run (not expected to succeed). */
  const registerWith = (...flags: string[]) => cli(['register-client', ...base, ...acmeFlags, ...flags])

  it('register-client refuses post-logout redirect URIs a redirect URI could not be, and unknown algorithms, storing nothing', () => {
    expectUserError(
      registerWith('--post-logout-redirect-uri', 'http://acme.example/bye'),
      /post_logout_redirect_uris\[0\]: must use https \(http is allowed only for loopback hosts\)/,
    )
    expectUserError(
      registerWith('--post-logout-redirect-uri', 'https://acme.example/ok,https://acme.example/bye#top'),
      /post_logout_redirect_uris\[1\]: must not contain a fragment/,
    )
    expectUserError(registerWith('--post-logout-redirect-uri', '/bye'), /post_logout_redirect_uris\[0\]: must be an absolute URL/)
    expectUserError(registerWith('--id-token-alg', 'HS256'), /--id-token-alg: Expected one of RS256, ES256 \(any case\), got "HS256"/)
    expectUserError(registerWith('--id-token-alg', 'none'), /--id-token-alg: Expected one of RS256, ES256/)
    expect(cliJson<unknown[]>(['list-clients', ...base])).toEqual([])
  })

  it('update-client refuses a bad post-logout redirect URI, an unknown algorithm, or setting and removing the URIs at once, changing nothing', () => {
    const id = cliJson(['register-client', ...base, ...acmeFlags, '--post-logout-redirect-uri', 'https://acme.example/bye']).client_id as string
    const before = cli(['show-client', id, ...base, '--json']).stdout
    expectUserError(cli(['update-client', id, ...base, '--post-logout-redirect-uri', 'ftp://acme.example/bye']), /post_logout_redirect_uris\[0\]: must use https/)
    expectUserError(cli(['update-client', id, ...base, '--id-token-alg', 'PS256']), /--id-token-alg: Expected one of RS256, ES256/)
    expectUserError(
      cli(['update-client', id, ...base, '--post-logout-redirect-uri', 'https://acme.example/x', '--no-post-logout-redirect-uri']),
      /--(no-)?post-logout-redirect-uri=?.* cannot also be provided when using --(no-)?post-logout-redirect-uri/,
    )
    expect(cli(['show-client', id, ...base, '--json']).stdout).toBe(before)
  })

  it('register-client refuses a back-channel logout URI that is not https, has a fragment, is relative or link-local, and a session flag without one, storing nothing', () => {
    expectUserError(registerWith('--backchannel-logout-uri', 'http://acme.example/bcl'), /backchannel_logout_uri: must use https: .* \(http is allowed on loopback only\)/)
    expectUserError(registerWith('--backchannel-logout-uri', 'https://acme.example/bcl#top'), /backchannel_logout_uri: must not contain a fragment/)
    expectUserError(registerWith('--backchannel-logout-uri', '/bcl'), /backchannel_logout_uri: must be an https URL/)
    expectUserError(registerWith('--backchannel-logout-uri', 'https://169.254.169.254/bcl'), /backchannel_logout_uri: must not point at a link-local address/)
    expectUserError(registerWith('--backchannel-logout-session-required'), /--backchannel-logout-uri/)
    expect(cliJson<unknown[]>(['list-clients', ...base])).toEqual([])
  })

  it('registers, changes, shows and removes a back-channel logout URI; update-client refuses a bad one, changing nothing', () => {
    const registered = cliJson(['register-client', ...base, ...acmeFlags, '--backchannel-logout-uri', 'http://127.0.0.1:8080/bcl', '--backchannel-logout-session-required'])
    expect(registered).toMatchObject({backchannel_logout_uri: 'http://127.0.0.1:8080/bcl', backchannel_logout_session_required: true})
    const id = registered.client_id as string
    const before = cli(['show-client', id, ...base, '--json']).stdout
    expectUserError(cli(['update-client', id, ...base, '--backchannel-logout-uri', 'ftp://acme.example/bcl']), /backchannel_logout_uri: must be an https URL/)
    expect(cli(['show-client', id, ...base, '--json']).stdout).toBe(before)
    expect(cliJson(['update-client', id, ...base, '--backchannel-logout-uri', 'https://acme.example/bcl'])).toMatchObject({
      backchannel_logout_uri: 'https://acme.example/bcl',
      backchannel_logout_session_required: true,
    })
    expect(cliJson(['update-client', id, ...base, '--no-backchannel-logout-uri', '--no-backchannel-logout-session-required'])).toMatchObject({
      backchannel_logout_uri: null,
      backchannel_logout_session_required: false,
    })
    expect(cliJson<Record<string, unknown>[]>(['list-clients', ...base])[0]).toMatchObject({backchannel_logout_uri: null})
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
      expect(await authenticateClient(store, registered.client_id, registered.client_secret)).toBeUndefined()
      expect(await authenticateClient(store, registered.client_id, rotated.client_secret)).toBeDefined()
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
      cli([
        'add-member',
        ...base,
        '--email',
        'jo@clinic.example',
        '--password',
        'long-enough-1',
        '--first-name',
        'J',
        '--last-name',
        'P',
        '--country',
        'US',
        '--specialty',
        'Urology',
      ]),
      /email: a member with email jo@clinic.example already exists/,
    )
  })

  it('refuses an invalid NPI, short password or bad country, storing nothing', () => {
    const before = cliJson<unknown[]>(['list-members', ...base]).length
    const args = ['add-member', ...base, '--email', 'new@clinic.example', '--first-name', 'N', '--last-name', 'M', '--specialty', 'Pediatrics']
    expectUserError(cli([...args, '--password', 'long-enough-1', '--country', 'US', '--npi', '1234567890']), /npi: must be a valid 10-digit NPI/)
    expectUserError(cli([...args, '--password', 'short', '--country', 'US']), /password: must be at least 8 characters/)
    expectUserError(cli([...args, '--password', 'long-enough-1', '--country', 'USA']), /country: must be an ISO 3166-1 alpha-2/)
    expect(cliJson<unknown[]>(['list-members', ...base])).toHaveLength(before)
  })

  it('checks --specialty against the list the demo uses, in any case, and stores its spelling', () => {
    const args = ['add-member', ...base, '--password', 'long-enough-1', '--first-name', 'N', '--last-name', 'M', '--country', 'US']
    expectUserError(
      cli([...args, '--email', 'astro@clinic.example', '--specialty', 'Astrology']),
      /--specialty: "Astrology" is not a known specialty \(for example Cardiology, .*; \d+ in all, listed in add-member --help\)$/,
    )
    expectUserError(cli([...args, '--email', 'cardio@clinic.example', '--specialty', 'cardio']), /for example Cardiology;/)
    expect(cliJson<unknown[]>(['list-members', ...base])).toEqual([])
    const member = cliJson([...args, '--email', 'fm@clinic.example', '--specialty', '  family MEDICINE '])
    expect(member).toMatchObject({primary_specialty: 'Family Medicine'})
    expect(cli(['add-member', '--help']).stdout.replace(/\s+/g, ' ')).toContain('Family Medicine, Gastroenterology')
  })
})

describe('finding members and API keys', () => {
  // One store for these tests, which only read it: Ana Ruiz, Anabel Ortiz and Ben Anand, each with an NPI.
  const db = join(tempDir(), 'find.db')
  const base = ['--db', db]
  let ana: {user_id: number}
  let anabel: {user_id: number}
  const add = (email: string, first: string, last: string, npi: string) =>
    cliJson([
      'add-member',
      ...base,
      '--email',
      email,
      '--password',
      'long-enough-1',
      '--first-name',
      first,
      '--last-name',
      last,
      '--country',
      'US',
      '--specialty',
      'Oncology',
      '--npi',
      npi,
    ])
  /** The user_ids list-members answers with `args`. */
  const ids = (args: string[]) => cliJson<{user_id: number}[]>(['list-members', ...base, ...args]).map((m) => m.user_id)

  beforeAll(async () => {
    await makeStoreFile(db)
    ana = add('ana.ruiz@clinic.example', 'Ana', 'Ruiz', '1234567893')
    anabel = add('anabel@clinic.example', 'Anabel', 'Ortiz', '1987654328')
    add('ben@clinic.example', 'Ben', 'Anand', '1245319599')
  })

  it('show-member finds a member by e-mail in any case, or by NPI', () => {
    expect(cliJson(['show-member', ...base, '--email', 'ANA.RUIZ@clinic.example']).user_id).toBe(ana.user_id)
    expect(cliJson(['show-member', ...base, '--npi', '1987654328']).user_id).toBe(anabel.user_id)
  })

  it('show-member refuses an unknown e-mail, no way of naming the member, and two ways at once, in one Error line', () => {
    expectUserError(cli(['show-member', ...base, '--email', 'nobody@clinic.example']), /no member with e-mail "nobody@clinic.example"/)
    expectUserError(cli(['show-member', ...base]), /name the member one way: a user_id, e-mail or NPI as the argument, --email or --npi/)
    expectUserError(cli(['show-member', String(ana.user_id), ...base, '--npi', '1234567893']), /name the member one way/)
  })

  it('show-member takes an e-mail or an NPI as its argument too, as its summary says', () => {
    expect(cliJson(['show-member', 'ANA.RUIZ@clinic.example', ...base]).user_id).toBe(ana.user_id)
    expect(cliJson(['show-member', '1987654328', ...base]).user_id).toBe(anabel.user_id)
    expect(cliJson(['show-member', ` ${anabel.user_id} `, ...base]).email).toBe('anabel@clinic.example')
    // Without --json, the same record as by user_id.
    expect(cli(['show-member', 'anabel@clinic.example', ...base]).stdout).toBe(cli(['show-member', String(anabel.user_id), ...base]).stdout)
  })

  it('show-member refuses, in one Error line, an argument that is no user_id, e-mail or NPI, before it opens any store', () => {
    const missing = join(tempDir(), 'never-made.db')
    for (const given of ['jane', '12ab', '123456789x', 'ana ruiz']) {
      expectUserError(cli(['show-member', given, '--db', missing]), new RegExp(`^Error: "${given}" names no member: give a user_id \\(digits\\), an e-mail`))
    }
    expect(existsSync(missing)).toBe(false)
    expectUserError(cli(['show-member', 'nobody@clinic.example', ...base]), /^Error: no member with e-mail "nobody@clinic.example"$/)
    // Ten digits with a valid check digit that are nobody's NPI, nor anybody's user_id.
    expectUserError(cli(['show-member', '1245319581', ...base]), /^Error: no member with NPI 1245319581 \(nor with that user_id\)$/)
    // Ten digits whose check digit is wrong are no NPI: read as a user_id, which nobody has.
    expectUserError(cli(['show-member', '1245319582', ...base]), /^Error: no member with user_id 1245319582$/)
  })

  it('list-members --email matches in any case, --npi exactly, and an unknown e-mail lists nobody', () => {
    expect(ids(['--email', 'Anabel@Clinic.Example'])).toEqual([anabel.user_id])
    expect(ids(['--npi', '1234567893'])).toEqual([ana.user_id])
    expect(cliJson<unknown>(['list-members', ...base, '--email', 'nobody@clinic.example'])).toEqual([])
  })

  it('list-members --name matches the beginning of a first, last or full name in any case, wildcards as letters', () => {
    // First name, last name ("Anand") or full name: any case, the beginning only.
    expect(ids(['--name', 'ana'])).toHaveLength(3)
    expect(ids(['--name', 'ANA R'])).toEqual([ana.user_id])
    expect(ids(['--name', 'nab'])).toEqual([])
    // Wildcards are letters here: nobody's name begins with "%".
    expect(ids(['--name', '%'])).toEqual([])
  })

  it('show-api-key shows a key by its id or by the key itself, never the key, and refuses an unknown one', () => {
    const client = cliJson([...acmeRegistration(base, 'https://acme.example/cb,http://127.0.0.1:9999/cb'), '--grant', 'signon', '--grant', 'balance']).client_id
    cli(['update-client', client, ...base, '--grant', 'signon,balance,conversations'])
    const key = cliJson(['issue-api-key', client, ...base, '--methods', 'summary'])
    const byId = cliJson(['show-api-key', key.id, ...base])
    expect(byId).toMatchObject({id: key.id, client_id: client, status: 'active', data_calls_used: 0})
    expect(byId).not.toHaveProperty('api_key')
    expect(cliJson(['show-api-key', key.api_key, ...base]).id).toBe(key.id)
    expectUserError(cli(['show-api-key', 'key_nothing', ...base]), /API key/)
  })
})
