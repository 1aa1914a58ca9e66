// Interface B delivery throughput: push 100,000 members (one PUT + 99 POST chunks of 1,000) from
// medpanel to `partner-serve` on loopback, then post the very same chunk bodies (read back from
// medpanel's outbox) with a bare fetch loop to the same server, under a second quota so the
// partner does the same work. The bare loop is the ceiling; ratio = bare time / medpanel time.
// Round-by-round times go to stderr, the summary (best of the rounds) to stdout.
// Usage: npm run build && node bench/partner.mjs [--members 100000] [--chunk 1000] [--rounds 3]
import Database from 'better-sqlite3'
import {writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {spawnSync} from 'node:child_process'
import {parseArgs} from 'node:util'
import {tsImport} from 'tsx/esm/api'
import {BIN, cliJson, fmt, startJsonServer, tempDb} from './lib.mjs'

const {values} = parseArgs({options: {members: {type: 'string', default: '100000'}, chunk: {type: 'string', default: '1000'}, rounds: {type: 'string', default: '3'}}})
const total = Number(values.members)
const chunk = Number(values.chunk)
// Each round pushes to fresh quotas; the best time of each side counts, which keeps the ratio
// steady on a machine that is busy with other work.
const rounds = Number(values.rounds)

// The NPI check digit as the service computes it, loaded from the sources as other benches load theirs.
const {npiFromBase: npi} = await tsImport('../src/lib/npi.ts', import.meta.url)

const store = tempDb('medpanel.db')
const dir = dirname(store)
const db = ['--db', store]
const partner = await startJsonServer(process.execPath, [
  BIN,
  'partner-serve',
  '--port',
  '0',
  '--username',
  'bench',
  '--password',
  'bench-pw',
  '--db',
  join(dir, 'partner.db'),
  '--json',
])
const auth = `Basic ${Buffer.from('bench:bench-pw').toString('base64')}`

try {
  cliJson([
    'register-client',
    ...db,
    '--name',
    'Bench partner',
    '--url',
    'https://bench.example',
    '--logo-url',
    'https://bench.example/l.png',
    '--grant',
    'partner',
    '--partner-url',
    partner.url,
    '--partner-username',
    'bench',
    '--partner-password',
    'bench-pw',
    '--signing-secret',
    'bench-signing-secret-0123',
  ])
  cliJson(['push-project', ...db, '--project-id', 'BENCH', '--name', 'Benchmark', '--duration', '10', '--status', 'active', '--type', 'custom', '--wait'])
  const quotas = Array.from({length: rounds}, (_, r) => [`Q-MEDPANEL-${r}`, `Q-BARE-${r}`]).flat()
  for (const q of quotas) {
    const file = join(dir, `${q}.json`)
    writeFileSync(file, JSON.stringify({quota_id: q, status: 'open', limit: total, incidence_rate: 0.5, closes_at: '2030-01-01T00:00:00Z'}))
    cliJson(['push-quota', ...db, '--project-id', 'BENCH', '--file', file, '--wait'])
  }
  const members = Array.from({length: total}, (_, i) => {
    const id = npi(String(100000000 + i))
    return {npi: id, honoraria: 75 + (i % 100) / 4, url: `https://survey.example/s/BENCH?npi=${id}`}
  })
  const membersFile = join(dir, 'members.json')
  writeFileSync(membersFile, JSON.stringify(members))

  // Warm the partner (JIT, SQLite caches) so neither measured run pays for its first requests.
  const warmFile = join(dir, 'Q-WARM.json')
  writeFileSync(warmFile, JSON.stringify({quota_id: 'Q-WARM', status: 'open', limit: 1, incidence_rate: 0.5, closes_at: '2030-01-01T00:00:00Z'}))
  cliJson(['push-quota', ...db, '--project-id', 'BENCH', '--file', warmFile, '--wait'])
  const warmBody = JSON.stringify(members.slice(0, chunk))
  for (let i = 0; i < 20; i++) {
    const res = await fetch(`${partner.url}/v1/projects/BENCH/quotas/Q-WARM/members`, {
      method: 'PUT',
      body: warmBody,
      headers: {authorization: auth, 'content-type': 'application/json'},
    })
    await res.text()
  }

  const best = {command: Infinity, delivery: Infinity, bare: Infinity}
  let requests = 0
  for (let r = 0; r < rounds; r++) {
    // medpanel: the whole command (read, validate, store, queue, deliver) and its delivery phase.
    const started = performance.now()
    const run = spawnSync(
      process.execPath,
      [BIN, 'push-members', ...db, '--project-id', 'BENCH', '--quota-id', `Q-MEDPANEL-${r}`, '--file', membersFile, '--chunk', String(chunk), '--wait', '--json'],
      {encoding: 'utf8', maxBuffer: 64 << 20},
    )
    const commandSeconds = (performance.now() - started) / 1000
    if (run.status !== 0) throw new Error(`push-members failed: ${run.stderr}`)
    const result = JSON.parse(run.stdout)
    if (result.wait.delivered !== result.requests) throw new Error(`only ${result.wait.delivered} of ${result.requests} delivered`)

    // The same bodies medpanel sent, in order, straight from its outbox.
    const outbox = new Database(store, {readonly: true})
    const bodies = outbox
      .prepare('select d.method, b.body from partner_deliveries d join partner_delivery_bodies b on b.seq = d.seq where d.kind = ? and d.path = ? order by d.seq')
      .all('members', `/v1/projects/BENCH/quotas/Q-MEDPANEL-${r}/members`)
    outbox.close()
    requests = bodies.length

    const url = `${partner.url}/v1/projects/BENCH/quotas/Q-BARE-${r}/members`
    const bareStarted = performance.now()
    for (const {method, body} of bodies) {
      const res = await fetch(url, {method, body, headers: {authorization: auth, 'content-type': 'application/json'}})
      await res.text()
      if (!res.ok) throw new Error(`bare ${method} answered ${res.status}`)
    }
    const bareSeconds = (performance.now() - bareStarted) / 1000

    const check = async (q) => (await (await fetch(`${partner.url}/v1/projects/BENCH/quotas/${q}/members`, {headers: {authorization: auth}})).json()).length
    const [a, b] = [await check(`Q-MEDPANEL-${r}`), await check(`Q-BARE-${r}`)]
    if (a !== total || b !== total) throw new Error(`partner holds ${a} and ${b} members, expected ${total}`)
    console.error(`round ${r + 1}: medpanel delivery ${fmt(result.wait.seconds, 2)} s, bare ${fmt(bareSeconds, 2)} s, whole command ${fmt(commandSeconds, 2)} s`)
    best.command = Math.min(best.command, commandSeconds)
    best.delivery = Math.min(best.delivery, result.wait.seconds)
    best.bare = Math.min(best.bare, bareSeconds)
  }
  const {command: commandSeconds, delivery: deliverySeconds, bare: bareSeconds} = best
  console.log(`partner push: ${fmt(total)} members as ${requests} requests (1 PUT + ${requests - 1} POST, chunk ${fmt(chunk)}) to partner-serve on loopback`)
  console.log(`  best of ${rounds} rounds each`)
  console.log(`  medpanel delivery (worker, --wait):      ${fmt(deliverySeconds, 2)} s`)
  console.log(`  bare fetch loop, same bodies (ceiling):  ${fmt(bareSeconds, 2)} s`)
  console.log(`  ratio (ceiling / medpanel delivery):     ${fmt(bareSeconds / deliverySeconds, 2)}  (goal >= 0.80)`)
  console.log(`  whole push-members command (parse, validate, store, queue, deliver): ${fmt(commandSeconds, 2)} s; ratio ${fmt(bareSeconds / commandSeconds, 2)}`)
} finally {
  await partner.stop()
}
