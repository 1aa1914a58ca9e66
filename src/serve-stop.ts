import {writeSync} from 'node:fs'
import {createLogger, type LogFormat} from './lib/log.js'
import type {RunningServer, StopSignals} from './server.js'
import type {ServeProcess} from './compose.js'
import type {Db} from './schema.js'
import {checkpointStore} from './store/handle.js'
import {writesSettled, writeStats} from './store/transactions.js'

/**
 * Exit codes of a serve that stopped without finishing (docs/operations.md "Stopping and
 * restarting"): a second SIGINT or SIGTERM exits as a shell reports a process that signal killed
 * (128 + its number), and a drain that ran out of time exits 124, as timeout(1) does. A stop that
 * finished everything exits 0.
 */
export const ABANDONED_EXIT = {SIGINT: 130, SIGTERM: 143, drain: 124} as const

export interface Draining {
  server: RunningServer
  /** The delivery worker, when serve runs one. */
  worker?: {stop(): Promise<void>; delivering(): boolean}
  drainMs: number
  signals: StopSignals
  logFormat: LogFormat
}

/**
 * The graceful part of a stop: the socket stops accepting, and requests in flight and the worker's
 * send in flight run to their end, side by side. A further SIGINT or SIGTERM, or `drainMs`
 * passing, ends the process at once instead (abandon).
 */
export async function drain(parts: Draining): Promise<void> {
  parts.signals.onAnother((signal) => abandon(parts, signal === 'SIGINT' ? 'SIGINT' : 'SIGTERM'))
  const timer = setTimeout(() => abandon(parts, 'drain'), parts.drainMs)
  try {
    // No limit of the server's own: the drain time above is the one limit, and it says what it cut.
    await Promise.all([parts.server.close(Number.POSITIVE_INFINITY), parts.worker?.stop()])
  } finally {
    clearTimeout(timer)
  }
}

/** The one line an abandoned stop prints: why, and what it left unfinished. */
export function abandonedLine(why: keyof typeof ABANDONED_EXIT, requests: number, delivering: boolean, drainMs: number, format: LogFormat): string {
  const cause = why === 'drain' ? `the drain time (${drainMs / 1000} s) passed` : `a second ${why}`
  const text = `stopped at once (${cause}): abandoned ${requests} request${requests === 1 ? '' : 's'} in flight and ${delivering ? 'a delivery in progress (sent again by the next serve)' : 'no delivery'}`
  let line = ''
  createLogger((written) => {
    line = written
  }, format).log('error', text, 'stopped at once', {reason: why === 'drain' ? 'drain time passed' : why, requests_in_flight: requests, delivery_in_progress: delivering})
  return line
}

function abandon(parts: Draining, why: keyof typeof ABANDONED_EXIT): never {
  const line = abandonedLine(why, parts.server.inFlight(), parts.worker?.delivering() ?? false, parts.drainMs, parts.logFormat)
  // Synchronously: process.exit does not wait for a write still queued on stderr.
  writeSync(2, `${line}\n`)
  process.exit(ABANDONED_EXIT[why])
}

/**
 * Serve's stop, from the first SIGINT or SIGTERM: /readyz and /healthz say stopping, systemd is told, the
 * requests and the workers' sends in flight finish (drain), the records written after their answers
 * are committed, the store's log is moved into it, and
 * one line says what this process wrote.
 */
export async function stopServing(running: ServeProcess, signal: NodeJS.Signals, signals: StopSignals, drainMs: number): Promise<void> {
  const {logger, notifier, readiness} = running
  logger.log('info', `received ${signal}, finishing requests in flight…`, 'stopping: finishing requests in flight', {signal})
  // Not ready from now on (the probes say so), but requests on connections already open are still
  // served: finishing them is what the drain is for.
  readiness.phase = 'stopping'
  readiness.reason = `${signal} received; finishing requests in flight`
  notifier?.stopping()
  // The workers finish and record their sends in flight before the store closes under them (a
  // logout post cut here is retried by the next serve); only a partner delivery is named when cut.
  await drain({server: running.server, ...(running.worker ? {worker: running.worker} : {}), drainMs, signals, logFormat: logger.format})
  // Records written after their answers (E's summary calls) are committed before the checkpoint.
  await writesSettled(running.store.db)
  const whole = await checkpointStore(running.store.db)
  if (whole === false) logger.log('warn', 'store: a reader held the write-ahead log back; the next start moves the rest into the store', 'store checkpoint incomplete')
  logger.log('info', ...writeSummary(running.store.db))
  await notifier?.sent()
}

/**
 * What this process changed in the store since it started: every write transaction (requests and
 * the delivery worker), and how many commits (syncs) they took; SQLite's group commit puts several
 * in one. An idle serve writes nothing, and says so.
 */
function writeSummary(db: Db): [text: string, msg: string, fields: {writes: number; commits: number}] {
  const {writes, commits} = writeStats(db)
  const text =
    writes === 0
      ? 'store: since start, 0 write transactions (nothing changed)'
      : `store: since start, ${writes} write transaction${writes === 1 ? '' : 's'} (requests and delivery worker) in ${commits} commit${commits === 1 ? '' : 's'}, ${(writes / Math.max(commits, 1)).toFixed(1)} per commit`
  return [text, 'store write transactions', {writes, commits}]
}
