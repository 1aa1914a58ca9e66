import {spawnSync} from 'node:child_process'
import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import {tempDir} from '../helpers/cli.js'

/**
 * docs/grafana-dashboard.json, the dashboard operators import into Grafana: valid JSON, a
 * Prometheus datasource variable every query goes through, and PromQL that names only the metrics
 * medpanel's /metrics exposes (issue 29), each of which some panel shows.
 */
const METRICS = [
  'medpanel_http_requests_total',
  'medpanel_http_request_duration_seconds_bucket',
  'medpanel_partner_outbox_depth',
  'medpanel_partner_outbox_oldest_age_seconds',
  'medpanel_partner_delivery_attempts_total',
  'medpanel_partner_retries_scheduled_total',
  'medpanel_balance_withdrawals_created_total',
  'medpanel_balance_withdrawals_refused_total',
  'medpanel_balance_idempotent_replays_total',
  'medpanel_search_requests_total',
  'medpanel_search_queue_wait_seconds_bucket',
  'medpanel_search_duration_seconds_bucket',
  'medpanel_search_threads_busy',
  'medpanel_guessing_refusals_total',
  'medpanel_store_commit_batch_size_bucket',
  'medpanel_store_commit_duration_seconds_bucket',
  'medpanel_signon_signins_total',
  'medpanel_signon_tokens_issued_total',
  'medpanel_process_cpu_seconds_total',
  'medpanel_nodejs_eventloop_lag_seconds',
  'medpanel_nodejs_heap_size_used_bytes',
]

/** How a panel names the data source the dashboard's variable picks. */
const DATASOURCE = `\${datasource}`

/** PromQL words that are not metric names: aggregations, functions' modifiers, keywords. */
const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'offset', 'bool', 'and', 'or', 'unless', 'inf', 'nan'])

/**
 * The metric names one PromQL expression reads. Label matchers ({…}), range and subquery
 * selectors ([…]), grouping clauses (by/without (…)), string literals and Grafana's variables are
 * taken out first; what then looks like an identifier and is not a function call or a keyword is
 * a metric name.
 */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '')
    .replace(/\$\{?\w+\}?/g, '')
  const names = new Set<string>()
  for (const match of bare.matchAll(/(?<![\w.])([a-zA-Z_:][\w:]*)(\s*\()?/g)) {
    if (match[2] || KEYWORDS.has(match[1]!.toLowerCase())) continue
    names.add(match[1]!)
  }
  return [...names]
}

interface Target {
  expr?: string
  datasource?: {type?: string; uid?: string}
}
interface Panel {
  id: number
  type: string
  title: string
  datasource?: {type?: string; uid?: string}
  targets?: Target[]
  panels?: Panel[]
  gridPos?: {h: number; w: number; x: number; y: number}
}

const dashboard = JSON.parse(readFileSync(fileURLToPath(new URL('../../docs/grafana-dashboard.json', import.meta.url)), 'utf8')) as {
  title: string
  uid: string
  panels: Panel[]
  templating: {list: {name: string; type: string; query?: unknown; datasource?: {uid?: string}}[]}
}

/** Every panel, those inside collapsed rows included. */
const allPanels = (panels: Panel[]): Panel[] => panels.flatMap((panel) => [panel, ...allPanels(panel.panels ?? [])])
const graphs = allPanels(dashboard.panels).filter((panel) => panel.type !== 'row')

