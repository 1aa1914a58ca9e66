import {spawnSync} from 'node:child_process'
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {verifyPassword} from '../../src/lib/hashing.js'
import {openStore} from '../../src/schema.js'
import {cli, cliArgv, cliJson, partnerRegistration, tempDir} from '../helpers/cli.js'
import {storeFlags} from '../helpers/store.js'
import {cliAsync} from '../interfaces/partner/helpers.js'
import {basicAuth} from '../helpers/http-basic.js'

/**
 * docs/operations.md has operators export MEDPANEL_MEMBER_PASSWORD and the partner variables to
 * keep secrets out of `ps`. A variable left exported must change a secret only when the command
 * line asks for it: update-* commands never take it on their own.
 */

/** The member and token rows a password change would touch, read from the store the CLI wrote. */
async function memberState(file: string, memberId: number) {
  const flags = storeFlags(file)
  const store = await openStore(flags[0] === '--db' ? {file: flags[1]!} : {url: flags[1]!})
  try {
    const member = await store.db.selectFrom('members').select(['password_hash', 'password_changed_at']).where('id', '=', memberId).executeTakeFirstOrThrow()
    const tokens = await store.db.selectFrom('access_tokens').select(['revoked_at']).where('member_id', '=', memberId).execute()
    return {...member, liveTokens: tokens.filter((t) => t.revoked_at === null).length}
  } finally {
    await store.close()
  }
}

/** The CLI with `input` on standard input. */
function cliWithStdin(args: string[], input: string, env: Record<string, string> = {}) {
  const [command, ...argv] = cliArgv(args)
  const run = spawnSync(command, argv, {input, encoding: 'utf8', env: {...process.env, ...env}, timeout: 60_000})
  return {status: run.status ?? -1, stdout: run.stdout, stderr: run.stderr}
}

describe('member passwords from the environment', () => {
  const file = join(tempDir(), 'members.db')
  const db = ['--db', file]
  const FIRST = 'first-password-1'
  const LEFT_OVER = {MEDPANEL_MEMBER_PASSWORD: 'left-over-password-2'}
  let memberId: number
  let clientId: string

  beforeAll(() => {
    // The documented way to add a member: the password from the variable.
    memberId = cliJson(['add-member', ...db, '--email', 'ana@clinic.example', '--first-name', 'Ana', '--last-name', 'Ruiz', '--country', 'US', '--specialty', 'Oncology'], {
      MEDPANEL_MEMBER_PASSWORD: FIRST,
    }).user_id
    clientId = cliJson([
      'register-client',
      ...db,
      '--name',
      'C',
      '--url',
      'https://c.example',
      '--logo-url',
      'https://c.example/l.png',
      '--redirect-uri',
      'https://c.example/cb',
    ]).client_id
  })

  it('add-member takes it from the variable', async () => {
    expect(await verifyPassword(FIRST, (await memberState(file, memberId)).password_hash)).toBe(true)
  })

  it('update-member --activate and --deactivate leave the password alone while the variable is still exported', async () => {
    cliJson(['issue-token', ...db, '--member', String(memberId), '--client', clientId])
    const before = await memberState(file, memberId)
    expect(before.liveTokens).toBe(1)

    const activated = cli(['update-member', String(memberId), ...db, '--activate', '--json'], LEFT_OVER)
    expect(activated.status, activated.stderr).toBe(0)
    expect(JSON.parse(activated.stdout).revoked_tokens).toBe(0)
    const afterActivate = await memberState(file, memberId)
    expect(afterActivate).toEqual(before)

    const deactivated = cli(['update-member', String(memberId), ...db, '--deactivate', '--json'], LEFT_OVER)
    expect(deactivated.status, deactivated.stderr).toBe(0)
    const afterDeactivate = await memberState(file, memberId)
    expect(afterDeactivate.password_hash).toBe(before.password_hash)
    expect(afterDeactivate.password_changed_at).toBe(before.password_changed_at)
    cliJson(['update-member', String(memberId), ...db, '--activate'], LEFT_OVER)
    expect(await verifyPassword(FIRST, (await memberState(file, memberId)).password_hash)).toBe(true)
  })

  it('changes the password only when asked: --password-from-env takes the variable, --password-stdin reads stdin', async () => {
    const before = await memberState(file, memberId)
    const changed = cli(['update-member', String(memberId), ...db, '--password-from-env', '--json'], LEFT_OVER)
    expect(changed.status, changed.stderr).toBe(0)
    const after = await memberState(file, memberId)
    expect(after.password_hash).not.toBe(before.password_hash)
    expect(after.password_changed_at >= before.password_changed_at).toBe(true)
    expect(await verifyPassword(LEFT_OVER.MEDPANEL_MEMBER_PASSWORD, after.password_hash)).toBe(true)

    // stdin wins over nothing: the exported variable is not a second source.
    const piped = cliWithStdin(['update-member', String(memberId), ...db, '--password-stdin', '--json'], 'piped-password-3\n', LEFT_OVER)
    expect(piped.status, piped.stderr).toBe(0)
    expect(await verifyPassword('piped-password-3', (await memberState(file, memberId)).password_hash)).toBe(true)
  })

  it('refuses two sources, and --password-from-env without the variable, with one Error line', async () => {
    const before = await memberState(file, memberId)
    const both = cli(['update-member', String(memberId), ...db, '--password', 'given-password-4', '--password-from-env'], LEFT_OVER)
    expect(both.status).toBe(1)
    expect(both.stderr).toBe('Error: give one of --password, --password-from-env, not several\n')
    const unset = cli(['update-member', String(memberId), ...db, '--password-from-env'], {MEDPANEL_MEMBER_PASSWORD: ''})
    expect(unset.status).toBe(1)
    expect(unset.stderr).toBe('Error: --password-from-env: $MEDPANEL_MEMBER_PASSWORD is not set or empty\n')
    const nothing = cli(['update-member', String(memberId), ...db], LEFT_OVER)
    expect(nothing.status).toBe(1)
    expect(nothing.stderr).toMatch(/^Error: nothing to change/)
    expect(await memberState(file, memberId)).toEqual(before)
  })

  it('add-member with the variable still exported reads --password-stdin instead of refusing two sources', async () => {
    const run = cliWithStdin(
      ['add-member', ...db, '--email', 'bo@clinic.example', '--password-stdin', '--first-name', 'Bo', '--last-name', 'Li', '--country', 'US', '--specialty', 'Oncology', '--json'],
      'stdin-password-5\n',
      LEFT_OVER,
    )
    expect(run.status, run.stderr).toBe(0)
    expect(await verifyPassword('stdin-password-5', (await memberState(file, JSON.parse(run.stdout).user_id)).password_hash)).toBe(true)
  })
})

