import {spawn} from 'node:child_process'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {COMMAND_LOADERS} from '../../commands/index.js'
import {cliCommand, freePort, medpanelOnPath, tempDir} from '../helpers/cli.js'
import {inProcessBin, shellRunner} from '../helpers/in-process-cli.js'
import {onPostgres} from '../helpers/store.js'

/**
 * Every command's --help examples, run as printed (with `medpanel` on PATH, stdin closed) in one
 * directory that holds what a tester would have there: the demo store as MEDPANEL_DB, a partner
 * on port 9090 (a free port stands in for it) registered as a partner client, and the files the
 * examples name. An example is left out only when it cannot run unattended as printed: it holds
 * a placeholder (…), it asks on a terminal, or it serves on a fixed port until stopped. Every
 * other example must exit 0, and every command must have at least one that runs.
 */
const NOT_UNATTENDED: Record<string, string> = {
  'medpanel withdraw user_id 1': 'asks for the type, amount and details on a terminal',
}
const NEEDS_POSTGRES = new Set(['copy-store'])
const LONG_RUNNING = new Set(['serve', 'partner-serve'])
/** Commands whose examples depend on what earlier ones made, in that order; the rest follow. */
const ORDER = [
  'demo',
  'register-client',
  'push-project',
  'push-quota',
  'push-members',
  'remove-member',
  'push-event',
  'close-project',
  'withdraw',
  'update-transaction',
  'seed-pulses',
  'import-pulse',
  'backup',
  'restore',
  'rotate-client-secret',
]

/**
 * Stops a process group and waits until none of it is left: a server writes its code cache as it
 * exits, and the run's teardown must not be removing that directory meanwhile.
 */
async function stopGroup(pid: number): Promise<void> {
  const alive = () => {
    try {
      process.kill(-pid, 0)
      return true
    } catch {
      return false
    }
  }
  if (!alive()) return
  process.kill(-pid, 'SIGTERM')
  while (alive()) await new Promise((resolve) => setTimeout(resolve, 50))
}

interface Example {
  command: string
  line: string
}

async function allExamples(): Promise<Example[]> {
  const names = [...ORDER, ...Object.keys(COMMAND_LOADERS).filter((name) => !ORDER.includes(name))]
  const out: Example[] = []
  for (const name of names) {
    const loaded = await COMMAND_LOADERS[name]!()
    for (const example of loaded.examples ?? []) {
      const text = typeof example === 'string' ? example : example.command
      out.push({command: name, line: text.replaceAll('<%= config.bin %>', 'medpanel')})
    }
  }
  return out
}

const FILES: Record<string, string> = {
  'project.json': JSON.stringify({project_id: 'P-100', name: 'Cardiology attitudes', duration: 20, status: 'active', project_type: 'custom'}),
  'quota.json': JSON.stringify({
    quota_id: 'Q-1',
    status: 'open',
    limit: 2,
    incidence_rate: 0.35,
    type: 'specialty',
    matching_specialties: ['Cardiology'],
    matching_regions: ['CA', 'NY'],
    cost_per_complete: '140.00',
    honoraria: 90.5,
    url: 'https://survey.example/s/P-100?npi=<npi>',
    closes_at: '2030-12-31T23:00:00Z',
  }),
  'members.csv': 'npi,honoraria,url\n1234567893,90.50,https://survey.example/s/P-100?npi=1234567893\n',
  'more.json': JSON.stringify([{npi: '1987654328', honoraria: 90.5, url: 'https://survey.example/s/P-100?npi=1987654328'}]),
  'check-address.json': JSON.stringify({
    first_name: 'Dana',
    last_name: 'Whitfield',
    address_line1: '1 Main St',
    city: 'Springfield',
    region: 'US-IL',
    postal_code: '62701',
    country: 'US',
  }),
}

/**
 * The examples that can run unattended as printed, by command, the commands in ORDER first. A
 * server's example runs when it serves on a free port and says where (--port 0); one on a fixed
 * port would serve until stopped.
 */
const runnable = new Map<string, string[]>()
for (const {command, line} of await allExamples()) {
  if (line.includes('…') || NOT_UNATTENDED[line] || NEEDS_POSTGRES.has(command)) continue
  if (LONG_RUNNING.has(command) && !line.includes('--port 0')) continue
  runnable.set(command, [...(runnable.get(command) ?? []), line])
}

