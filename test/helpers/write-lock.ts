import {spawn} from 'node:child_process'
import {fileURLToPath} from 'node:url'

const SCRIPT = fileURLToPath(new URL('./hold-write-lock.mjs', import.meta.url))

export interface HeldLock {
  /** Exit code of the other process, once it has committed (0) or failed. */
  done: Promise<number | null>
  /** What it printed on stderr. */
  stderr: () => string
}

/**
 * Starts another process (same runtime, same SQLite library) that takes the write lock of the store
 * file `file`, runs `statements` in that transaction, and holds the lock for `holdMs` before it
 * commits. Resolves once the lock is held and the statements ran (the process says so), so a
 * test can then make its own write while the other process is still in its transaction.
 */
export function holdWriteLock(file: string, statements: string[], holdMs: number): Promise<HeldLock> {
  const argv = 'Deno' in globalThis ? ['run', '-A', SCRIPT] : [SCRIPT]
  const child = spawn(process.execPath, [...argv, file, String(holdMs), ...statements], {stdio: ['ignore', 'pipe', 'pipe']})
  let out = ''
  let err = ''
  child.stderr.on('data', (d) => (err += d))
  const done = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d
      if (out.startsWith('locked\n')) resolve({done, stderr: () => err})
    })
    void done.then((code) => reject(new Error(`the lock holder exited ${code} before it held the lock: ${err}`)))
  })
}
