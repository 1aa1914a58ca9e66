import {writeSync} from 'node:fs'
import {createLogger, type LogFormat} from './lib/log.js'
import type {RunningServer, StopSignals} from './server.js'

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
