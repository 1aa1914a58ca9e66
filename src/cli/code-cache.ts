/**
 * V8's code cache for the CLI's own modules on Node: the bundle's CommonJS copy (dist/cjs/) is
 * compiled through `vm.Script` with the bytecode a previous run left in the user's cache
 * directory, so a start skips parsing and compiling what it loads (about a third of
 * `list-clients`'s start, docs/benchmarks.md "CLI start"). Node 20 has no compile cache for
 * modules, and Node 22's keeps only the top level of each file; this one is written when the
 * process exits, after the run compiled the functions it called, so it holds those too.
 *
 * The cache is a speed-up only: a missing, stale, corrupt or foreign entry is compiled from the
 * source as without it, and a directory that cannot be made or written is not used. Kept free
 * of imports beyond Node's own, as it loads before the CLI.
 */
import Module from 'node:module'
import {mkdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync} from 'node:fs'
import {homedir} from 'node:os'
import {basename, dirname, join} from 'node:path'
import {Script} from 'node:vm'

/** The parts of Node's CommonJS loader the cache goes through (not in @types/node's Module). */
interface LoadedModule {
  exports: unknown
  filename: string
  require(id: string): unknown
}
interface ModuleInternals {
  prototype: {_compile(this: LoadedModule, content: string, filename: string, ...rest: unknown[]): unknown}
  wrap(content: string): string
  _resolveFilename(request: string, parent: LoadedModule, isMain: boolean, options?: unknown): string
  _cache: Record<string, unknown>
}

/**
 * The directory the cache goes in, or undefined when it is turned off (NODE_DISABLE_COMPILE_CACHE,
 * as for Node's own compile cache). MEDPANEL_CACHE_DIR (oclif's name for the CLI's cache
 * directory), else $XDG_CACHE_HOME/medpanel, else ~/.cache/medpanel; one subdirectory per Node
 * version and architecture, as V8 reads only the bytecode it wrote itself.
 */
export function codeCacheDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.NODE_DISABLE_COMPILE_CACHE) return undefined
  const home = env.HOME || homedir()
  const base = env.MEDPANEL_CACHE_DIR || join(env.XDG_CACHE_HOME || join(home, '.cache'), 'medpanel')
  return join(base, 'code-cache', `node-${process.versions.v8}-${process.arch}`)
}

/** What an entry was made from: the source file's size and modification time. */
function stampOf(filename: string): Buffer {
  const stat = statSync(filename, {bigint: true})
  const stamp = Buffer.alloc(16)
  stamp.writeBigUInt64LE(stat.size, 0)
  stamp.writeBigUInt64LE(stat.mtimeNs, 8)
  return stamp
}

/**
 * Whether `dir` may hold code this process runs: it and the `code-cache` directory above it are
 * directories of this user that no one else may write (bytecode in them runs as this user, as a
 * script in ~/bin would).
 */
function trusted(dir: string): boolean {
  return [dir, dirname(dir)].every((path) => {
    try {
      const stat = statSync(path)
      return stat.isDirectory() && (process.getuid === undefined || stat.uid === process.getuid()) && (stat.mode & 0o022) === 0
    } catch {
      return false
    }
  })
}

let installed = false

/**
 * Compiles every module loaded from under `root` (the CommonJS bundle) with the code cache kept
 * in `dir`, and writes the entries that were missing or stale when the process exits.
 */
export function useCodeCache(root: string, dir: string | undefined = codeCacheDir()): void {
  if (installed || dir === undefined) return
  installed = true
  const loader = Module as unknown as ModuleInternals
  const compile = loader.prototype._compile
  const usable = trusted(dir)
  const stale: {entry: string; stamp: Buffer; script: Script}[] = []
  loader.prototype._compile = function (content, filename, ...rest) {
    if (!filename.startsWith(root)) return compile.call(this, content, filename, ...rest)
    const entry = join(dir, basename(filename))
    let stamp: Buffer | undefined
    let cachedData: Buffer | undefined
    try {
      stamp = stampOf(filename)
      const held = usable ? readFileSync(entry) : undefined
      if (held && held.length > 16 && held.subarray(0, 16).equals(stamp)) cachedData = held.subarray(16)
    } catch {
      // No entry yet (or no source stamp): compiled from the source.
    }
    const script = new Script(loader.wrap(content), {filename, ...(cachedData ? {cachedData} : {})})
    if (stamp && (cachedData === undefined || script.cachedDataRejected)) stale.push({entry, stamp, script})
    const require = Object.assign((id: string) => this.require(id), {
      resolve: (request: string, options?: unknown) => loader._resolveFilename(request, this, false, options),
      cache: loader._cache,
    })
    const wrapper = script.runInThisContext() as (...args: unknown[]) => unknown
    return wrapper.call(this.exports, this.exports, require, this, filename, dirname(filename))
  }
  process.once('exit', () => {
    if (stale.length === 0) return
    try {
      mkdirSync(dir, {recursive: true, mode: 0o700})
    } catch {
      return
    }
    if (!trusted(dir)) return
    for (const {entry, stamp, script} of stale) {
      // Under a name of this process's own, then renamed: a reader sees a whole entry or none.
      const partial = `${entry}.${process.pid}.partial`
      try {
        writeFileSync(partial, Buffer.concat([stamp, script.createCachedData()]), {mode: 0o600})
        renameSync(partial, entry)
      } catch {
        try {
          unlinkSync(partial)
        } catch {
          // Never written.
        }
      }
    }
  })
}