describe('docs/grafana-dashboard.json', () => {
  it('reads metric names out of PromQL', () => {
    expect(metricNames('histogram_quantile(0.95, sum by (interface, le) (rate(medpanel_http_request_duration_seconds_bucket{instance=~"$instance"}[$__rate_interval])))')).toEqual([
      'medpanel_http_request_duration_seconds_bucket',
    ])
    expect(metricNames('sum(rate(a_total{x="b_total(1)"}[5m])) / ignoring(y) sum(c_total offset 1h) > bool 0')).toEqual(['a_total', 'c_total'])
    expect(metricNames('label_values(medpanel_process_cpu_seconds_total, instance)')).toEqual(['medpanel_process_cpu_seconds_total', 'instance'])
  })

  it('has a Prometheus datasource variable, and every panel and query uses it', () => {
    const variable = dashboard.templating.list.find((v) => v.type === 'datasource')
    expect(variable).toMatchObject({name: 'datasource', query: 'prometheus'})
    for (const panel of graphs) {
      expect(panel.datasource, panel.title).toEqual({type: 'prometheus', uid: DATASOURCE})
      for (const target of panel.targets ?? []) expect(target.datasource ?? panel.datasource, panel.title).toEqual({type: 'prometheus', uid: DATASOURCE})
    }
    for (const other of dashboard.templating.list.filter((v) => v.type === 'query')) expect(other.datasource?.uid, other.name).toBe(DATASOURCE)
  })

  it("queries only medpanel's metric names, and shows every one of them", () => {
    const used = new Set<string>()
    const strangers: string[] = []
    for (const panel of graphs) {
      expect(panel.targets?.length, `${panel.title}: no query`).toBeGreaterThan(0)
      for (const target of panel.targets!) {
        const names = metricNames(target.expr ?? '')
        expect(names.length, `${panel.title}: ${target.expr} reads no metric`).toBeGreaterThan(0)
        for (const name of names) {
          if (METRICS.includes(name)) used.add(name)
          else strangers.push(`${panel.title}: ${name} in ${target.expr}`)
        }
        // A quantile of a histogram keeps its buckets apart.
        if (/histogram_quantile/.test(target.expr!)) expect(target.expr, panel.title).toMatch(/by \([^)]*\ble\b[^)]*\)/)
      }
    }
    // The instance variable's query reads a metric too (its label `instance` is not one).
    for (const variable of dashboard.templating.list.filter((v) => v.type === 'query')) {
      const query = typeof variable.query === 'string' ? variable.query : ((variable.query as {query: string}).query ?? '')
      const [metric] = /label_values\((\w+)/.exec(query)?.slice(1) ?? []
      expect(METRICS, variable.name).toContain(metric)
    }
    expect(strangers).toEqual([])
    expect(METRICS.filter((name) => !used.has(name))).toEqual([])
  })

  it('has the panels operators look for, each with its own id and place', () => {
    const titles = graphs.map((panel) => panel.title)
    for (const wanted of [
      /request rate per interface/i,
      /p95 latency per interface/i,
      /outbox lag per partner/i,
      /withdrawals created and refused/i,
      /searches/i,
      /queue wait/i,
      /guessing refusals/i,
      /commit batch sizes/i,
    ]) {
      expect(
        titles.some((title) => wanted.test(title)),
        String(wanted),
      ).toBe(true)
    }
    const ids = allPanels(dashboard.panels).map((panel) => panel.id)
    expect(new Set(ids).size).toBe(ids.length)
    for (const panel of allPanels(dashboard.panels)) {
      expect(panel.gridPos, panel.title).toBeDefined()
      expect(panel.gridPos!.x + panel.gridPos!.w, panel.title).toBeLessThanOrEqual(24)
    }
    expect(dashboard).toMatchObject({title: 'medpanel', uid: 'medpanel'})
  })

  // Prometheus's own parser reads every query: each becomes a recording rule (Grafana's variables
  // given values), and `promtool check rules` parses them. promtool is Debian's prometheus package,
  // which .ci/run installs.
  it.skipIf(spawnSync('promtool', ['--version']).status !== 0)('is PromQL that Prometheus parses (promtool check rules)', () => {
    const exprs = graphs.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr!))
    const rules = exprs.map((expr, i) => {
      const concrete = expr.replaceAll('$__rate_interval', '5m').replaceAll('$instance', '.*')
      return `      - record: medpanel:dashboard_query_${i}\n        expr: ${JSON.stringify(concrete)}`
    })
    const file = join(tempDir('medpanel-dashboard-'), 'rules.yml')
    writeFileSync(file, `groups:\n  - name: dashboard\n    rules:\n${rules.join('\n')}\n`)
    const check = spawnSync('promtool', ['check', 'rules', file], {encoding: 'utf8'})
    expect(check.status, `${check.stdout}${check.stderr}`).toBe(0)
    expect(check.stdout).toContain(`SUCCESS: ${exprs.length} rules found`)
  })
})
