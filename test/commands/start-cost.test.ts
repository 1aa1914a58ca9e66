import {spawnSync} from 'node:child_process'
import {createHash} from 'node:crypto'
import {chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import {BIN, tempDir} from '../helpers/cli.js'

const digest = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex')
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

/** A store with one client, for the commands below to list. */
function storeWithClient(): string {
  const store = join(tempDir(), 'start.db')
  const made = spawnSync(
    process.execPath,
    [
      BIN,
      'register-client',
      '--db',
      store,
      '--name',
      'Cache',
      '--url',
      'https://c.example',
      '--logo-url',
      'https://c.example/l.png',
      '--redirect-uri',
      'https://c.example/cb',
      '--json',
    ],
    {encoding: 'utf8'},
  )
  expect(made.status, made.stderr).toBe(0)
  return store
}

// oclif's modules require packages a command run never calls (scripts/oclif-trim.mjs defers them),
// and its WSL check loaded child_process with wsl-utils at every start.
describe("what oclif loads for a command's run", () => {
  const dir = tempDir()
  const probe = join(dir, 'probe.cjs')
  const out = join(dir, 'loaded.json')
  writeFileSync(probe, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify(process.moduleLoadList)))`)
  const loaded = (args: string[], env: NodeJS.ProcessEnv = {}) => {
    const result = spawnSync(process.execPath, ['--require', probe, BIN, ...args], {encoding: 'utf8', env: {...process.env, ...env}})
    expect(result.stderr).toBe('')
    return JSON.parse(readFileSync(out, 'utf8')) as string[]
  }

  it('list-clients loads neither child_process nor tty (the debug package)', () => {
    const modules = loaded(['list-clients', '--json', '--db', storeWithClient()])
    expect(modules).toContain('NativeModule fs')
    expect(modules.filter((name) => /^NativeModule (child_process|tty)$/.test(name))).toEqual([])
  })

  it('DEBUG=… still gets oclif its debug output, which loads tty', () => {
    expect(loaded(['--help'], {DEBUG: 'oclif:nothing'})).toContain('NativeModule tty')
  })
})

// bin/run.js compiles the bundle with V8's code cache (src/cli/code-cache.ts) kept in
// MEDPANEL_CACHE_DIR/code-cache/<V8 version>: written when a run ends, read by the next.
describe('the code cache', () => {
  const store = storeWithClient()
  const list = (env: NodeJS.ProcessEnv) => {
    const result = spawnSync(process.execPath, [BIN, 'list-clients', '--json', '--db', store], {encoding: 'utf8', env: {...process.env, ...env}})
    expect(result.stderr).toBe('')
    expect(result.status).toBe(0)
    return JSON.parse(result.stdout) as {name: string}[]
  }
  // Each entry by its SHA-256: vitest's toEqual walks a Buffer byte by byte, and the whole cache
  // (about 750 kB) took it seconds per comparison.
  const entries = (cache: string): Record<string, string> => {
    const root = join(cache, 'code-cache')
    const [versionDir] = existsSync(root) ? readdirSync(root) : []
    if (versionDir === undefined) return {}
    return Object.fromEntries(readdirSync(join(root, versionDir)).map((name) => [name, digest(readFileSync(join(root, versionDir, name)))]))
  }

  it('is written by a run and read, not rewritten, by the next', () => {
    const cache = tempDir()
    expect(list({MEDPANEL_CACHE_DIR: cache}).map((client) => client.name)).toEqual(['Cache'])
    const first = entries(cache)
    expect(Object.keys(first)).toContain('cli.js')
    expect(Object.keys(first).filter((name) => name.startsWith('list-clients-'))).toHaveLength(1)
    expect(statSync(join(cache, 'code-cache')).mode & 0o077).toBe(0)
    list({MEDPANEL_CACHE_DIR: cache})
    // An entry V8 refused would have been written again, with other bytes.
    expect(entries(cache)).toEqual(first)
  })

  it('replaces an entry that is damaged or was made from another build', () => {
    const cache = tempDir()
    list({MEDPANEL_CACHE_DIR: cache})
    const [versionDir] = readdirSync(join(cache, 'code-cache'))
    const at = (name: string) => join(cache, 'code-cache', versionDir!, name)
    const good = readFileSync(at('cli.js'))
    // The right stamp over garbage, and a stamp of some other file.
    const garbage = Buffer.concat([good.subarray(0, 16), Buffer.alloc(good.length - 16, 7)])
    writeFileSync(at('cli.js'), garbage)
    const command = readdirSync(dirname(at('cli.js'))).find((name) => name.startsWith('list-clients-'))!
    const foreign = Buffer.concat([Buffer.alloc(16, 1), readFileSync(at(command)).subarray(16)])
    writeFileSync(at(command), foreign)
    expect(list({MEDPANEL_CACHE_DIR: cache}).map((client) => client.name)).toEqual(['Cache'])
    const written = entries(cache)
    expect(written['cli.js']).not.toBe(digest(garbage))
    expect(written[command]).not.toBe(digest(foreign))
    // What replaced them is good: the next run keeps it.
    list({MEDPANEL_CACHE_DIR: cache})
    expect(entries(cache)).toEqual(written)
  })

  it('is left alone where it is turned off, shared with others, or cannot be made', () => {
    const off = tempDir()
    list({MEDPANEL_CACHE_DIR: off, NODE_DISABLE_COMPILE_CACHE: '1'})
    expect(readdirSync(off)).toEqual([])

    const shared = tempDir()
    mkdirSync(join(shared, 'code-cache'), {mode: 0o777})
    chmodSync(join(shared, 'code-cache'), 0o777)
    list({MEDPANEL_CACHE_DIR: shared})
    expect(entries(shared)).toEqual({})

    const file = join(tempDir(), 'a-file')
    writeFileSync(file, '')
    list({MEDPANEL_CACHE_DIR: join(file, 'cache')})
  })
})
