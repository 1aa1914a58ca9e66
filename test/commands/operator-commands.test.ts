import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {createApp} from '../../src/app.js'
import {ManualClock} from '../../src/lib/clock.js'
import {cli, cliJson, tempDir, expectUserError} from '../helpers/cli.js'
import {makeStoreFile, openCliStore} from '../helpers/store.js'
import {query} from '../interfaces/conversations/helpers.js'
import {specialtyQuotaFile} from '../helpers/partner-input.js'

const register = (db: string[], name: string, extra: string[]) =>
  cliJson(['register-client', ...db, '--name', name, '--url', 'https://x.example', '--logo-url', 'https://x.example/l.png', ...extra]).client_id as string

describe('API keys, transactions, projects and removing clients from the command line', () => {
  const dir = tempDir('medpanel-operator-')
  const db = ['--db', join(dir, 'demo.db')]
  let apiKey: string
  let keyId: string
  let insight: string

  beforeAll(() => {
    cliJson(['demo', ...db])
    insight = register(db, 'Insight Co', ['--grant', 'conversations'])
    const key = cliJson(['issue-api-key', insight, ...db, '--data-calls', '7', '--renew-days', '30'])
    apiKey = key.api_key
    keyId = key.id
  })

  it('list-api-keys shows each key with its client, allowance, use and status, never the key itself', () => {
    const all = cliJson<Record<string, unknown>[]>(['list-api-keys', ...db])
    expect(all.map((k) => k.client_id).sort()).toEqual(['demo-client', insight].sort())
    const mine = cliJson<Record<string, unknown>[]>(['list-api-keys', ...db, '--client', insight])
    expect(mine).toEqual([expect.objectContaining({id: keyId, client_id: insight, data_call_allowance: 7, data_calls_used: 0, renew_days: 30, status: 'active', revoked: false})])
    expect(JSON.stringify(all)).not.toContain(apiKey)
    expect(Object.keys(mine[0]!)).not.toContain('api_key')
    const table = cli(['list-api-keys', ...db, '--client', insight])
    expect(table.status).toBe(0)
    expect(table.stdout).toMatch(/^ID\s+CLIENT\s+STATUS\s+ALLOWANCE\s+USED/)
    expect(table.stdout).toContain(keyId)
    expect(table.stdout).not.toContain(apiKey)
    expectUserError(cli(['list-api-keys', ...db, '--client', 'nobody']), /no client with id "nobody"/)
  })

  it("show-client lists the client's API keys as well, as JSON and as a table", () => {
    const shown = cliJson(['show-client', insight, ...db])
    expect(shown.api_keys).toEqual([expect.objectContaining({id: keyId, status: 'active'})])
    expect(cli(['show-client', insight, ...db]).stdout).toMatch(new RegExp(`API keys:\\n[^]*${keyId}`))
  })

  /** What interface E answers a summary asked with the key the beforeAll issued: 200, or 401 once revoked. */
  const summaryStatus = async () => {
    const store = await openCliStore(db[1]!)
    try {
      const app = createApp({store, clock: new ManualClock(), log: () => undefined})
      const res = await app.request(`/conversations/summary?${query(['heart'], '2024-01-01T00:00:00Z', '2024-02-01T00:00:00Z')}`, {
        headers: {Accept: 'application/vnd.service-v1+json', 'X-Service-Conversation-API-Key': apiKey},
      })
      return res.status
    } finally {
      await store.close()
    }
  }

  it('revoke-api-key revokes a key, which interface E then refuses', async () => {
    expect(await summaryStatus()).toBe(200)
    const first = cli(['revoke-api-key', keyId, ...db])
    expect(first.status, first.stderr).toBe(0)
    expect(first.stdout).toContain(`Revoked API key ${keyId} of ${insight}`)
    expect(await summaryStatus()).toBe(401)
  })

  it('revoke-api-key run again, by the key or its id, says it already was; list-api-keys shows it revoked', () => {
    const again = cliJson(['revoke-api-key', apiKey, ...db])
    expect(again).toMatchObject({id: keyId, already_revoked: true})
    expect(cli(['revoke-api-key', keyId, ...db]).stdout).toContain('was already revoked')
    expect(cliJson(['list-api-keys', ...db, '--client', insight])[0]).toMatchObject({status: 'revoked', revoked: true})
  })

  it('revoke-api-key refuses an unknown key and a missing one with one Error line', () => {
    expectUserError(cli(['revoke-api-key', 'key_00000000000000000000', ...db]), /no API key matches/)
    expectUserError(cli(['revoke-api-key', ...db]), /Missing 1 required arg/)
  })

  it('show-transaction shows one transaction as interface C does, with its member', () => {
    const [first] = cliJson<{id: string; amount: number; type: string}[]>(['list-transactions', 'user_id', '1', ...db])
    const tx = cliJson(['show-transaction', first!.id, ...db])
    expect(tx).toMatchObject({id: first!.id, amount: first!.amount, type: first!.type, member: {user_id: 1, email: 'demo.doctor@medpanel.test'}})
    const human = cli(['show-transaction', first!.id.toUpperCase(), ...db])
    expect(human.status).toBe(0)
    expect(human.stdout).toMatch(/member\s+1 Dana Whitfield <demo\.doctor@medpanel\.test>/)
    expectUserError(cli(['show-transaction', 'not-a-uuid', ...db]), /a transaction id is a UUID/)
    expectUserError(cli(['show-transaction', '00000000-0000-4000-8000-000000000000', ...db]), /no transaction with id/)
  })

  describe('list-projects and show-project show quotas and the outbox per project', () => {
    // A partner nobody listens for: pushes stay pending in the outbox, which is what is counted.
    // These tests run in order on what this beforeAll pushed; the last removes the partner.
    let partner: string
    beforeAll(() => {
      partner = register(db, 'Panel Partner', ['--grant', 'partner', '--partner-url', 'http://127.0.0.1:9/', '--partner-username', 'u', '--partner-password', 'pw'])
      for (const id of ['P-1', 'P-2']) {
        cliJson(['push-project', ...db, '--project-id', id, '--name', `Study ${id}`, '--duration', '10', '--status', 'active', '--type', 'custom', '--partner', partner])
      }
      const quotaFile = specialtyQuotaFile(dir, {quota_id: 'Q-1', limit: 5, url: 'https://survey.example/s/P-1?npi=<npi>'})
      cliJson(['push-quota', ...db, '--project-id', 'P-1', '--file', quotaFile])
    })

    it("list-projects shows each project's status, partners, quotas and pending deliveries, as JSON and as a table", () => {
      const projects = cliJson<Record<string, unknown>[]>(['list-projects', ...db])
      expect(projects).toEqual([
        expect.objectContaining({project_id: 'P-1', name: 'Study P-1', status: 'active', partners: [partner], quotas: 1, pending: 2, delivered: 0, last_delivered_at: null}),
        expect.objectContaining({project_id: 'P-2', quotas: 0, pending: 1}),
      ])
      expect(cli(['list-projects', ...db]).stdout).toMatch(/^PROJECT ID\s+STATUS\s+QUOTAS\s+PARTNERS\s+PENDING\s+FAILED\s+DELIVERED/)
    })

    it('list-projects --limit shows one page and says on stderr how many more and how to see them', () => {
      const page = cli(['list-projects', ...db, '--limit', '1', '--json'])
      expect(JSON.parse(page.stdout)).toHaveLength(1)
      expect(page.stderr).toBe('1 more projects not shown (2 in all); see the next with --offset 1, or raise --limit\n')
    })

    it("show-project shows the project's quotas with their completes and its last delivery, as JSON and as a table", () => {
      const one = cliJson(['show-project', 'P-1', ...db])
      expect(one).toMatchObject({project_id: 'P-1', partners: [partner], quotas: [{quota_id: 'Q-1', status: 'open', limit: 5, completes: 0, members: 0}], deliveries: {pending: 2}})
      expect(one.last_delivery).toMatchObject({client_id: partner, status: 'pending'})
      expect(cli(['show-project', 'P-1', ...db]).stdout).toMatch(/QUOTA ID\s+STATUS\s+LIMIT\s+COMPLETES\s+MEMBERS\n[-\s]+\nQ-1\s+open\s+5\s+0\s+0/)
    })

    it('show-project refuses an unknown project, and list-projects an unknown --status, with one Error line', () => {
      expectUserError(cli(['show-project', 'P-404', ...db]), /no project "P-404"/)
      expectUserError(cli(['list-projects', ...db, '--status', 'sideways']), /Expected one of onhold, active, closed/)
    })

    it('remove-client refuses a partner with pending deliveries and projects listing it; --force removes both, and the projects list it no more', () => {
      expectUserError(cli(['remove-client', partner, ...db]), /still has 3 undelivered partner deliveries, 2 partner projects listing it; remove-client --force/)
      const removed = cliJson(['remove-client', partner, ...db, '--force'])
      expect(removed.removed).toMatchObject({undelivered_deliveries: 3, partner_projects: 2})
      expect(cliJson(['list-projects', ...db])[0]).toMatchObject({project_id: 'P-1', partners: [], pending: 0})
    })
  })

  it('remove-client refuses while tokens, keys or pulses depend on it, and names them', () => {
    const refused = cli(['remove-client', 'demo-client', ...db])
    expectUserError(refused, /^Error: client demo-client still has .*1 API key, 7 pulses; remove-client --force removes them with it$/)
    expect(cliJson(['list-pulses', ...db, '--client', 'demo-client', '--limit', '1000'])).toHaveLength(7)
  })

  it('remove-client --force removes the client with its keys, pulses, respondents, tokens and codes; then it is unknown', async () => {
    const gone = cliJson(['remove-client', 'demo-client', ...db, '--force'])
    expect(gone).toMatchObject({client_id: 'demo-client', removed: {api_keys: 1, pulses: 7}})
    const store = await openCliStore(db[1]!)
    try {
      for (const table of ['pulses', 'conversation_api_keys', 'access_tokens', 'authorization_codes'] as const) {
        const row = await store.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .where('client_id', '=', 'demo-client')
          .executeTakeFirstOrThrow()
        expect(Number(row.n), table).toBe(0)
      }
      // Respondents went with their pulses (the schema cascades on both stores).
      const orphans = await store.db
        .selectFrom('pulse_respondents')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where((eb) => eb.not(eb.exists(eb.selectFrom('pulses').select('id').whereRef('pulses.id', '=', 'pulse_respondents.pulse_id'))))
        .executeTakeFirstOrThrow()
      expect(Number(orphans.n)).toBe(0)
    } finally {
      await store.close()
    }
    expectUserError(cli(['remove-client', 'demo-client', ...db]), /no client with id "demo-client"/)
  })

  it('remove-client removes a client nothing depends on without --force', () => {
    const bare = register(db, 'Bare', ['--grant', 'balance'])
    expect(cli(['remove-client', bare, ...db]).stdout).toBe(`Removed client ${bare}.\n`)
  })
})

