// The in-process command runner's thread (test/helpers/in-process-cli.ts): the built CLI
// (dist/cli.js, what bin/run.js runs) imported once, then one command at a time through the same
// runCli that bin/run.js calls, with what it writes to stdout and stderr captured and its exit
// code read where process.exit or process.exitCode put it. The test thread waits for each answer
// synchronously (Atomics.wait), so `cli()` stays a plain function call.
import {Readable} from 'node:stream'
import {parentPort, workerData} from 'node:worker_threads'

const {root, bin, port, signal} = workerData
const cliModule = import(new URL('../../dist/cli.js', import.meta.url).href)

let captured = {stdout: '', stderr: ''}
let exitCode
const write = (name) => (chunk, encoding, callback) => {
  captured[name] += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString(typeof encoding === 'string' ? encoding : 'utf8')
  const done = typeof encoding === 'function' ? encoding : callback
  if (typeof done === 'function') queueMicrotask(done)
  return true
}
process.stdout.write = write('stdout')
process.stderr.write = write('stderr')
// process.exit inside a command: the code is kept and the command left to return.
process.exit = (code) => {
  exitCode ??= code ?? process.exitCode ?? 0
  // oclif's error handler calls exit inside its own try: keep running after it (it returns next).
  return undefined
}

/** The whole environment a spawned CLI would have had. */
function replaceEnvironment(env) {
  for (const key of Object.keys(process.env)) if (!(key in env)) delete process.env[key]
  Object.assign(process.env, env)
}

/** The command's standard input: what it was given, or nothing, read to its end as a pipe would be. */
function replaceStdin(bytes) {
  const stream = Readable.from(bytes && bytes.length > 0 ? [Buffer.from(bytes)] : [])
  Object.defineProperty(process, 'stdin', {value: stream, configurable: true, writable: true})
}

parentPort.on('message', async ({args, env, stdin}) => {
  captured = {stdout: '', stderr: ''}
  exitCode = undefined
  process.exitCode = undefined
  replaceEnvironment(env)
  replaceStdin(stdin)
  process.argv = [process.execPath, bin, ...args]
  let failure
  try {
    const cli = await cliModule
    cli.forgetEnvironment()
    await cli.runCli({root})
  } catch (error) {
    failure = error
  }
  // Writes queued by the command's last turn (oclif flushes through microtasks).
  await new Promise((resolve) => setImmediate(resolve))
  // oclif's flush waits for a 'drain' only when a write says the stream is full, which these never
  // do, and leaves its listener behind each time: dropped, or Node warns on the eleventh command.
  for (const stream of [process.stdout, process.stderr]) stream.removeAllListeners('drain')
  if (failure !== undefined) {
    captured.stderr += `${failure?.stack ?? failure}\n`
    exitCode ??= 1
  }
  const status = exitCode ?? (typeof process.exitCode === 'number' ? process.exitCode : 0)
  port.postMessage({status, stdout: captured.stdout, stderr: captured.stderr})
  Atomics.store(signal, 0, 1)
  Atomics.notify(signal, 0)
})