describe('partner secrets from the environment', () => {
  let server: Server
  let partnerUrl: string
  const authorizations: string[] = []
  const signed: string[] = []

  beforeAll(async () => {
    server = createServer((req, res) => {
      authorizations.push(req.headers.authorization ?? '')
      signed.push(String(req.headers['x-medpanel-signature'] ?? ''))
      req.resume()
      req.on('end', () => res.end('{}'))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    partnerUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(() => server.close())

  // Asynchronous: the partner answering it lives in this process.
  const push = async (db: string[], projectId: string) =>
    (await cliAsync(['push-project', ...db, '--project-id', projectId, '--name', 'X', '--duration', '5', '--status', 'active', '--type', 'custom', '--wait', '--json'])).status

  it('update-client --name with MEDPANEL_PARTNER_PASSWORD exported keeps the partner password; --partner-password-from-env changes it', async () => {
    const db = ['--db', join(tempDir(), 'partner.db')]
    const client = cliJson([...partnerRegistration(db, partnerUrl), '--partner-username', 'acme'], {MEDPANEL_PARTNER_PASSWORD: 'registered-pw'})
    const renamed = cli(['update-client', client.client_id, ...db, '--name', 'Renamed', '--json'], {
      MEDPANEL_PARTNER_PASSWORD: 'x',
      MEDPANEL_SIGNING_SECRET: 'a-stale-signing-secret-000',
    })
    expect(renamed.status, renamed.stderr).toBe(0)
    authorizations.length = 0
    signed.length = 0
    expect(await push(db, 'P-ENV-1')).toBe(0)
    expect(authorizations).toEqual([basicAuth('acme', 'registered-pw')])
    // No signing secret was set, so none was taken from the variable either.
    expect(signed).toEqual([''])

    const changed = cli(['update-client', client.client_id, ...db, '--partner-password-from-env', '--json'], {MEDPANEL_PARTNER_PASSWORD: 'rotated-pw'})
    expect(changed.status, changed.stderr).toBe(0)
    authorizations.length = 0
    expect(await push(db, 'P-ENV-2')).toBe(0)
    expect(authorizations).toEqual([basicAuth('acme', 'rotated-pw')])
  })

  it('register-client --signing-secret-stdin reads the signing secret from standard input', async () => {
    const db = ['--db', join(tempDir(), 'signing.db')]
    const run = cliWithStdin(
      [...partnerRegistration(db, partnerUrl), '--partner-username', 'acme', '--partner-password', 'pw', '--signing-secret-stdin', '--json'],
      'signing-secret-from-stdin-0123\n',
    )
    expect(run.status, run.stderr).toBe(0)
    signed.length = 0
    expect(await push(db, 'P-SIGN')).toBe(0)
    expect(signed).toHaveLength(1)
    expect(signed[0]).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/)
    // Both -stdin flags at once cannot share one standard input.
    const both = cli(['register-client', ...db, '--name', 'P', '--partner-password-stdin', '--signing-secret-stdin'])
    expect(both.status).toBe(1)
    expect(both.stderr).toMatch(/^Error: .*--(signing-secret|partner-password)-stdin/)
    expect(both.stderr.trim().split('\n')).toHaveLength(1)
  })

  it('every -stdin flag a help text or doc names exists', async () => {
    const {COMMAND_LOADERS} = await import('../../commands/index.js')
    const {readFileSync, readdirSync} = await import('node:fs')
    const root = fileURLToPath(new URL('../..', import.meta.url))
    const named = new Set<string>()
    const texts = [
      ...readdirSync(join(root, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => readFileSync(join(root, 'docs', f), 'utf8')),
      ...readdirSync(join(root, 'commands'))
        .filter((f) => f.endsWith('.ts'))
        .map((f) => readFileSync(join(root, 'commands', f), 'utf8')),
    ]
    for (const text of texts) for (const match of text.matchAll(/--([a-z][a-z-]*-stdin)\b/g)) named.add(match[1]!)
    const flags = new Set<string>()
    for (const load of Object.values(COMMAND_LOADERS)) for (const name of Object.keys((await load()).flags ?? {})) flags.add(name)
    // Every secret flag that says "with the matching -stdin flag" has one.
    for (const load of Object.values(COMMAND_LOADERS)) {
      const command = await load()
      for (const [name, flag] of Object.entries(command.flags ?? {})) {
        if (/matching -stdin flag|with --[a-z-]+-stdin/.test(String((flag as {description?: string}).description))) {
          expect(command.flags?.[`${name}-stdin`], `${command.id ?? ''} --${name}-stdin`).toBeDefined()
        }
      }
    }
    expect([...named].filter((name) => !flags.has(name))).toEqual([])
  })
})
