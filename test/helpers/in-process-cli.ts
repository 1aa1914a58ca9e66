import {MessageChannel, receiveMessageOnPort, Worker} from 'node:worker_threads'
import {fileURLToPath} from 'node:url'

/**
 * The in-process command runner: the built CLI run on a thread of this test process instead of a
 * process of its own, for tests that check what a command prints, exits with or stores. It runs
 * the same entry as bin/run.js (dist/cli.js's runCli, oclif underneath), with the environment a
 * spawned CLI would get, stdout and stderr captured and the exit code read, and answers
 * synchronously, so `cli()` and `cliJson()` keep their shape. A command costs a few milliseconds
 * of this thread instead of a Node start and the bundle's load (a third of a second alone, whole
 * seconds on a loaded machine).
 *
 * What it cannot stand in for, test/helpers/cli.ts keeps in a process: another runtime or the
 * executable, a command that falls back to ./medpanel.db (a thread cannot change directory, and a
 * store must never be written into the checkout), signals, terminals, and long-running commands.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const BIN = fileURLToPath(new URL('../../bin/run.js', import.meta.url))

/** How long one command may take before the runner calls it hung (a spawned CLI's limit too). */
const HUNG_MS = 300_000

interface Runner {
  worker: Worker
  port: MessageChannel['port1']
  signal: Int32Array
}

let runner: Runner | undefined

function start(): Runner {
  const channel = new MessageChannel()
  const signal = new Int32Array(new SharedArrayBuffer(4))
  const worker = new Worker(fileURLToPath(new URL('./cli-worker.mjs', import.meta.url)), {
    workerData: {root: ROOT, bin: BIN, port: channel.port2, signal},
    transferList: [channel.port2],
    stdout: false,
    stderr: false,
  })
  // The thread must not keep a finished test process alive.
  worker.unref()
  return {worker, port: channel.port1, signal}
}

export interface InProcessResult {
  status: number
  stdout: string
  stderr: string
}

/** Runs `medpanel ARGS` on the runner's thread with exactly `env` as its environment. */
export function runInProcess(args: string[], env: NodeJS.ProcessEnv): InProcessResult {
  runner ??= start()
  const {worker, port, signal} = runner
  Atomics.store(signal, 0, 0)
  worker.postMessage({args, env: Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined))})
  if (Atomics.wait(signal, 0, 0, HUNG_MS) === 'timed-out') {
    void worker.terminate()
    runner = undefined
    throw new Error(`medpanel ${args.join(' ')} did not finish within ${HUNG_MS / 1000} s (in-process runner)`)
  }
  const answer = receiveMessageOnPort(port)
  if (answer === undefined) throw new Error(`medpanel ${args.join(' ')}: the in-process runner answered nothing`)
  return answer.message as InProcessResult
}
