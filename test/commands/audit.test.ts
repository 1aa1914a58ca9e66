import type {AuditView} from '../../src/operator/audit.js'
import {spawnSync} from 'node:child_process'
import {chmodSync, mkdirSync} from 'node:fs'
import {userInfo} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {acmeRegistration, cli, cliArgv, cliJson, memberRegistration, partnerRegistration, tempDir, expectUserError} from '../helpers/cli.js'
import {onPostgres, openCliStore} from '../helpers/store.js'

/*
 * The operators' audit trail, through the CLI: every kind of change (clients, members, balances,
 * keys, partner projects, the store) leaves one row naming the command, the OS user, the time,
 * the target and the fields set, and no secret the commands were given or printed appears
 * anywhere in the table; a command that fails leaves none; list-audit shows and filters it.
 */

type Row = AuditView

/** The store's whole audit table, oldest first, each column as stored. */
async function table(file: string): Promise<Record<string, unknown>[]> {
  const store = await openCliStore(file)
  try {
    return await store.db.selectFrom('operator_audit').selectAll().orderBy('id').execute()
  } finally {
    await store.close()
  }
}

/** The trail's rows, their fields decoded. */
async function trail(file: string): Promise<Row[]> {
  return (await table(file)).map((row) => ({...row, id: Number(row.id), changes: JSON.parse(String(row.changes))}) as Row)
}

/** Fails naming the secret when any of them is anywhere in the audit table, in any column of any row. */
async function expectNoSecretIn(file: string, secrets: string[]): Promise<void> {
  const text = JSON.stringify(await table(file))
  expect(secrets.length).toBeGreaterThan(0)
  for (const secret of secrets) {
    expect(secret.length, 'a secret too short to search for').toBeGreaterThan(5)
    expect(text.includes(secret), `the audit table holds the secret ${secret}`).toBe(false)
  }
}

