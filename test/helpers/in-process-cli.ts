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

/**
 * Runs `medpanel ARGS` on the runner's thread with exactly `env` as its environment and `stdin`
 * as its standard input (none: an empty one, as a process started with stdin closed reads).
 */
export function runInProcess(args: string[], env: NodeJS.ProcessEnv, stdin?: Uint8Array): InProcessResult {
  runner ??= start()
  const {worker, port, signal} = runner
  Atomics.store(signal, 0, 0)
  worker.postMessage({args, env: Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined)), stdin})
  if (Atomics.wait(signal, 0, 0, HUNG_MS) === 'timed-out') {
    void worker.terminate()
    runner = undefined
    throw new Error(`medpanel ${args.join(' ')} did not finish within ${HUNG_MS / 1000} s (in-process runner)`)
  }
  const answer = receiveMessageOnPort(port)
  if (answer === undefined) throw new Error(`medpanel ${args.join(' ')}: the in-process runner answered nothing`)
  return answer.message as InProcessResult
}

/**
 * A `medpanel` for shell scripts that runs each command on the in-process runner: a bash script
 * (written into `dir`, which it returns) that sends its arguments, working directory and
 * environment to a loopback server in this test process over bash's /dev/tcp, and prints what
 * comes back, with its exit code. `serve` and `partner-serve` run as real processes (`real` is
 * the command line that starts the CLI). The working directory must be this process's own while
 * commands run (the runner's thread shares it): call it after process.chdir. The script is
 * `dir`/.in-process-bin/medpanel (inProcessBin). Close the server when done.
 */
export function inProcessBin(dir: string): string {
  return `${dir}/.in-process-bin`
}

export async function shellRunner(dir: string, real: string[]): Promise<{bin: string; close: () => Promise<void>}> {
  const {createServer} = await import('node:net')
  const {chmodSync, mkdirSync, realpathSync, writeFileSync} = await import('node:fs')
  const {join} = await import('node:path')
  const server = createServer((socket) => {
    let text = ''
    let answered = false
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => {
      text += chunk
      const lines = text.split('\n')
      // The working directory, the environment, the count, one line per argument, then stdin.
      if (answered || lines.length < 4 || !/^\d+$/.test(lines[2]!) || lines.length < 5 + Number(lines[2])) return
      answered = true
      const count = Number(lines[2])
      const decode = (line: string) => Buffer.from(line, 'base64').toString('utf8')
      const cwd = decode(lines[0]!)
      const env = Object.fromEntries(
        decode(lines[1]!)
          .split('\0')
          .filter((pair) => pair.includes('='))
          .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
      )
      const args = lines.slice(3, 3 + count).map(decode)
      const stdin = Buffer.from(lines[3 + count]!, 'base64')
      const answer =
        realpathSync(cwd) === realpathSync(process.cwd())
          ? runInProcess(args, env, stdin)
          : {status: 70, stdout: '', stderr: `the in-process medpanel runs in ${process.cwd()} only (asked from ${cwd})\n`}
      const encode = (value: string) => Buffer.from(value).toString('base64')
      socket.end(`${answer.status}\n${encode(answer.stdout)}\n${encode(answer.stderr)}\n`)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const {port} = server.address() as {port: number}
  const bin = inProcessBin(dir)
  mkdirSync(bin, {recursive: true})
  const quoted = real.map((part) => `'${part}'`).join(' ')
  writeFileSync(
    join(bin, 'medpanel'),
    `#!/usr/bin/env bash
case "$1" in serve|partner-serve) exec ${quoted} "$@" ;; esac
exec 3<>/dev/tcp/127.0.0.1/${port}
{
  printf '%s\\n' "$(pwd | tr -d '\\n' | base64 -w0)"
  printf '%s\\n' "$(env -0 | base64 -w0)"
  printf '%s\\n' "$#"
  for arg in "$@"; do printf '%s\\n' "$(printf '%s' "$arg" | base64 -w0)"; done
  if [ -t 0 ]; then printf '\\n'; else printf '%s\\n' "$(base64 -w0)"; fi
} >&3
IFS= read -r status <&3
IFS= read -r out <&3
IFS= read -r err <&3
printf '%s' "$out" | base64 -d
printf '%s' "$err" | base64 -d >&2
exit "$status"
`,
  )
  chmodSync(join(bin, 'medpanel'), 0o755)
  return {bin, close: () => new Promise<void>((resolve) => server.close(() => resolve()))}
}
