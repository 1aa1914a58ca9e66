import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cli, cliJson, startCli, tempDir, type RunningCli} from '../helpers/cli.js'
import {npiFromBase} from '../../src/lib/npi.js'
import {NPI} from '../interfaces/partner/helpers.js'
import {basicAuth} from '../helpers/http-basic.js'
import {specialtyQuota} from '../helpers/partner-input.js'

/** End to end: the built CLI pushing to `partner-serve` on loopback. */
describe('interface B commands against partner-serve', () => {
  const dir = tempDir('medpanel-partner-')
  const db = ['--db', join(dir, 'medpanel.db')]
  let partner: RunningCli
  let clientId: string
  const auth = {authorization: basicAuth('acme', 's3cret')}
  const get = async (path: string, retried = false): Promise<any> => {
    let res: Response
    try {
      res = await fetch(partner.url + path, {headers: auth})
    } catch (error) {
      // A GET sent on a kept-alive connection just as it closes fails with "other side closed"
      // (CI saw this once); as HTTP clients do for a GET, send it again on a new connection,
      // once, and only to a partner that is still running.
      const code = (error as {cause?: {code?: string}}).cause?.code
      if (!retried && partner.child.exitCode === null && (code === 'UND_ERR_SOCKET' || code === 'ECONNRESET')) return get(path, true)
      // Say what became of the partner: a crash shows in its exit code and stderr.
      throw new Error(`GET ${path} failed (partner-serve exit code ${partner.child.exitCode}, stderr ends: ${partner.stderr().slice(-2000) || 'empty'})`, {cause: error})
    }
    return res.status === 200 ? res.json() : res.status
  }
  const file = (name: string, content: unknown) => {
    const path = join(dir, name)
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content))
    return path
  }
  const quota = specialtyQuota({matching_regions: ['CA', 'NY', 'PR'], url: 'https://survey.example/s/P1?npi=<npi>', closes_at: '2026-12-31T23:00:00Z'})

  /** The signing secret of the partner clients below, and how partner-serve is given it (whsec_ + base64 of its bytes). */
  const signingSecret = 'a-long-signing-secret'
  const whsec = 'whsec_YS1sb25nLXNpZ25pbmctc2VjcmV0'

  beforeAll(async () => {
    // The partner refuses every write not signed with the clients' secret: each push below that
    // arrives passed its Standard Webhooks and X-Medpanel-Signature checks.
    partner = await startCli(['partner-serve', '--port', '0', '--username', 'acme', '--password', 's3cret', '--db', join(dir, 'partner.db'), '--signing-secret', whsec])
    const client = cliJson([
      'register-client',
      ...db,
      '--name',
      'Acme',
      '--url',
      'https://acme.example',
      '--logo-url',
      'https://acme.example/l.png',
      '--grant',
      'partner',
      '--partner-url',
      partner.url,
      '--partner-username',
      'acme',
      '--partner-password',
      's3cret',
      '--signing-secret',
      signingSecret,
    ])
    clientId = client.client_id
    expect(client.standard_webhooks_secret).toBe(whsec)
  })
  afterAll(async () => {
    await partner?.stop()
  })

  // A whole project lifecycle with --wait, a step a test, in order: the partner ends equal to medpanel.
  it('push-project --wait delivers the project, and the partner holds what medpanel does', async () => {
    const project = cliJson([
      'push-project',
      ...db,
      '--file',
      file('project.json', {project_id: 'P1', name: 'Heart failure therapies', duration: 25, status: 'active', project_type: 'custom', custom_text: 'Thank you'}),
      '--wait',
    ])
    expect(project.wait).toMatchObject({delivered: 1, pending: 0, failed: 0})
    expect(await get('/v1/projects/P1')).toEqual(project.project)
  })

  it('push-quota --wait delivers a quota, its money as numbers at the partner', async () => {
    const q = cliJson(['push-quota', ...db, '--project-id', 'P1', '--file', file('quota.json', quota), '--wait'])
    expect(await get('/v1/projects/P1/quotas/Q1')).toEqual({...q.quota, cost_per_complete: 140, honoraria: 90.5})
  })

  it('push-members replaces the list in chunks, --append adds to it, remove-member takes one off; the partner lists who is left', async () => {
    const csv = ['npi,honoraria,url', ...NPI.slice(0, 5).map((n) => `${n},90.50,https://survey.example/s/P1?npi=${n}`)].join('\n')
    const replaced = cli(['push-members', ...db, '--project-id', 'P1', '--quota-id', 'Q1', '--file', file('members.csv', csv), '--chunk', '2', '--wait', '--json'])
    expect(replaced.status).toBe(0)
    expect(replaced.stderr).toBe('')
    expect(JSON.parse(replaced.stdout)).toMatchObject({mode: 'replace', members: 5, requests: 3, wait: {delivered: 3}})
    const appended = cliJson([
      'push-members',
      ...db,
      '--project-id',
      'P1',
      '--quota-id',
      'Q1',
      '--file',
      file('more.json', [{npi: NPI[9], honoraria: 100, url: 'https://survey.example/x'}]),
      '--append',
      '--wait',
    ])
    expect(appended).toMatchObject({mode: 'append', total: 6})
    cliJson(['remove-member', ...db, '--project-id', 'P1', '--quota-id', 'Q1', '--npi', NPI[1]!, '--wait'])
    const list = (await get('/v1/projects/P1/quotas/Q1/members')) as {npi: string; honoraria: number}[]
    expect(list.map((m) => m.npi)).toEqual([NPI[0], NPI[2], NPI[3], NPI[4], NPI[9]])
    expect(list[0]!.honoraria).toBe(90.5)
  })

  it('push-event --wait delivers a start at the time given, then a complete, in order', async () => {
    cliJson(['push-event', ...db, '--project-id', 'P1', '--npi', NPI[0]!, '--state', 'start', '--at', '2026-03-01T10:00:00Z', '--wait'])
    cliJson(['push-event', ...db, '--project-id', 'P1', '--quota-id', 'Q1', '--npi', NPI[0]!, '--state', 'complete', '--wait'])
    const events = (await get('/v1/projects/P1/events')) as {state: string; event_at: string}[]
    expect(events.map((e) => e.state)).toEqual(['start', 'complete'])
    expect(events[0]!.event_at).toBe('2026-03-01T10:00:00Z')
  })

  it('the complete that fills the quota closes it at the partner, and a start after it is quotafull', async () => {
    const filled = cliJson(['push-event', ...db, '--project-id', 'P1', '--quota-id', 'Q1', '--npi', NPI[2]!, '--state', 'complete', '--wait'])
    expect(filled.quota).toMatchObject({status: 'closed', closed_now: true})
    expect((await get('/v1/projects/P1/quotas/Q1')).status).toBe('closed')
    const late = cliJson(['push-event', ...db, '--project-id', 'P1', '--quota-id', 'Q1', '--npi', NPI[3]!, '--state', 'start', '--wait'])
    expect(late.event.state).toBe('quotafull')
    const events = (await get('/v1/projects/P1/events')) as {state: string; event_at: string}[]
    expect(events.map((e) => e.state)).toEqual(['start', 'complete', 'complete', 'quotafull'])
    expect(events[0]!.event_at).toBe('2026-03-01T10:00:00Z')
  })

  it('push-quota --status reopens the quota at the partner', async () => {
    cliJson(['push-quota', ...db, '--project-id', 'P1', '--quota-id', 'Q1', '--status', 'open', '--wait'])
    expect((await get('/v1/projects/P1/quotas/Q1')).status).toBe('open')
  })

  it('close-project --wait closes the project and its open quotas at the partner', async () => {
    const closed = cliJson(['close-project', 'P1', ...db, '--wait'])
    expect(closed.closed_quotas).toEqual(['Q1'])
    expect((await get('/v1/projects/P1')).status).toBe('closed')
    expect((await get('/v1/projects/P1/quotas/Q1')).status).toBe('closed')
  })

  it('list-deliveries shows every push of the lifecycle delivered to the partner, as JSON and as a table', () => {
    const deliveries = cliJson(['list-deliveries', '--limit', '100000', ...db, '--project-id', 'P1'])
    expect(deliveries.length).toBeGreaterThanOrEqual(14)
    expect(deliveries.every((d: {status: string; client_id: string}) => d.status === 'delivered' && d.client_id === clientId)).toBe(true)
    const table = cli(['list-deliveries', ...db, '--project-id', 'P1'])
    expect(table.stdout).toMatch(/STATUS\s+CLIENT\s+REQUEST\s+ATTEMPTS/)
    expect(table.stdout).toMatch(/delivered .* PUT \/v1\/projects\/P1\s/)
  })

  it('rejects bad input with one Error line naming the field and queues nothing', () => {
    const before = cliJson(['list-deliveries', '--limit', '100000', ...db]).length
    const bad = cli(['push-quota', ...db, '--project-id', 'P1', '--file', file('bad.json', {...quota, quota_id: 'Q2', matching_regions: ['NY', 'QC']}), '--json'])
    expect(bad.status).toBe(1)
    expect(bad.stderr).toMatch(/^Error: matching_regions\[1\]: must be a two-letter US state or territory postal abbreviation/)
    expect(bad.stderr.trim().split('\n')).toHaveLength(1)
    expect(bad.stdout).toBe('')
    const csv = cli(['push-members', ...db, '--project-id', 'P1', '--quota-id', 'Q1', '--file', file('bad.csv', 'npi,honoraria,url\n1234567893,abc,https://x.example\n')])
    expect(csv.status).toBe(1)
    expect(csv.stderr).toMatch(/^Error: .*bad\.csv row 1\.honoraria: must be a non-negative decimal/)
    const noQuota = cli(['push-event', ...db, '--project-id', 'P1', '--npi', NPI[0]!, '--state', 'screenout'])
    expect(noQuota.stderr).toMatch(/^Error: quota_id: is required for a screenout event/)
    expect(cliJson(['list-deliveries', '--limit', '100000', ...db]).length).toBe(before)
  })

  describe('marks deliveries failed for an expired partner, and retry-deliveries sends them once reinstated', () => {
    let other: {client_id: string}
    let failed: {id: string; path: string}[]

    it('push-quota --wait to an expired partner exits 1 naming the first delivery not made; both pushes are failed', () => {
      other = cliJson([
        'register-client',
        ...db,
        '--name',
        'Beta',
        '--url',
        'https://beta.example',
        '--logo-url',
        'https://beta.example/l.png',
        '--grant',
        'partner',
        '--partner-url',
        partner.url,
        '--partner-username',
        'acme',
        '--partner-password',
        's3cret',
        '--signing-secret',
        signingSecret,
      ])
      cliJson(['push-project', ...db, '--project-id', 'P3', '--name', 'Oncology', '--duration', '10', '--status', 'onhold', '--type', 'real-time', '--partner', other.client_id])
      cliJson(['update-client', other.client_id, ...db, '--expire'])
      const waited = cli(['push-quota', ...db, '--project-id', 'P3', '--file', file('q3.json', {...quota, quota_id: 'Q3'}), '--wait', '--json'])
      expect(waited.status).toBe(1)
      expect(waited.stderr).toMatch(/^Error: 1 delivery was not delivered \(first: PUT \/v1\/projects\/P3\/quotas\/Q3: partner client .* expired/m)
      expect(JSON.parse(waited.stdout).wait).toMatchObject({delivered: 0, failed: 1})
      failed = cliJson(['list-deliveries', ...db, '--status', 'failed'])
      expect(failed.map((d) => d.path)).toEqual(['/v1/projects/P3', '/v1/projects/P3/quotas/Q3'])
    })

    it('retry-deliveries needs --id or --failed, and requeues the failed ones, which go once the partner is reinstated', async () => {
      expect(cli(['retry-deliveries', ...db]).stderr).toMatch(/^Error: missing required flag --id or --failed/)
      cliJson(['update-client', other.client_id, ...db, '--unexpire'])
      const retried = cliJson(['retry-deliveries', ...db, '--id', failed[0]!.id, '--id', failed[1]!.id])
      expect(retried.requeued).toHaveLength(2)
      cliJson(['close-project', 'P3', ...db, '--wait'])
      expect(await get('/v1/projects/P3')).toMatchObject({status: 'closed', project_type: 'real-time'})
      expect(cliJson(['list-deliveries', ...db, '--status', 'pending'])).toEqual([])
    })
  })

  it('verify-partner passes against partner-serve, its checks of signatures included', () => {
    const report = cliJson(['verify-partner', '--url', partner.url, '--username', 'acme', '--password', 's3cret', '--signing-secret', signingSecret])
    expect(report).toMatchObject({ok: true, failed: 0})
    expect(report.checks.map((c: {name: string}) => c.name)).toContain('4xx for a push with webhook-timestamp 600 s old')
  })

  it('partner-serve refuses an unsigned write with 400 and keeps what it had, and takes only a whsec_ secret', async () => {
    const before = await get('/v1/projects/P1')
    const unsigned = await fetch(`${partner.url}/v1/projects/P1`, {
      method: 'PUT',
      headers: {...auth, 'content-type': 'application/json'},
      body: JSON.stringify({...before, name: 'Unsigned'}),
    })
    expect(unsigned.status).toBe(400)
    expect(await unsigned.json()).toEqual({message: 'webhook-signature: a signed push carries webhook-id, webhook-timestamp and webhook-signature'})
    expect(await get('/v1/projects/P1')).toEqual(before)
    const plain = cli(['partner-serve', '--port', '0', '--username', 'acme', '--password', 's3cret', '--db', join(dir, 'other.db'), '--signing-secret', signingSecret])
    expect(plain.status).toBe(1)
    expect(plain.stderr).toMatch(/^Error: signing-secret: expected whsec_ followed by base64/)
  })

  describe('serve delivers the outbox in the background and loses nothing when SIGKILLed mid-way', () => {
    const all = Array.from({length: 300}, (_, i) => {
      const npi = npiFromBase(String(200000000 + i))
      return {npi, honoraria: 10 + i, url: `https://survey.example/s?npi=${npi}`}
    })
    let queued: {status: string; attempts: number}[]
    /** The serve started after the SIGKILL, which the last tests stop. */
    let second: RunningCli | undefined

    beforeAll(() => {
      cliJson(['push-project', ...db, '--project-id', 'P2', '--name', 'Crash test', '--duration', '5', '--status', 'active', '--type', 'custom', '--partner', clientId])
      cliJson(['push-quota', ...db, '--project-id', 'P2', '--file', file('q2.json', {...quota, limit: 100})])
      // One member per request: hundreds of small deliveries, so the kill lands while many are pending.
      cliJson(['push-members', ...db, '--project-id', 'P2', '--quota-id', 'Q1', '--file', file('all.json', all), '--chunk', '1'])
    })
    afterAll(async () => {
      await second?.stop()
    })

    it('serve --no-worker leaves the outbox alone: after a clean exit it is exactly as it was', async () => {
      // --no-worker leaves the outbox alone. No waiting needed to see it: serve starts its worker
      // right after it reports ready, and on SIGTERM lets that worker finish the sends it has in
      // flight before exiting, so a serve that ran a worker would exit with part of P2's queue sent
      // (or at least tried). After a clean exit the outbox must be exactly as it was.
      queued = cliJson(['list-deliveries', '--limit', '100000', ...db, '--project-id', 'P2'])
      expect(queued).toHaveLength(all.length + 2)
      expect(queued.every((d) => d.status === 'pending' && d.attempts === 0)).toBe(true)
      const idle = await startCli(['serve', ...db, '--port', '0', '--no-worker'])
      // Answering a request means serve has run past its startup (worker and signal handlers set).
      expect((await fetch(`${idle.url}/healthz`)).status).toBe(200)
      expect(await idle.stop('SIGTERM')).toBe(0)
      const after = cliJson(['list-deliveries', '--limit', '100000', ...db, '--project-id', 'P2'])
      const touched = after.filter((d: {status: string; attempts: number}) => d.status !== 'pending' || d.attempts > 0)
      expect(
        touched.map((d: {method: string; path: string; status: string}) => `${d.method} ${d.path} ${d.status}`),
        'deliveries serve --no-worker touched',
      ).toEqual([])
      expect(after).toEqual(queued)
      expect(await get('/v1/projects/P2')).toBe(404)
      expect(idle.stderr()).not.toMatch(/delivery /)
    })

    it('a serve SIGKILLed while it delivers leaves the rest pending', async () => {
      const first = await startCli(['serve', ...db, '--port', '0'])
      for (let i = 0; i < 400; i++) {
        const members = await get('/v1/projects/P2/quotas/Q1/members')
        if (Array.isArray(members) && members.length > 0) break
        await new Promise((r) => setTimeout(r, 10))
      }
      first.child.kill('SIGKILL')
      await new Promise((r) => first.child.once('exit', r))
      const pendingAfterKill = cliJson(['list-deliveries', ...db, '--status', 'pending', '--project-id', 'P2'])
      expect(pendingAfterKill.length).toBeGreaterThan(0)
    })

    it('the next serve delivers the rest: the partner ends with every member, once each, in order', async () => {
      second = await startCli(['serve', ...db, '--port', '0'])
      // Waited for by a deadline, not a count of polls: a loaded machine drained the 300 in
      // more than the 15 s that 300 polls 50 ms apart gave it.
      let members: unknown = []
      for (const until = Date.now() + 90_000; Date.now() < until; ) {
        members = await get('/v1/projects/P2/quotas/Q1/members')
        if (Array.isArray(members) && members.length === all.length) break
        await new Promise((r) => setTimeout(r, 50))
      }
      expect(members).toEqual(all)
    })

    it('a push from another process while serve runs is picked up by its worker, which leaves nothing pending', async () => {
      cliJson(['push-event', ...db, '--project-id', 'P2', '--quota-id', 'Q1', '--npi', all[0]!.npi, '--state', 'screenout'])
      let events: unknown = []
      for (const until = Date.now() + 30_000; Date.now() < until; ) {
        events = await get('/v1/projects/P2/events')
        if (Array.isArray(events) && events.length) break
        await new Promise((r) => setTimeout(r, 50))
      }
      expect(events).toMatchObject([{npi: all[0]!.npi, state: 'screenout'}])
      // The partner keeps the event before it answers, and serve records the delivery only after
      // the answer: a list taken in between still shows it pending (seen once on a loaded machine).
      let pending: unknown[] = []
      for (const until = Date.now() + 30_000; Date.now() < until; ) {
        pending = cliJson(['list-deliveries', ...db, '--status', 'pending'])
        if (pending.length === 0) break
        await new Promise((r) => setTimeout(r, 100))
      }
      expect(pending).toEqual([])
    })

    it('that serve stops cleanly on SIGTERM, and logged the delivery of the event', async () => {
      const server = second!
      second = undefined
      expect(await server.stop('SIGTERM')).toBe(0)
      expect(server.stderr()).toMatch(/delivery .* POST \/v1\/projects\/P2\/events -> delivered \(200\)/)
    })
  })
})