describe('every operator write is in the audit trail, a secret only as "(changed)"', () => {
  const dir = tempDir('medpanel-audit-')
  const file = join(dir, 'audit.db')
  const db = ['--db', file]
  const user = userInfo().username
  let memberId: number
  let clientId: string

  const rowsFor = async (target: string | number) => (await trail(file)).filter((row) => row.target === String(target))

  it('clients: register-client, update-client and rotate-client-secret, each by client_id', async () => {
    const [partnerPassword, signingSecret, newPartnerPassword] = ['audit partner pass 1', 'audit-signing-secret-0123456789', 'audit partner pass 2']
    const registered = cliJson([
      ...partnerRegistration(db, 'https://partner.audit.example'),
      '--partner-username',
      'medpanel',
      '--partner-password',
      partnerPassword,
      '--signing-secret',
      signingSecret,
    ])
    cliJson(['update-client', registered.client_id, ...db, '--name', 'Partner Two', '--partner-password', newPartnerPassword])
    const rotated = cliJson(['rotate-client-secret', registered.client_id, ...db])
    const rows = await rowsFor(registered.client_id)
    expect(rows.map((row) => [row.command, row.target_kind, row.os_user])).toEqual([
      ['register-client', 'client', user],
      ['update-client', 'client', user],
      ['rotate-client-secret', 'client', user],
    ])
    expect(rows[0]!.changes).toMatchObject({
      name: 'P',
      grants: ['partner'],
      partner_url: 'https://partner.audit.example',
      partner_username: 'medpanel',
      signs_deliveries: true,
      client_secret: '(changed)',
      partner_password: '(changed)',
      signing_secret: '(changed)',
    })
    expect(rows[1]!.changes).toEqual({name: 'Partner Two', partner_password: '(changed)', revoked_tokens: 0})
    expect(rows[2]!.changes).toEqual({client_secret: '(changed)'})
    await expectNoSecretIn(file, [partnerPassword, signingSecret, newPartnerPassword, registered.client_secret, rotated.client_secret])
  })

  it('members: add-member and update-member, each by user_id', async () => {
    const [first, second] = ['audit member pass 1', 'audit member pass 2']
    const added = cliJson(memberRegistration(db, {email: 'ana.audit@clinic.example', password: first}))
    cliJson(['update-member', String(added.user_id), ...db, '--password', second])
    cliJson(['update-member', String(added.user_id), ...db, '--deactivate'])
    const rows = await rowsFor(added.user_id)
    expect(rows.map((row) => [row.command, row.target_kind, row.changes])).toEqual([
      [
        'add-member',
        'member',
        {
          email: 'ana.audit@clinic.example',
          first_name: 'Ana',
          last_name: 'Ruiz',
          country_of_practice: 'US',
          primary_specialty: 'Oncology',
          npi: null,
          me: null,
          active: true,
          password: '(changed)',
        },
      ],
      ['update-member', 'member', {password: '(changed)', revoked_tokens: 0}],
      ['update-member', 'member', {active: false, revoked_tokens: 0}],
    ])
    await expectNoSecretIn(file, [first, second])
  })

  it("balances: credit, debit, withdraw and update-transaction, each by the member's user_id; withdrawal details by name only", async () => {
    memberId = cliJson(memberRegistration(db, {email: 'bo.audit@clinic.example', password: 'audit member pass 3'})).user_id
    const credit = cliJson(['credit', 'user_id', String(memberId), ...db, '--amount', '250.75', '--type', 'HONORARIUM', '--survey-id', 'P-AUDIT'])
    const debit = cliJson(['debit', 'user_id', String(memberId), ...db, '--amount', '5.5']).id
    const withdrawal = cliJson(['withdraw', 'user_id', String(memberId), ...db, '--type', 'PAYPAL', '--amount', '40', ...paypal('bo.paypal.audit@clinic.example')])
    cliJson(['update-transaction', withdrawal.id, ...db, '--status', 'Completed'])
    const rows = (await rowsFor(memberId)).filter((row) => row.target_kind === 'account')
    expect(rows.map((row) => [row.command, row.changes])).toEqual([
      ['credit', {transaction_id: credit.id, type: 'HONORARIUM', amount: 250.75, status: 'Completed', survey_id: 'P-AUDIT', properties: {}}],
      ['debit', {transaction_id: debit, type: 'DEBIT_ADJUSTMENT', amount: -5.5, status: 'Completed', properties: {}}],
      ['withdraw', {transaction_id: withdrawal.id, type: 'PAYPAL', amount: 40, detail_fields: ['email', 'first_name', 'last_name']}],
      ['update-transaction', {transaction_id: withdrawal.id, type: 'WITHDRAWAL', amount: -40, status: 'Completed'}],
    ])
    expect(JSON.stringify(await table(file))).not.toContain('bo.paypal.audit@clinic.example')
  })

  it('keys: issue-api-key and update-api-key by the key id (even when given the key itself), issue-token by member; neither key nor token in the trail', async () => {
    clientId = cliJson([...acmeRegistration(db), '--grant', 'signon,conversations']).client_id
    const key = cliJson(['issue-api-key', clientId, ...db, '--data-calls', '50'])
    cliJson(['update-api-key', key.api_key, ...db, '--data-calls', '7'])
    const token = cliJson(['issue-token', ...db, '--member', String(memberId), '--client', clientId])
    const keyRows = await rowsFor(key.id)
    expect(keyRows.map((row) => [row.command, row.target_kind, row.changes])).toEqual([
      ['issue-api-key', 'api_key', {api_key: '(changed)', client_id: clientId, methods: ['summary', 'data'], data_calls: 50, renew_days: null, subscription_ends: null}],
      ['update-api-key', 'api_key', {data_calls: 7, client_id: clientId}],
    ])
    const tokenRow = (await rowsFor(memberId)).at(-1)!
    expect([tokenRow.command, tokenRow.target_kind, tokenRow.changes]).toEqual(['issue-token', 'member', expect.objectContaining({access_token: '(changed)', client_id: clientId})])
    await expectNoSecretIn(file, [key.api_key, token.access_token])
  })

  it("the store's keys: rotate-signing-key and rotate-secret-key", async () => {
    const signing = cliJson(['rotate-signing-key', ...db])
    const sealing = cliJson(['rotate-secret-key', ...db])
    const rows = (await trail(file)).slice(-2)
    expect(rows.map((row) => [row.command, row.target_kind, row.target])).toEqual([
      ['rotate-signing-key', 'signing_keys', 'RS256,ES256'],
      ['rotate-secret-key', 'store_key', sealing.key_id],
    ])
    expect(rows[0]!.changes).toMatchObject({immediately: false, new_kids: signing.current.map((key: {kid: string}) => key.kid)})
    expect(rows[1]!.changes).toMatchObject({store_key: '(changed)', retired_key_ids: sealing.retired_key_ids, resealed: sealing.resealed})
  })

  it('partner projects: push-project and close-project by project id, with the request id their deliveries carry', async () => {
    const pushed = cliJson(['push-project', ...db, '--project-id', 'P-AUDIT', '--name', 'Audit study', '--duration', '15', '--status', 'active', '--type', 'custom'])
    const closed = cliJson(['close-project', 'P-AUDIT', ...db])
    const rows = await rowsFor('P-AUDIT')
    expect(rows.map((row) => [row.command, row.target_kind, row.changes.request_id, row.changes.deliveries])).toEqual([
      ['push-project', 'project', pushed.request_id, 1],
      ['close-project', 'project', closed.request_id, 1],
    ])
    expect(rows[0]!.changes.project).toMatchObject({project_id: 'P-AUDIT', name: 'Audit study', status: 'active'})
  })

  it('a command that fails records nothing', async () => {
    const before = (await table(file)).length
    expectUserError(cli(['credit', 'user_id', '999', ...db, '--amount', '1', '--type', 'HONORARIUM']), /999/)
    expectUserError(cli(['update-client', 'no-such-client', ...db, '--name', 'X']), /no-such-client/)
    expectUserError(cli(['remove-client', clientId, ...db]), /remove-client --force/)
    expectUserError(cli(['withdraw', 'user_id', String(memberId), ...db, '--type', 'PAYPAL', '--amount', '100000', ...paypal('bo@clinic.example')]), /./)
    expectUserError(cli(['update-member', String(memberId), ...db, '--password', 'short']), /password/)
    expect((await table(file)).length).toBe(before)
  })
})

