import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {openReceiverStore} from '../../src/interfaces/partner/receiver/store.js'
import {npiFromBase} from '../../src/lib/npi.js'
import {cliJson, type RunningCli, startCli, tempDir} from '../helpers/cli.js'
import {consentInBrowser} from '../helpers/consent.js'
import {freshDatabaseUrl, onPostgres} from '../helpers/store.js'
import {clientBasic} from '../helpers/http-basic.js'

/*
 * Scaling out: three `serve` processes on one PostgreSQL database, as behind a load balancer.
 * Everything shared lives in the database, so each guarantee must hold across processes.
 */
describe.skipIf(!onPostgres)('three serve processes on one PostgreSQL database', () => {
  const dir = tempDir('medpanel-scale-')
  let url: string
  let store: string[]
  let servers: RunningCli[] = []
  let partner: RunningCli
  let client: {client_id: string; client_secret: string}
  const member = {email: 'scale.doctor@clinic.example', password: 'a long enough password'}
  const quotaFile = (project: string) => {
    const file = join(dir, `${project}-quota.json`)
    writeFileSync(
      file,
      JSON.stringify({
        quota_id: 'Q1',
        status: 'open',
        limit: 50,
        incidence_rate: 0.35,
        type: 'specialty',
        matching_specialties: ['Oncology'],
        matching_regions: ['CA'],
        cost_per_complete: '140.00',
        honoraria: 90.5,
        url: `https://survey.example/s/${project}?npi=<npi>`,
        closes_at: '2026-12-31T23:00:00Z',
      }),
    )
    return file
  }
  /** A project, its quota and a list of `members` members pushed one per request (many small deliveries). */
  const pushStudy = (project: string, members: number, npiBase: number) => {
    cliJson([
      'push-project',
      ...store,
      '--project-id',
      project,
      '--name',
      `Study ${project}`,
      '--duration',
      '5',
      '--status',
      'active',
      '--type',
      'custom',
      '--partner',
      client.client_id,
    ])
    cliJson(['push-quota', ...store, '--project-id', project, '--file', quotaFile(project)])
    const list = Array.from({length: members}, (_, i) => {
      const npi = npiFromBase(String(npiBase + i))
      return {npi, honoraria: 10 + i, url: `https://survey.example/${project}?npi=${npi}`}
    })
    const file = join(dir, `${project}-members.json`)
    writeFileSync(file, JSON.stringify(list))
    cliJson(['push-members', ...store, '--project-id', project, '--quota-id', 'Q1', '--file', file, '--chunk', '1'])
  }
  const basic = () => clientBasic(client)

  beforeAll(async () => {
    url = await freshDatabaseUrl()
    store = ['--database-url', url]
    partner = await startCli(['partner-serve', '--port', '0', '--username', 'acme', '--password', 's3cret', '--db', join(dir, 'partner.db')])
    client = cliJson([
      'register-client',
      ...store,
      '--name',
      'Scale Co',
      '--url',
      'https://scale.example',
      '--logo-url',
      'https://scale.example/logo.png',
      '--redirect-uri',
      'http://127.0.0.1/callback',
      '--grant',
      'signon,balance,partner',
      '--partner-url',
      partner.url,
      '--partner-username',
      'acme',
      '--partner-password',
      's3cret',
    ])
    cliJson([
      'add-member',
      ...store,
      '--email',
      member.email,
      '--password',
      member.password,
      '--first-name',
      'Sam',
      '--last-name',
      'Lee',
      '--country',
      'US',
      '--specialty',
      'Oncology',
      '--npi',
      '1234567893',
    ])
    servers = await Promise.all([0, 1, 2].map(() => startCli(['serve', ...store, '--port', '0'])))
  })

  afterAll(async () => {
    await Promise.all([...servers, partner].map((running) => running?.stop('SIGTERM')))
  })

  it('200 concurrent withdrawals spread over the three never overdraw and leave the exact balance', async () => {
    cliJson(['credit', 'user_id', '1', '--amount', '100.05', '--type', 'INCENTIVE', ...store])
    const body = JSON.stringify({type: 'CHARITY', amount: 0.75, member_details: {first_name: 'Sam', last_name: 'Lee', email: 'sam@example.com'}})
    const statuses = await Promise.all(
      Array.from({length: 200}, async (_, i) => {
        const res = await fetch(`${servers[i % 3]!.url}/balance/user_id/1/withdrawals`, {
          method: 'POST',
          headers: {authorization: basic(), 'content-type': 'application/json'},
          body,
        })
        await res.arrayBuffer()
        return res.status
      }),
    )
    // 100.05 / 0.75 = 133 withdrawals, leaving 0.30; every other request is refused, none fails.
    expect(statuses.filter((s) => s === 201)).toHaveLength(133)
    expect(statuses.filter((s) => s === 422)).toHaveLength(67)
    for (const server of servers) {
      const summary = await fetch(`${server.url}/balance/user_id/1/summary`, {headers: {authorization: basic()}})
      expect(await summary.text()).toContain('"available_funds":0.3,')
    }
    const ledger = cliJson<{type: string; current_balance: number}[]>(['list-transactions', '--limit', '100000', 'user_id', '1', ...store])
    expect(ledger.filter((t) => t.type === 'WITHDRAWAL')).toHaveLength(133)
    expect(Math.min(...ledger.map((t) => t.current_balance))).toBeGreaterThanOrEqual(0)
  })

  it('a code redeemed in two processes at once yields one token, and the replay revokes it', async () => {
    const authorize = new URL(`${servers[0]!.url}/oauth/authorize`)
    authorize.search = new URLSearchParams({client_id: client.client_id, redirect_uri: 'http://127.0.0.1/callback', response_type: 'code', state: 's'}).toString()
    const back = await consentInBrowser(servers[0]!.url, authorize, member)
    const code = back.searchParams.get('code')!
    const redeem = (server: RunningCli) =>
      fetch(`${server.url}/oauth/token`, {
        method: 'POST',
        headers: {authorization: basic(), 'content-type': 'application/x-www-form-urlencoded'},
        body: new URLSearchParams({grant_type: 'authorization_code', code, redirect_uri: 'http://127.0.0.1/callback'}),
      }).then(async (res) => ({status: res.status, body: (await res.json()) as {access_token?: string; error?: string}}))
    const answers = await Promise.all([redeem(servers[1]!), redeem(servers[2]!)])
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400])
    expect(answers.find((a) => a.status === 400)!.body.error).toBe('invalid_grant')
    const token = answers.find((a) => a.status === 200)!.body.access_token!
    for (const server of servers) {
      const info = await fetch(`${server.url}/oauth/token/info`, {headers: {authorization: `Bearer ${token}`}})
      expect(info.status).toBe(401)
    }
  })

  it('a refresh token replayed on one process ends its whole family on the others', async () => {
    const authorize = new URL(`${servers[0]!.url}/oauth/authorize`)
    authorize.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: 'http://127.0.0.1/callback',
      response_type: 'code',
      scope: 'openid profile offline_access',
      state: 's',
    }).toString()
    const code = (await consentInBrowser(servers[0]!.url, authorize, member)).searchParams.get('code')!
    type Tokens = {access_token: string; refresh_token: string; error?: string}
    const token = async (server: RunningCli, fields: Record<string, string>) => {
      const res = await fetch(`${server.url}/oauth/token`, {
        method: 'POST',
        headers: {authorization: basic(), 'content-type': 'application/x-www-form-urlencoded'},
        body: new URLSearchParams(fields),
      })
      return {status: res.status, body: (await res.json()) as Tokens}
    }
    const first = await token(servers[0]!, {grant_type: 'authorization_code', code, redirect_uri: 'http://127.0.0.1/callback'})
    expect(first.status).toBe(200)
    const second = await token(servers[1]!, {grant_type: 'refresh_token', refresh_token: first.body.refresh_token})
    expect(second.status).toBe(200)
    // The spent one, presented again on the third process: the family ends everywhere.
    const replay = await token(servers[2]!, {grant_type: 'refresh_token', refresh_token: first.body.refresh_token})
    expect(replay.body.error).toBe('invalid_grant')
    const after = await token(servers[0]!, {grant_type: 'refresh_token', refresh_token: second.body.refresh_token})
    expect(after.body.error).toBe('invalid_grant')
    for (const server of servers) {
      for (const access of [first.body.access_token, second.body.access_token]) {
        const info = await fetch(`${server.url}/oauth/token/info`, {headers: {authorization: `Bearer ${access}`}})
        expect(info.status).toBe(401)
      }
    }
  })

  /** The partner's log of the projects named, in arrival order (read straight from its file: no CLI start per poll). */
  const arrivals = async (projects: readonly string[]) => {
    const received = await openReceiverStore(join(dir, 'partner.db'))
    try {
      const log = await received.db.selectFrom('received_requests').selectAll().orderBy('seq').execute()
      return log.filter((r) => projects.some((p) => r.path.startsWith(`/v1/projects/${p}/`) || r.path === `/v1/projects/${p}`))
    } finally {
      await received.close()
    }
  }
  /** Waits, by polling the partner's log, until every id queued has arrived at least once. */
  const untilArrived = async (projects: readonly string[], ids: readonly string[]) => {
    for (let i = 0; i < 1200; i++) {
      const seen = new Set((await arrivals(projects)).map((r) => r.delivery_id))
      if (ids.every((id) => seen.has(id))) return
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  /** The outbox's rows for `ids` not yet marked delivered, waiting a little for the last answers to be recorded. */
  const undelivered = async (ids: readonly string[]) => {
    let pending: {id: string; status: string}[] = []
    for (let i = 0; i < 20; i++) {
      pending = cliJson<{id: string; status: string}[]>(['list-deliveries', '--limit', '100000', ...store]).filter((d) => ids.includes(d.id) && d.status !== 'delivered')
      if (pending.length === 0) break
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
    return pending
  }

  describe("pushes queued while all three run reach partner-serve once each, in each project's order", () => {
    const projects = ['PA', 'PB', 'PC', 'PD']
    let queued: {id: string; project_id: string}[] = []

    it.each(projects)('project %s, its quota and twenty one-member chunks are queued', (project) => {
      pushStudy(project, 20, 300000000)
      const mine = cliJson<{id: string; project_id: string}[]>(['list-deliveries', '--project-id', project, '--limit', '100000', ...store])
      // The project, its quota, and twenty one-member chunks of the list.
      expect(mine.length).toBe(22)
    })

    it('every delivery arrives and is marked delivered', async () => {
      queued = cliJson<{id: string; project_id: string}[]>(['list-deliveries', '--limit', '100000', ...store]).filter((d) => projects.includes(d.project_id))
      expect(queued.length).toBe(projects.length * 22)
      const ids = queued.map((d) => d.id)
      await untilArrived(projects, ids)
      expect(await undelivered(ids)).toEqual([])
    })

    it('each arrived exactly once, and per project in the order queued', async () => {
      const log = await arrivals(projects)
      // Exactly once: no process was killed, so no delivery id may arrive twice.
      const ids = log.map((r) => r.delivery_id)
      expect(new Set(ids).size).toBe(ids.length)
      expect([...ids].sort()).toEqual(queued.map((d) => d.id).sort())
      for (const project of projects) {
        const expected = queued.filter((d) => d.project_id === project).map((d) => d.id)
        const seen = log.filter((r) => r.path.startsWith(`/v1/projects/${project}`)).map((r) => r.delivery_id)
        expect(seen, project).toEqual(expected)
      }
    })
  })

  describe('a process SIGKILLed mid-send leaves its deliveries to the others: each arrives, at most resent with its own id, in order', () => {
    const projects = ['KA', 'KB', 'KC']
    let queued: {id: string; project_id: string}[] = []

    it.each(projects)('project %s and sixty one-member chunks are queued', (project) => {
      pushStudy(project, 60, 400000000)
    })

    it('the third process is killed while sends are under way', async () => {
      queued = cliJson<{id: string; project_id: string}[]>(['list-deliveries', '--limit', '100000', ...store]).filter((d) => projects.includes(d.project_id))
      expect(queued.length).toBe(projects.length * 62)
      for (let i = 0; i < 400 && (await arrivals(projects)).length < 10; i++) await new Promise((resolve) => setTimeout(resolve, 10))
      const victim = servers[2]!
      victim.child.kill('SIGKILL')
      await new Promise((resolve) => victim.child.once('exit', resolve))
      servers = servers.slice(0, 2)
    })

    it('the other two deliver everything', async () => {
      const ids = queued.map((d) => d.id)
      await untilArrived(projects, ids)
      expect(await undelivered(ids)).toEqual([])
    })

    it('at most the sends in flight arrived twice, and first arrivals are in order per project', async () => {
      const log = await arrivals(projects)
      const ids = log.map((r) => r.delivery_id)
      expect([...new Set(ids)].sort()).toEqual(queued.map((d) => d.id).sort())
      // A resend is the send that was in flight when the process died: at most one per project.
      expect(ids.length - new Set(ids).size).toBeLessThanOrEqual(projects.length)
      for (const project of projects) {
        const firstArrivals = [...new Set(log.filter((r) => r.path.startsWith(`/v1/projects/${project}`)).map((r) => r.delivery_id))]
        expect(firstArrivals, project).toEqual(queued.filter((d) => d.project_id === project).map((d) => d.id))
      }
    })
  })
})
