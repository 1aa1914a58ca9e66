import {spawnSync} from 'node:child_process'
import {readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import {BIN, tempDir} from '../helpers/cli.js'

const dist = fileURLToPath(new URL('../../dist/', import.meta.url))

/** Every bundle file a command's start loads: its chunk and the chunks it imports, transitively. */
function loadedBy(command: string): string[] {
  const entry = readFileSync(join(dist, 'cli.js'), 'utf8')
  const chunk = new RegExp(`import\\("\\./(chunks/${command}-[A-Z0-9]+\\.js)"\\)`).exec(entry)?.[1]
  if (!chunk) throw new Error(`dist/cli.js loads no chunk for ${command}`)
  const seen = new Set<string>(['cli.js'])
  const queue = [chunk, ...[...entry.matchAll(/from"\.\/(chunks\/[^"]+\.js)"/g)].map((m) => m[1]!)]
  while (queue.length > 0) {
    const file = queue.pop()!
    if (seen.has(file)) continue
    seen.add(file)
    const text = readFileSync(join(dist, file), 'utf8')
    // Static imports only: a dynamic import() loads on a path the command may never take.
    for (const m of text.matchAll(/from"\.\/([^"]+\.js)"/g)) queue.push(`chunks/${m[1]!}`)
  }
  return [...seen]
}

// Commands that only read start without zod: compiling and evaluating it cost 30-40 ms of every
// such command (docs/benchmarks.md, CLI start), and testers run them hundreds of times a script.
describe('what a read-only command loads', () => {
  it.each(['list-clients', 'list-members'])('%s loads no zod', (command) => {
    const files = loadedBy(command)
    expect(files.length).toBeGreaterThan(2)
    const withZod = files.filter((file) => readFileSync(join(dist, file), 'utf8').includes('"$ZodType"'))
    expect(withZod).toEqual([])
  })

  // oclif's index module loads every part of oclif at once and checks the Node version with
  // semver at every start; the CLI imports the parts it uses by their own paths instead.
  it("no command loads oclif's index module", () => {
    const marker = 'checkNodeVersion'
    expect(readFileSync(fileURLToPath(import.meta.resolve('@oclif/core')), 'utf8')).toContain(marker)
    const bundle = [join(dist, 'cli.js'), ...readdirSync(join(dist, 'chunks')).map((file) => join(dist, 'chunks', file))]
    expect(bundle.filter((file) => file.endsWith('.js') && readFileSync(file, 'utf8').includes(marker))).toEqual([])
  })

  it('finds zod where a command does load it', () => {
    const files = loadedBy('add-member')
    expect(files.some((file) => readFileSync(join(dist, file), 'utf8').includes('"$ZodType"'))).toBe(true)
  })
})

// pg's check for Cloudflare Workers builds a Fetch Response, which on Node 20 loads Node's bundled
// undici: 30 ms of every command's start on PostgreSQL (store/postgres/load.ts lends the answer).
describe('what a command on PostgreSQL loads', () => {
  const dir = tempDir()
  const probe = join(dir, 'probe.cjs')
  const out = join(dir, 'probe.json')
  writeFileSync(
    probe,
    `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify({
      undici: process.moduleLoadList.some((name) => name.includes('undici')),
      navigator: typeof globalThis.navigator,
    })))`,
  )
  const run = (args: string[]) => {
    const result = spawnSync(process.execPath, ['--require', probe, ...args], {
      encoding: 'utf8',
      env: {...process.env, MEDPANEL_SECRET_KEY: Buffer.alloc(32, 7).toString('base64')},
    })
    return {stderr: result.stderr, ...(JSON.parse(readFileSync(out, 'utf8')) as {undici: boolean; navigator: string})}
  }

  it('loads pg without undici, and leaves the global navigator as the runtime had it', () => {
    // Nothing listens on port 1: the command loads pg, tries to connect and fails.
    const {stderr, undici, navigator} = run([BIN, 'list-clients', '--database-url', 'postgres://medpanel@127.0.0.1:1/none', '--json'])
    expect(stderr).toMatch(/ECONNREFUSED|connect/i)
    expect(undici).toBe(false)
    expect(navigator).toBe(typeof (globalThis as {navigator?: unknown}).navigator)
  })

  it('sees undici where something does load it', () => {
    expect(run(['-e', 'new Response(null)']).undici).toBe(true)
  })
})