describe.skipIf(onPostgres)('every command --help example', () => {
  const dir = tempDir('medpanel-help-examples-')
  // On Node, `medpanel` in these scripts runs each command on the in-process runner (its servers
  // as processes): a hundred examples, each a Node start and the bundle's load otherwise.
  const inProcess = process.env.MEDPANEL_TEST_IN_PROCESS !== '0' && !('Deno' in globalThis)
  const bin = inProcess ? inProcessBin(dir) : medpanelOnPath(dir)
  let runner: {close: () => Promise<void>} | undefined
  const cwd = process.cwd()
  const env = {...process.env, PATH: `${bin}:${process.env.PATH}`, MEDPANEL_DB: './medpanel-demo.db', NO_COLOR: '1'}
  let partnerPort = 0
  const background: number[] = []
  /** Runs a server's command line in a process group of its own, reads its first JSON document, stops the group. */
  const firstJson = (script: string) =>
    new Promise<{url?: unknown} | undefined>((resolve) => {
      const child = spawn('bash', ['-c', script], {cwd: dir, env, detached: true, stdio: ['ignore', 'pipe', 'ignore']})
      let out = ''
      let settled = false
      const done = (value: {url?: unknown} | undefined) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        stopGroup(child.pid!).then(() => resolve(value))
      }
      const timer = setTimeout(() => done(undefined), 30_000)
      child.stdout!.on('data', (chunk) => {
        out += chunk
        try {
          done(JSON.parse(out))
        } catch {
          // not a whole document yet
        }
      })
      child.once('exit', () => done(undefined))
    })
  /** Runs a script to its end; asynchronously, so the in-process runner's server can answer it. */
  const bash = (script: string) =>
    new Promise<{status: number | null; stdout: string; stderr: string}>((resolve) => {
      const child = spawn('bash', ['-c', `set -euo pipefail\n${script}`], {cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe']})
      let stdout = ''
      let stderr = ''
      child.stdout!.on('data', (chunk) => (stdout += chunk))
      child.stderr!.on('data', (chunk) => (stderr += chunk))
      child.once('close', (status) => resolve({status, stdout, stderr}))
    })

  beforeAll(async () => {
    if (inProcess) {
      // The runner's thread works in this process's directory: the examples' relative paths.
      process.chdir(dir)
      const launcher = cliCommand()
      runner = await shellRunner(dir, [launcher.command, ...launcher.args])
    }
    partnerPort = await freePort()
    for (const [name, text] of Object.entries(FILES)) writeFileSync(join(dir, name), text)
    const partner = spawn('bash', ['-c', `exec medpanel partner-serve --port ${partnerPort} --username acme --password s3cret --db ./partner.db`], {
      cwd: dir,
      env,
      stdio: 'ignore',
      detached: true,
    })
    background.push(partner.pid!)
    // The store and the files the examples read: the demo, a partner client, a pulse export and a
    // conversations answer saved from a running serve.
    const setup = await bash(`
      for i in $(seq 150); do curl -s -o /dev/null http://127.0.0.1:${partnerPort}/v1/projects/none && break; sleep 0.2; done
      medpanel demo > /dev/null
      medpanel register-client --name Acme --url https://acme.example --logo-url https://acme.example/l.png \\
        --grant partner --partner-url http://127.0.0.1:${partnerPort} --partner-username acme --partner-password s3cret > /dev/null
      medpanel serve --port 0 --json --no-worker > serve.json 2> serve.log &
      trap 'kill %1' EXIT
      for i in $(seq 150); do [ -s serve.json ] && break; sleep 0.2; done
      URL=$(jq -r .url serve.json)
      TOKEN=$(curl -sf -X POST $URL/oauth/token -d grant_type=client_credentials -d client_id=demo-client -d client_secret=demo-client-secret | jq -r .access_token)
      PULSE=$(medpanel list-pulses --client demo-client --json | jq -r '[.[] | select(.respondents > 0)][0].project_id')
      curl -sf $URL/projects/$PULSE/export -H "Authorization: Bearer $TOKEN" -o export.json
      curl -sf "$URL/conversations/data?terms%5B%5D=metformin&start=2025-06-01T00:00:00Z&end=2026-06-01T00:00:00Z" \\
        -H 'Accept: application/vnd.service-v1+json' -H 'X-Service-Conversation-API-Key: mpk_demo_conversations_key' -o conversations.json
    `)
    expect(setup.status, `${setup.stdout}\n${setup.stderr}`).toBe(0)
  })
  afterAll(async () => {
    process.chdir(cwd)
    await runner?.close()
    for (const pid of background) await stopGroup(pid)
  })

  // One test per example, in ORDER (later examples use what earlier ones made); the last test
  // checks that every command had one that ran.
  const ran = new Set<string>()
  for (const [command, lines] of runnable) {
    describe(`medpanel ${command} --help`, () => {
      for (const line of lines) {
        it(`runs as written: ${line}`, async () => {
          const script = line.replaceAll('127.0.0.1:9090', `127.0.0.1:${partnerPort}`)
          if (LONG_RUNNING.has(command)) {
            // A server runs when it serves on a free port and says where: start it, read its first
            // line (the --json address), then stop it.
            const address = await firstJson(script)
            expect(typeof address?.url, `${line}\n  did not print its address within 30 s`).toBe('string')
          } else {
            const run = await bash(script)
            expect(run.status, `${line}\n  exit ${run.status}: ${run.stderr.trim().split('\n').slice(-3).join('\n  ')}`).toBe(0)
          }
          ran.add(command)
        })
      }
    })
  }

  it('every command has at least one example that runs as written', () => {
    const without = Object.keys(COMMAND_LOADERS).filter((name) => !ran.has(name) && !NEEDS_POSTGRES.has(name))
    expect(without, 'commands with no example that runs as written').toEqual([])
  })
})
