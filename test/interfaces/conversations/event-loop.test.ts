import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cliJson, startCli, tempDir, type RunningCli} from '../../helpers/cli.js'
import {overBudget, query} from './helpers.js'

/*
 * Interface E's searches run on search threads, so the heaviest summary a key may ask for holds
 * up nothing else the server answers. Against the real `serve` on a store file of 20,000 posts
 * with about 80,000 comments: with five of the heaviest summaries always in flight, /healthz and
 * a token-info call (the sign-on partners' polling route) still answer well within the time of one
 * heavy search, which is what a search on the event loop would hold them for. How fast they
 * answer is a benchmark's question (bench/), not this test's: see the bound below.
 */

const YEAR = ['2025-01-01T00:00:00Z', '2025-12-31T23:59:59Z'] as const
const WORDS = 'a the of on with to and for in i is after it dose patient but has only old year this came had we'.split(' ')
const HEAVY = Array.from({length: 20}, (_, i) => Array.from({length: 12}, (_, j) => WORDS[(i + j) % WORDS.length]!).join(' '))

describe('serve with five of the heaviest summary calls in flight', () => {
  const db = join(tempDir('medpanel-event-loop-'), 'store.db')
  let server: RunningCli
  let apiKey: string
  let token: string

  beforeAll(async () => {
    cliJson(['seed-posts', '--db', db, '--count', '20000', '--comments', '4', '--from', YEAR[0], '--to', YEAR[1], '--seed', '3'])
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
  }, 300_000)
  afterAll(async () => {
    await server?.stop()
  })

  it('still answers /healthz and token info within one heavy search', async () => {
    const timed = async (path: string, headers: Record<string, string> = {}) => {
      const started = performance.now()
      const res = await fetch(server.url + path, {headers})
      await res.text()
      expect(res.status).toBe(200)
      return performance.now() - started
    }
    const heavy = async () => {
      const res = await fetch(`${server.url}/conversations/summary?${query(HEAVY, ...YEAR)}`, {headers: {'X-Service-Conversation-API-Key': apiKey}})
      return {status: res.status, body: await res.text()}
    }
    const bearer = {Authorization: `Bearer ${token}`}
    // Connections open and the search threads started, so only the heavy calls are measured against.
    await timed('/healthz')
    await timed('/oauth/token/info', bearer)
    const soloStarted = performance.now()
    expect((await heavy()).status).toBe(200)
    const soloMs = performance.now() - soloStarted

    let running = true
    const answers: {status: number; body: string}[] = []
    const lane = async () => {
      while (running) answers.push(await heavy())
    }
    const lanes = Array.from({length: 5}, lane)
    await new Promise((resolve) => setTimeout(resolve, 100))
    const took: {path: string; ms: number}[] = []
    // Bounded in time too, so a server that does stall fails here rather than at the test timeout.
    const until = performance.now() + 5000
    for (let i = 0; i < 20 && performance.now() < until; i++) {
      took.push({path: '/healthz', ms: await timed('/healthz')})
      took.push({path: '/oauth/token/info', ms: await timed('/oauth/token/info', bearer)})
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    running = false
    await Promise.all(lanes)

    // The heavy calls ran the whole time: each was answered, or ran out of its 10 s budget, which
    // five of them at once can on a loaded machine (a CI run on PostgreSQL saw all five do so).
    // Either way it ran; a search refused for want of room, or anything else, fails the test.
    expect(answers.length).toBeGreaterThanOrEqual(5)
    const others = answers.filter((answer) => answer.status !== 200 && !overBudget(answer.status, answer.body))
    expect(others.map((answer) => `${answer.status} ${answer.body}`)).toEqual([])
    // A search on the event loop holds every request that arrives during it for the rest of that
    // search, and then behind the lanes' searches that queued with it: a typical probe would wait
    // half a search or more, the slowest a whole one or more. On threads (or in PostgreSQL) a probe
    // waits only for the scheduler, which on a loaded machine can hold the odd one for as long as
    // a search (one CI run on PostgreSQL saw 254 ms against a 246 ms search) but not the typical
    // one. So the median is held to half of one heavy search alone, measured above on the same
    // machine, and the slowest only to a few searches, which a stalled server still exceeds.
    const ms = took.map((probe) => probe.ms).sort((a, b) => a - b)
    const median = ms[Math.floor(ms.length / 2)]!
    const slowest = took.reduce((a, b) => (b.ms > a.ms ? b : a))
    const halfSearch = Math.max(25, soloMs / 2)
    expect(median, `the median probe took ${median.toFixed(1)} ms (bound ${halfSearch.toFixed(0)} ms; one search ${soloMs.toFixed(0)} ms)`).toBeLessThan(halfSearch)
    expect(slowest.ms, `${slowest.path} took ${slowest.ms.toFixed(1)} ms (bound ${(4 * soloMs).toFixed(0)} ms)`).toBeLessThan(Math.max(200, 4 * soloMs))
    // Enough samples, whatever the load: on a busy machine the 5 s run fits fewer than 40 (a
    // PostgreSQL run beside a CI run fitted 22), and each one is held to the bound above.
    expect(took.length).toBeGreaterThanOrEqual(10)
  }, 60_000)
})
