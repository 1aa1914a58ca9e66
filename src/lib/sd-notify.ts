import {spawn} from 'node:child_process'

/**
 * Tells systemd (a `Type=notify` unit) how the service is doing: READY=1, STOPPING=1,
 * RELOADING=1. systemd listens on a unix datagram socket ($NOTIFY_SOCKET), which Node cannot
 * write without a native addon, so each message is sent by `systemd-notify`. Since systemd 246
 * it waits until systemd has processed the message (a BARRIER=1 after it) before it exits, so
 * systemd still finds the sender's unit: no race. The sender is a child, not the main process,
 * so the unit needs NotifyAccess=all (deploy/medpanel.service). Messages go out one at a time,
 * in order. Without NOTIFY_SOCKET (not started by systemd) there is no notifier at all.
 */
export interface ServiceNotifier {
  /** READY=1: /healthz answers 200 from now on. */
  ready(): void
  /** STOPPING=1: the drain has begun. */
  stopping(): void
  /**
   * Runs `work` (SIGHUP's reopen) between RELOADING=1, with the monotonic time systemd asks for
   * under Type=notify-reload, and READY=1; before the first ready(), just runs it.
   */
  reload(work: () => void): void
  /** Resolves once every message sent so far has been handed over (or failed). */
  sent(): Promise<void>
}

export function serviceNotifier(env: {NOTIFY_SOCKET?: string | undefined}, warn: (line: string) => void = () => {}): ServiceNotifier | undefined {
  if (!env.NOTIFY_SOCKET) return undefined
  let queue = Promise.resolve()
  let warned = false
  let readySent = false
  // Only the first failure is told: a missing systemd-notify would otherwise warn at every send.
  const failed = (fields: string[], why: string) => {
    if (!warned) warn(`could not tell systemd ${fields.join(' ')}: ${why}`)
    warned = true
  }
  const send = (...fields: string[]) => {
    queue = queue.then(() => notify(fields, (why) => failed(fields, why)))
  }
  return {
    ready: () => {
      readySent = true
      send('--ready')
    },
    stopping: () => send('STOPPING=1'),
    reload: (work) => {
      if (!readySent) return work()
      // CLOCK_MONOTONIC in microseconds: process.hrtime reads that clock on Linux.
      send('RELOADING=1', `MONOTONIC_USEC=${process.hrtime.bigint() / 1000n}`)
      work()
      send('--ready')
    },
    sent: () => queue,
  }
}

/** Runs systemd-notify once with `fields`; resolves when it has ended, telling `failed` why it did not work. */
function notify(fields: string[], failed: (why: string) => void): Promise<void> {
  return new Promise<void>((resolve) => {
    const child = spawn('systemd-notify', fields, {stdio: ['ignore', 'ignore', 'pipe']})
    let error = ''
    child.stderr.on('data', (chunk) => (error += chunk))
    child.once('error', (problem) => {
      failed(problem.message)
      resolve()
    })
    child.once('exit', (code) => {
      if (code !== 0) failed(error.trim() || `systemd-notify exited ${code}`)
      resolve()
    })
  })
}
