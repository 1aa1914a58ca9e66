import {Decimal} from 'decimal.js'
import {spawn} from 'node:child_process'
import {writeFileSync} from 'node:fs'
import {createServer, type IncomingMessage, type ServerResponse} from 'node:http'
import type {AddressInfo} from 'node:net'
import {join} from 'node:path'
import {expect} from 'vitest'
import {npiFromBase} from '../../src/lib/npi.js'
import {openStore} from '../../src/schema.js'
import {cliArgv, cliCwd} from './cli.js'
import {clientBasic} from './http-basic.js'

/*
 * Shared by the fault tests (test/e2e/faults-*.test.ts): a partner that records what it gets, a
 * withdrawal caller that tells an answer from no answer, and the ledger checks.
 */

export interface ReceivedDelivery {
  id: string
  method: string
  path: string
  body: string
}

export interface RecordingPartner {
  url: string
  /** Every request, in the order its body finished arriving (a resend appears again). */
  log: ReceivedDelivery[]
  /** Requests whose answer is being held (see hold). */
  held: () => number
  /** Delivery ids of requests whose sender went away before the answer was sent (a killed sender's in-flight sends). */
  dropped: string[]
  /** From now on, answer nothing until release(): the senders' requests stay in flight. */
  hold: () => void
  release: () => void
  close: () => Promise<void>
}

/**
 * A partner that accepts every push with 200 after `delayMs` (so sends are in flight long enough
 * for a kill to land in one) and records it. Which delivery it is comes from X-Medpanel-Delivery.
 */