/** withdraw's PayPal detail flags. */
function paypal(email: string): string[] {
  return ['--detail', 'first_name=Bo', '--detail', 'last_name=Lee', '--detail', `email=${email}`]
}

describe('list-audit', () => {
  const dir = tempDir('medpanel-list-audit-')
  const file = join(dir, 'audit.db')
  const db = ['--db', file]
  const at = (instant: string) => ({MEDPANEL_NOW: instant})
  let memberId: string

  beforeAll(() => {
    cliJson(
      ['register-client', ...db, '--client-id', 'alpha', '--name', 'Alpha', '--url', 'https://alpha.example', '--logo-url', 'https://alpha.example/l.png', '--grant', 'balance'],
      at('2026-01-10T09:00:00Z'),
    )
    memberId = String(cliJson(memberRegistration(db, {email: 'list.audit@clinic.example', password: 'list audit pass 1'}), at('2026-01-31T23:59:59Z')).user_id)
    cliJson(['update-client', 'alpha', ...db, '--name', 'Alpha Two'], at('2026-02-01T00:00:00Z'))
    cliJson(['credit', 'user_id', memberId, ...db, '--amount', '10', '--type', 'INCENTIVE'], at('2026-02-15T12:00:00Z'))
  })

  const listed = (args: string[]) => cliJson<Row[]>(['list-audit', ...db, ...args]).map((row) => `${row.command} ${row.target_kind} ${row.target}`)

  it('--json lists every change newest first, with its id, time, OS user, command, target and fields', () => {
    const rows = cliJson<Row[]>(['list-audit', ...db])
    expect(rows.map((row) => [row.at, row.os_user, row.command, row.target_kind, row.target])).toEqual([
      ['2026-02-15T12:00:00.000Z', userInfo().username, 'credit', 'account', memberId],
      ['2026-02-01T00:00:00.000Z', userInfo().username, 'update-client', 'client', 'alpha'],
      ['2026-01-31T23:59:59.000Z', userInfo().username, 'add-member', 'member', memberId],
      ['2026-01-10T09:00:00.000Z', userInfo().username, 'register-client', 'client', 'alpha'],
    ])
    expect(rows.map((row) => row.id)).toEqual([4, 3, 2, 1])
    expect(rows[1]!.changes).toEqual({name: 'Alpha Two', revoked_tokens: 0})
    // Money as every --json output writes it: a JSON number from its exact text.
    expect(rows[0]!.changes).toMatchObject({type: 'INCENTIVE', amount: 10})
  })

  it('--target, --kind, --command and --user each narrow it', () => {
    expect(listed(['--target', 'alpha'])).toEqual(['update-client client alpha', 'register-client client alpha'])
    expect(listed(['--target', memberId, '--kind', 'member'])).toEqual([`add-member member ${memberId}`])
    expect(listed(['--kind', 'ACCOUNT'])).toEqual([`credit account ${memberId}`])
    expect(listed(['--command', 'update-client'])).toEqual(['update-client client alpha'])
    expect(listed(['--user', 'nobody-at-all'])).toEqual([])
    expect(listed(['--user', userInfo().username])).toHaveLength(4)
  })

  it('--since (from, inclusive) and --until (before, exclusive) bound it in time; a date alone is its midnight, UTC', () => {
    expect(listed(['--since', '2026-02-01'])).toEqual([`credit account ${memberId}`, 'update-client client alpha'])
    expect(listed(['--until', '2026-02-01'])).toEqual([`add-member member ${memberId}`, 'register-client client alpha'])
    expect(listed(['--since', '2026-01-31T23:59:59Z', '--until', '2026-02-15T12:00:00Z'])).toEqual(['update-client client alpha', `add-member member ${memberId}`])
    expect(listed(['--since', '2026-03-01'])).toEqual([])
  })

  it('--limit and --offset page it, and stderr says how many more there are', () => {
    const first = cli(['list-audit', ...db, '--limit', '2', '--json'])
    expect(first.status, first.stderr).toBe(0)
    expect((JSON.parse(first.stdout) as Row[]).map((row) => row.command)).toEqual(['credit', 'update-client'])
    expect(first.stderr).toBe('2 more changes not shown (4 in all); see the next with --offset 2, or raise --limit\n')
    expect(listed(['--limit', '2', '--offset', '2'])).toEqual([`add-member member ${memberId}`, 'register-client client alpha'])
  })

  it('prints a table without --json', () => {
    const result = cli(['list-audit', ...db, '--target', 'alpha'])
    expect(result.status, result.stderr).toBe(0)
    const lines = result.stdout.trim().split('\n')
    expect(lines[0]).toMatch(/^ID\s+AT\s+USER\s+COMMAND\s+TARGET\s+CHANGES$/)
    expect(lines).toHaveLength(4)
    expect(lines[2]).toMatch(/^ 3 +2026-02-01T00:00:00\.000Z +\S+ +update-client +client alpha +\{"name":"Alpha Two","revoked_tokens":0\}$/)
  })

  it('a --since or --until that is no date is one Error line and exit 1', () => {
    expectUserError(cli(['list-audit', ...db, '--since', 'yesterday']), /--since must be a date such as 2026-01-31 or an ISO 8601 instant, got "yesterday"/)
    expectUserError(cli(['list-audit', ...db, '--until', '2026-02-31T25:00:00Z']), /--until must be a date such as 2026-01-31 or an ISO 8601 instant/)
    expectUserError(cli(['list-audit', ...db, '--kind', 'planet']), /Expected one of client, member/)
  })
})

