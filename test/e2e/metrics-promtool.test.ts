import {spawnSync} from 'node:child_process'
import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {freePort, medpanelOnPath, startCli, tempDir, type RunningCli} from '../helpers/cli.js'
import {onPostgres} from '../helpers/store.js'
import {basicAuth} from '../helpers/http-basic.js'

/**
 * `/metrics` as Prometheus reads it: a real `serve`, a small scenario over HTTP (a token, its
 * info, a withdrawal and a refused one, a conversation summary), then the exposition from
 * 127.0.0.1 through Prometheus's own parser (`promtool check metrics`, Debian's prometheus
 * package, which .ci/run installs) and a small parse that shows the counters moved. It is the
 * check docs/operations.md ("Watching it run") walks an operator through.
 */

/** Every sample of an exposition: `name{labels}` → value. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const match = /^([a-zA-Z_:][\w:]*(?:\{.*\})?)\s+(\S+)(?:\s+\d+)?$/.exec(line)
    if (!match) throw new Error(`not an exposition line: ${line}`)
    out.set(match[1]!, Number(match[2]))
  }
  return out
}

/** The sum of a metric's samples whose labels include every one of `labels`. */
function total(all: Map<string, number>, name: string, labels: Record<string, string> = {}): number {
  let sum = 0
  for (const [key, value] of all) {
    const [metric, rest = ''] = key.split('{', 2)
    if (metric !== name) continue
    if (Object.entries(labels).every(([label, wanted]) => rest.includes(`${label}="${wanted}"`))) sum += value
  }
  return sum
}

const promtool = spawnSync('promtool', ['--version']).status === 0
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
/** The metric families the Grafana dashboard reads (histograms by their _bucket series). */
const DASHBOARD_METRICS = [...new Set(readFileSync(fileURLToPath(new URL('../../docs/grafana-dashboard.json', import.meta.url)), 'utf8').match(/\bmedpanel_[a-z0-9_]+/g))]

describe('/metrics', {timeout: 0}, () => {
  let server: RunningCli
  const scrape = async () => {
    const answer = await fetch(`${server.url}/metrics`)
    return {status: answer.status, type: answer.headers.get('content-type'), text: await answer.text()}
  }
  beforeAll(async () => {
    server = await startCli(['serve', '--demo', '--port', '0', '--no-worker', '--db', join(tempDir(), 'metrics.db')])
  })
  afterAll(() => server?.stop())

  it('passes promtool check metrics, declares what the dashboard reads, and its counters move with the requests', async () => {
    const before = await scrape()
    expect(before.status, before.text).toBe(200)
    if (!promtool) throw new Error('promtool is not installed: apt-get install prometheus (.ci/run does)')
    expect(new URL(server.url).hostname).toBe('127.0.0.1')
    expect(before.type).toMatch(/^text\/plain; version=0\.0\.4/)

    const basic = basicAuth('demo-client', 'demo-client-secret')
    const token = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: {'content-type': 'application/x-www-form-urlencoded'},
      body: new URLSearchParams({grant_type: 'client_credentials', client_id: 'demo-client', client_secret: 'demo-client-secret', scope: 'pulses'}),
    })
    expect(token.status, await token.clone().text()).toBe(200)
    const {access_token: accessToken} = (await token.json()) as {access_token: string}
    expect((await fetch(`${server.url}/oauth/token/info`, {headers: {authorization: `Bearer ${accessToken}`}})).status).toBe(200)
    const withdraw = (amount: number) =>
      fetch(`${server.url}/balance/user_id/1/withdrawals`, {
        method: 'POST',
        headers: {authorization: basic, 'content-type': 'application/json'},
        body: JSON.stringify({type: 'PAYPAL', amount, member_details: {first_name: 'Dana', last_name: 'Whitfield', email: 'dana@example.com'}}),
      })
    expect((await withdraw(10)).status).toBe(201)
    // More than the demo member has: refused (422), and counted with its reason.
    expect((await withdraw(1_000_000)).status).toBe(422)
    const summary = await fetch(`${server.url}/conversations/summary?terms%5B%5D=metformin&start=2025-01-01T00:00:00Z&end=2025-12-31T23:59:59Z`, {
      headers: {'X-Service-Conversation-API-Key': 'mpk_demo_conversations_key'},
    })
    expect(summary.status).toBe(200)

    const after = await scrape()
    expect(after.status).toBe(200)
    // Prometheus's own parser and linter.
    const check = spawnSync('promtool', ['check', 'metrics'], {input: after.text, encoding: 'utf8'})
    expect(check.status, `promtool check metrics:\n${check.stdout}${check.stderr}`).toBe(0)
    for (const name of DASHBOARD_METRICS) {
      const family = name.replace(/_bucket$/, '')
      expect(after.text, `no # TYPE line for ${family}`).toMatch(new RegExp(`^# TYPE ${family} `, 'm'))
    }

    const [was, now] = [samples(before.text), samples(after.text)]
    const moved = (name: string, labels: Record<string, string> = {}) => total(now, name, labels) - total(was, name, labels)
    expect(moved('medpanel_http_requests_total')).toBeGreaterThanOrEqual(5)
    expect(moved('medpanel_signon_tokens_issued_total', {grant_type: 'client_credentials'})).toBe(1)
    expect(moved('medpanel_balance_withdrawals_created_total')).toBe(1)
    expect(moved('medpanel_balance_withdrawals_refused_total')).toBeGreaterThanOrEqual(1)
    expect(moved('medpanel_search_requests_total', {kind: 'summary'})).toBe(1)
    expect(moved('medpanel_http_request_duration_seconds_count')).toBeGreaterThanOrEqual(5)
    expect(total(now, 'medpanel_process_cpu_seconds_total')).toBeGreaterThan(0)
  })

  // docs/operations.md, "Watching it run", as printed, in an empty directory with `medpanel` on
  // PATH (this checkout's), its port 8080 made a free one.
  it.skipIf(onPostgres)('the walkthrough in docs/operations.md runs as written', async () => {
    const text = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8')
    const heading = text.indexOf('\n### Watching it run\n')
    expect(heading).toBeGreaterThan(0)
    const block = /```sh\n([\s\S]*?)```/.exec(text.slice(heading))![1]!
    const dir = tempDir('medpanel-watching-')
    const port = await freePort()
    const script = block.replaceAll('127.0.0.1:8080', `127.0.0.1:${port}`).replaceAll('--port 8080', `--port ${port}`)
    expect(script).not.toMatch(/\b8080\b/)
    writeFileSync(join(dir, 'watching.sh'), script)
    const env: Record<string, string | undefined> = {...process.env, PATH: `${medpanelOnPath(dir)}:${process.env.PATH}`, NO_COLOR: '1'}
    delete env.MEDPANEL_DB
    const run = spawnSync('bash', ['-c', `set -euo pipefail; trap 'kill $(jobs -p) 2>/dev/null || true' EXIT; source watching.sh`], {cwd: dir, encoding: 'utf8', env})
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0)
    expect(run.stdout).toMatch(/^schema +\S+ \(up to date\)$/m)
    expect(run.stdout).toContain('"pending":[]')
    expect(run.stdout).toContain('metrics.txt: promtool check metrics passed')
    expect(run.stdout).toMatch(/^medpanel_balance_withdrawals_created_total(\{[^}]*\})? 1$/m)
  })
})
