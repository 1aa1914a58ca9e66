import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cliJson, startCli, tempDir, type RunningCli} from '../../helpers/cli.js'
import {overBudget, query} from './helpers.js'
import {seededStoreFile} from '../../helpers/seeded-store.js'
import {onPostgres} from '../../helpers/store.js'

/*
 * Interface E's searches run on search threads, so the heaviest summary a key may ask for holds
 * up nothing else the server answers. Against the real `serve` on a store file of 20,000 posts
 * with about 80,000 comments: with four of the heaviest summaries always in flight, /healthz and
 * a token-info call (the sign-on partners' polling route) are answered between the searches'
 * answers, not after them. The test counts events, not milliseconds, so a loaded machine slows it
 * without failing it: a search on the event loop would hold every probe that arrives during it
 * until that search's answer has gone out, so nearly every probe would see a heavy answer arrive
 * while it waited; on threads a probe is answered in a sliver of one search's time, and most see
 * none. How fast they answer is a benchmark's question (bench/), not this test's.
 */

const YEAR = ['2025-01-01T00:00:00Z', '2025-12-31T23:59:59Z'] as const
const WORDS = 'a the of on with to and for in i is after it dose patient but has only old year this came had we'.split(' ')
const HEAVY = Array.from({length: 20}, (_, i) => Array.from({length: 12}, (_, j) => WORDS[(i + j) % WORDS.length]!).join(' '))

describe('serve with four of the heaviest summary calls in flight', () => {
  const db = join(tempDir('medpanel-event-loop-'), 'store.db')
  let server: RunningCli
  let apiKey: string
  let token: string

  beforeAll(async () => {
    // Seeded once per test run and copied (helpers/seeded-store.ts): two minutes a runtime otherwise.
    if (onPostgres) cliJson(['seed-posts', '--db', db, '--count', '20000', '--comments', '4', '--from', YEAR[0], '--to', YEAR[1], '--seed', '3'])
    else await seededStoreFile(db, {count: 20_000, comments: 4, from: YEAR[0], to: YEAR[1], seed: 3})
    const client = cliJson([
      'register-client',
      '--db',
      db,
      '--name',
      'Busy Co',
      '--url',
      'https://busy.example',
      '--logo-url',
      'https://busy.example/l.png',
      '--redirect-uri',
      'https://busy.example/cb',
      '--grant',
      'signon,conversations',
    ])
    const member = cliJson([
      'add-member',
      '--db',
      db,
      '--email',
      'busy@example.com',
      '--password',
      'long enough pw',
      '--first-name',
      'Bo',
      '--last-name',
      'Sy',
      '--country',
      'US',
      '--specialty',
      'Oncology',
    ])
    token = cliJson(['issue-token', '--db', db, '--member', String(member.user_id), '--client', client.client_id]).access_token
    apiKey = cliJson(['issue-api-key', client.client_id, '--db', db, '--methods', 'summary']).api_key
    server = await startCli(['serve', '--db', db, '--port', '0', '--no-worker'])
  })
  afterAll(async () => {
    await server?.stop()
  })

  it('answers /healthz and token info between the heavy searches, not after them', async () => {
    const probe = async (path: string, headers: Record<string, string> = {}) => {
      const res = await fetch(server.url + path, {headers})
      await res.text()
      expect(res.status).toBe(200)
    }
    const bearer = {Authorization: `Bearer ${token}`}
    // Connections open and the search threads started.
    await probe('/healthz')
    await probe('/oauth/token/info', bearer)

    let running = true
    let heavyAnswered = 0
    let inFlight = 0
    const answers: {status: number; body: string}[] = []
    const heavy = async () => {
      inFlight += 1
      const res = await fetch(`${server.url}/conversations/summary?${query(HEAVY, ...YEAR)}`, {headers: {'X-Service-Conversation-API-Key': apiKey}})
      answers.push({status: res.status, body: await res.text()})
      inFlight -= 1
      heavyAnswered += 1
    }
    // Four lanes: a key may have one search running and four waiting, and a lane's next call can
    // reach the server just before its last one's place is given back.
    const lanes = Array.from({length: 4}, async () => {
      while (running) await heavy()
    })
    // Each probe is sent while searches are running and notes how many heavy answers came in
    // while it waited for its own.
    const crossed: number[] = []
    while (crossed.length < 20) {
      if (inFlight === 0) {
        await new Promise((resolve) => setImmediate(resolve))
        continue
      }
      for (const [path, headers] of [['/healthz', {}] as const, ['/oauth/token/info', bearer] as const]) {
        const before = heavyAnswered
        await probe(path, headers)
        crossed.push(heavyAnswered - before)
      }
      // Let a search answer between probes, so they sample the whole run, not one search.
      const seen = heavyAnswered
      while (heavyAnswered === seen) await new Promise((resolve) => setImmediate(resolve))
    }
    running = false
    await Promise.all(lanes)

    // The heavy calls ran the whole time: each was answered, or ran out of its 10 s budget, which
    // four of them at once can on a loaded machine. A search refused for want of room, or
    // anything else, fails the test.
    const others = answers.filter((answer) => answer.status !== 200 && !overBudget(answer.status, answer.body))
    expect(others.map((answer) => `${answer.status} ${answer.body}`)).toEqual([])
    // On the event loop nearly every probe would wait out a search and see its answer go first.
    const clean = crossed.filter((n) => n === 0).length
    expect(clean, `heavy answers seen by each probe while it waited: ${crossed.join(', ')}`).toBeGreaterThan(crossed.length / 2)
  })
})