describe('the OS user in the trail', () => {
  // A uid with no passwd entry, as under systemd's DynamicUser or a container's numeric user: the
  // change is made and recorded, the user named by its uid. Only root can start such a process.
  it.runIf(process.getuid?.() === 0 && !onPostgres)('is uid:N for a user with no name, and the change is still made', async () => {
    const dir = join(tempDir('medpanel-nameless-'), 'shared')
    mkdirSync(dir, {mode: 0o777})
    chmodSync(dir, 0o777)
    chmodSync(join(dir, '..'), 0o755)
    const file = join(dir, 'nameless.db')
    const [command, ...argv] = cliArgv([
      'register-client',
      '--db',
      file,
      '--name',
      'N',
      '--url',
      'https://n.example',
      '--logo-url',
      'https://n.example/l.png',
      '--grant',
      'balance',
      '--json',
    ])
    const uid = 61234
    expect(spawnSync('getent', ['passwd', String(uid)]).status).not.toBe(0)
    const run = spawnSync(command, argv, {cwd: dir, uid, gid: uid, encoding: 'utf8', env: {...process.env, HOME: dir}})
    expect(run.status, run.stderr).toBe(0)
    const clientId = (JSON.parse(run.stdout) as {client_id: string}).client_id
    expect((await trail(file)).map((row) => [row.os_user, row.command, row.target])).toEqual([[`uid:${uid}`, 'register-client', clientId]])
  })
})

describe.skipIf(onPostgres)('a restore (a SQLite store file)', () => {
  it("is recorded in the restored store's own trail, after the trail the backup held", async () => {
    const dir = tempDir('medpanel-audit-restore-')
    const file = join(dir, 'live.db')
    cliJson(memberRegistration(['--db', file], {email: 'restore.audit@clinic.example', password: 'restore pass 1'}))
    cliJson(['backup', '--db', file, '--to', join(dir, 'backup.db')])
    cliJson(['update-member', '1', '--db', file, '--deactivate'])
    const restored = cliJson(['restore', '--db', file, '--from', join(dir, 'backup.db'), '--force'])
    const rows = await trail(file)
    expect(rows.map((row) => [row.command, row.target_kind])).toEqual([
      ['add-member', 'member'],
      ['restore', 'store'],
    ])
    expect(rows[1]!.changes).toEqual({restored_from: join(dir, 'backup.db'), bytes: restored.bytes, replaced_saved_as: restored.replaced_saved_as})
  })
})