describe('paging the list commands', () => {
  const dir = tempDir('medpanel-paging-')
  const file = join(dir, 'many.db')
  const db = ['--db', file]
  const MEMBERS = 300

  beforeAll(async () => {
    await makeStoreFile(file)
    const store = await openCliStore(file)
    try {
      const rows = Array.from({length: MEMBERS}, (_, i) => {
        const at = new Date(Date.UTC(2026, 0, 1) + i * 86_400_000).toISOString()
        return {
          email: `m${i}@clinic.example`,
          password_hash: 'x',
          first_name: 'M',
          last_name: String(i),
          country: 'US',
          specialty: 'Cardiology',
          active: i % 3 === 0 ? 0 : 1,
          password_changed_at: at,
          created_at: at,
          updated_at: at,
        }
      })
      for (let i = 0; i < rows.length; i += 100)
        await store.db
          .insertInto('members')
          .values(rows.slice(i, i + 100))
          .execute()
    } finally {
      await store.close()
    }
  })

  it('list-members shows 100 by default and says on stderr how many more and how to see them', () => {
    const page = cli(['list-members', ...db, '--json'])
    expect(page.status).toBe(0)
    const rows = JSON.parse(page.stdout) as {user_id: number; email: string}[]
    expect(rows).toHaveLength(100)
    expect(page.stderr).toBe(`200 more members not shown (${MEMBERS} in all); see the next with --offset 100, or raise --limit\n`)
    const table = cli(['list-members', ...db, '--limit', '5', '--offset', '295'])
    expect(table.stderr).toBe('')
    expect(table.stdout.trim().split('\n')).toHaveLength(2 + 5)
    expect(table.stdout).toContain('m299@clinic.example')
  })

  it('pages with --offset without gaps or repeats', () => {
    const seen: string[] = []
    for (let offset = 0; offset < MEMBERS; offset += 70) {
      seen.push(...cliJson<{email: string}[]>(['list-members', ...db, '--limit', '70', '--offset', String(offset)]).map((m) => m.email))
    }
    expect(seen).toHaveLength(MEMBERS)
    expect(new Set(seen).size).toBe(MEMBERS)
  })

  it('filters by --status and --since, saying how many more match or that none do', () => {
    const inactive = cli(['list-members', ...db, '--status', 'INACTIVE', '--limit', '10', '--json'])
    expect(JSON.parse(inactive.stdout).every((m: {active: boolean}) => !m.active)).toBe(true)
    expect(inactive.stderr).toMatch(/^90 more members not shown \(100 in all\)/)
    // Members were made a day apart from 2026-01-01: the last ten from day 290 on.
    const since = cliJson<{email: string}[]>(['list-members', ...db, '--since', '2026-10-18'])
    expect(since.map((m) => m.email)).toEqual(Array.from({length: 10}, (_, i) => `m${290 + i}@clinic.example`))
    expect(cli(['list-members', ...db, '--since', '2030-01-01']).stdout).toBe('No members match.\n')
  })

  it('refuses a bad --limit, --offset or --since with one Error line', () => {
    expectUserError(cli(['list-members', ...db, '--limit', '0']), /--limit/)
    expectUserError(cli(['list-members', ...db, '--offset', '-1']), /--offset/)
    expectUserError(cli(['list-members', ...db, '--since', 'last tuesday']), /--since must be a date/)
    expectUserError(cli(['list-transactions', 'user_id', '1', ...db, '--limit', 'many']), /--limit/)
  })

  // One test per list command: each answers an empty page past what it holds.
  for (const args of [['list-clients'], ['list-deliveries'], ['list-pulses'], ['list-api-keys'], ['list-projects'], ['list-transactions', 'user_id', '1']]) {
    it(`${args.join(' ')} takes --limit and --offset`, () => {
      const result = cli([...args, ...db, '--limit', '3', '--offset', '1', '--json'])
      expect(result.status, `${args[0]}: ${result.stderr}`).toBe(0)
      expect(JSON.parse(result.stdout), args[0]).toEqual([])
    })
  }
})