export async function recordingPartner(delayMs = 5): Promise<RecordingPartner> {
  const log: ReceivedDelivery[] = []
  const dropped: string[] = []
  let holding = false
  let waiting: ServerResponse[] = []
  const answer = (res: ServerResponse) => {
    if (res.destroyed) return
    setTimeout(() => res.writeHead(200, {'content-type': 'application/json'}).end('{}'), delayMs)
  }
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => (body += chunk))
    req.on('end', () => {
      const id = String(req.headers['x-medpanel-delivery'] ?? '')
      log.push({id, method: req.method ?? '', path: req.url ?? '', body})
      res.once('close', () => {
        if (!res.writableFinished) dropped.push(id)
      })
      if (holding) waiting.push(res)
      else answer(res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const {port} = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    log,
    held: () => waiting.filter((res) => !res.destroyed).length,
    dropped,
    hold: () => {
      holding = true
    },
    release: () => {
      holding = false
      const list = waiting
      waiting = []
      for (const res of list) answer(res)
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** What one HTTP call came to: an answer, or none (the connection failed, or it hung past the limit). */
export type Outcome = {status: number; headers: Headers; body: string} | {status: 'no answer'; error: string} | {status: 'hung'}

/**
 * One request with a hard limit: a request that gets no answer within `limitMs` is reported as
 * hung (a fault must never leave a caller waiting on a request the service forgot).
 */
export async function call(url: string, init: RequestInit, limitMs = 30_000): Promise<Outcome> {
  try {
    const res = await fetch(url, {...init, signal: AbortSignal.timeout(limitMs)})
    return {status: res.status, headers: res.headers, body: await res.text()}
  } catch (error) {
    if ((error as Error).name === 'TimeoutError') return {status: 'hung'}
    const cause = (error as {cause?: unknown}).cause
    return {status: 'no answer', error: String(cause ?? error)}
  }
}

export interface WithdrawalAttempt {
  key: string
  member: number
  amount: string
  outcome: Outcome
}

/** POST a withdrawal with an Idempotency-Key. */
export function withdraw(base: string, auth: string, member: number, amount: string, key: string): Promise<Outcome> {
  return call(`${base}/balance/user_id/${member}/withdrawals`, {
    method: 'POST',
    headers: {authorization: auth, 'content-type': 'application/json', 'idempotency-key': key},
    body: JSON.stringify({type: 'GIFT_CARD', amount, member_details: {first_name: 'Sam', last_name: 'Lee', email: 'sam@clinic.example'}}),
  })
}

export interface Tx {
  id: string
  amount: number
  type: string
  status: string
  current_balance: number
}

/**
 * Every member's ledger, checked: the summary's available funds equal credits minus debits, and
 * the running balance is never negative. Returns how often each transaction id appears.
 */
export async function checkLedgers(base: string, auth: string, members: number[]): Promise<{seen: Map<string, number>; withdrawals: number}> {
  const seen = new Map<string, number>()
  let withdrawals = 0
  for (const member of members) {
    const summary = await call(`${base}/balance/user_id/${member}/summary`, {headers: {authorization: auth}})
    expect(summary.status, `summary of ${member}`).toBe(200)
    const available = new Decimal(/"available_funds":(-?[\d.]+)/.exec((summary as {body: string}).body)![1]!)
    const list = await call(`${base}/balance/user_id/${member}/transactions`, {headers: {authorization: auth}})
    expect(list.status, `transactions of ${member}`).toBe(200)
    let balance = new Decimal(0)
    for (const tx of JSON.parse((list as {body: string}).body) as Tx[]) {
      seen.set(tx.id, (seen.get(tx.id) ?? 0) + 1)
      if (tx.type === 'WITHDRAWAL') withdrawals++
      const amount = new Decimal(tx.amount)
      if (amount.isPositive() && tx.status === 'Completed') balance = balance.plus(amount)
      if (amount.isNegative() && ['Processing', 'OnHold', 'Completed'].includes(tx.status)) balance = balance.plus(amount)
      expect(tx.current_balance, `running balance of ${member}`).toBeGreaterThanOrEqual(0)
    }
    expect(available.toString(), `member ${member}: available = credits - debits`).toBe(balance.toString())
    expect(available.isNegative()).toBe(false)
  }
  return {seen, withdrawals}
}

/** Polls `check` every `everyMs` until it returns true or `limitMs` passes; returns whether it did. */
export async function waitFor(check: () => boolean | Promise<boolean>, limitMs: number, everyMs = 50): Promise<boolean> {
  const until = Date.now() + limitMs
  for (;;) {
    if (await check()) return true
    if (Date.now() >= until) return false
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}

/** Runs the CLI with --json without blocking this process (so commands can run side by side). */
export function cliJsonAsync<T = any>(args: string[]): Promise<T> {
  return new Promise((resolve, reject) => {
    const [command, ...argv] = cliArgv([...args, '--json'])
    const child = spawn(command, argv, {cwd: cliCwd(), stdio: ['ignore', 'pipe', 'pipe']})
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.once('close', (code) => (code === 0 ? resolve(JSON.parse(stdout) as T) : reject(new Error(`medpanel ${args.join(' ')} exited ${code}: ${stderr}`))))
  })
}

export interface Service {
  clientId: string
  /** HTTP Basic with the client's credentials. */
  auth: string
  /** user_ids of members credited 100,000 each. */
  members: number[]
  /** An interface E API key of the client. */
  apiKey: string
}

/**
 * A client with the balance, pulses, conversations and partner grants, pushing to `partnerUrl`,
 * and `count` members with funds, made through the CLI on `store`.
 */
export async function seedService(store: string[], partnerUrl: string, count: number): Promise<Service> {
  const client = await cliJsonAsync<{client_id: string; client_secret: string}>([
    'register-client',
    ...store,
    '--name',
    'Faults Co',
    '--url',
    'https://faults.example',
    '--logo-url',
    'https://faults.example/l.png',
    '--grant',
    'balance,pulses,conversations,partner',
    '--partner-url',
    partnerUrl,
    '--partner-username',
    'p',
    '--partner-password',
    'p-password',
  ])
  const [apiKey, ...members] = await Promise.all([
    cliJsonAsync<{api_key: string}>(['issue-api-key', client.client_id, ...store, '--data-calls', '100000']).then((key) => key.api_key),
    ...Array.from({length: count}, async (_, i) => {
      const member = await cliJsonAsync<{user_id: number}>([
        'add-member',
        ...store,
        '--email',
        `faults${i}@clinic.example`,
        '--password',
        'faults password 1',
        '--first-name',
        'Sam',
        '--last-name',
        'Lee',
        '--country',
        'US',
        '--specialty',
        'Cardiology',
      ])
      await cliJsonAsync(['credit', 'user_id', String(member.user_id), ...store, '--amount', '100000', '--type', 'HONORARIUM'])
      return member.user_id
    }),
  ])
  return {
    clientId: client.client_id,
    auth: clientBasic(client),
    members: members as number[],
    apiKey: apiKey as string,
  }
}

/**
 * Queues a project's lifecycle through the CLI: the project, its quota, and a list of `members`
 * members pushed one per delivery (many small deliveries, so a fault lands mid-stream).
 */
export async function queueStudy(store: string[], dir: string, project: string, members: number, npiBase: number): Promise<void> {
  await cliJsonAsync(['push-project', ...store, '--project-id', project, '--name', `Study ${project}`, '--duration', '5', '--status', 'active', '--type', 'custom'])
  const quota = join(dir, `${project}-quota.json`)
  writeFileSync(quota, JSON.stringify({quota_id: 'Q1', status: 'open', limit: 1000, incidence_rate: 0.5, closes_at: '2027-01-01T00:00:00Z'}))
  await cliJsonAsync(['push-quota', ...store, '--project-id', project, '--file', quota])
  const list = Array.from({length: members}, (_, i) => {
    const npi = npiFromBase(String(npiBase + i))
    return {npi, honoraria: 10 + i, url: `https://survey.example/${project}?npi=${npi}`}
  })
  const file = join(dir, `${project}-members.json`)
  writeFileSync(file, JSON.stringify(list))
  await cliJsonAsync(['push-members', ...store, '--project-id', project, '--quota-id', 'Q1', '--file', file, '--chunk', '1'])
}

export interface DeliveryCheck {
  /** Delivered rows, by seq. */
  delivered: {id: string; seq: number; project_id: string}[]
  /** Arrivals beyond the first of a delivery id. */
  resent: number
}

/**
 * Waits (up to `limitMs`) until the outbox of the database at `url` is settled (every row delivered
 * or superseded), then checks what `partner` got: every delivered row arrived, nothing else did,
 * each project's rows first arrived in the order they were queued, and a row that arrived twice
 * arrived as the same request (same delivery id, path and body).
 */
export async function checkDeliveries(url: string, partner: RecordingPartner, limitMs: number): Promise<DeliveryCheck> {
  const store = await openStore({url})
  try {
    const rows = () => store.db.selectFrom('partner_deliveries').select(['id', 'seq', 'status', 'project_id']).orderBy('seq').execute()
    const settled = await waitFor(async () => (await rows()).every((row) => row.status === 'delivered' || row.status === 'superseded'), limitMs, 100)
    const all = await rows()
    expect(settled, `not settled in ${limitMs} ms: ${JSON.stringify(all.filter((row) => row.status !== 'delivered' && row.status !== 'superseded'))}`).toBe(true)
    const delivered = all.filter((row) => row.status === 'delivered')
    const projectOf = new Map(delivered.map((row) => [row.id, row.project_id]))
    const firstArrivals = [...new Set(partner.log.map((entry) => entry.id))]
    expect(
      firstArrivals.filter((id) => !projectOf.has(id)),
      'arrivals that are no delivered row',
    ).toEqual([])
    expect(firstArrivals.length, 'every delivered row arrived').toBe(delivered.length)
    for (const project of new Set(projectOf.values())) {
      expect(
        firstArrivals.filter((id) => projectOf.get(id) === project),
        `project ${project} in order`,
      ).toEqual(delivered.filter((row) => row.project_id === project).map((row) => row.id))
    }
    for (const [i, entry] of partner.log.entries()) {
      const first = partner.log.findIndex((other) => other.id === entry.id)
      if (first !== i) expect(entry, 'a resend is the same request').toEqual(partner.log[first])
    }
    return {delivered, resent: partner.log.length - firstArrivals.length}
  } finally {
    await store.close()
  }
}
