import {catchInterrupt, INTERRUPTED_EXIT} from '../output/interrupt.js'

/*
 * Long writes with their progress on stderr (seed-posts, seed-pulses), so stdout stays the one
 * JSON document, and Ctrl-C stops them between whole transactions.
 */

export interface Progress {
  update: (done: number) => void
  stop: () => void
}

/**
 * Progress of a long step, on stderr only: a bar for a person at a terminal (`interactive`: no
 * --json), otherwise a plain line about every tenth of the way (scripts and logs).
 */
export async function progress(label: string, total: number, interactive: boolean): Promise<Progress> {
  if (process.stderr.isTTY && interactive) {
    // cli-progress is CommonJS: its exports arrive as the default export of a dynamic import.
    const {SingleBar, Presets} = (await import('cli-progress')).default
    const bar = new SingleBar({stream: process.stderr, format: `${label} [{bar}] {value}/{total}`, hideCursor: true}, Presets.shades_classic)
    bar.start(total, 0)
    return {update: (done) => bar.update(done), stop: () => bar.stop()}
  }
  let shown = 0
  return {
    update: (done) => {
      if (done === total || done - shown >= Math.max(1, total / 10)) {
        shown = done
        process.stderr.write(`${label}: ${done}/${total}\n`)
      }
    },
    stop: () => undefined,
  }
}

/** One interruptible write: what it is, how big, the work, and what to say it kept when stopped. */
export interface InterruptibleWrite<R extends {interrupted: boolean}> {
  label: string
  total: number
  write: (progressed: (done: number) => void, stopAsked: () => boolean) => Promise<R>
  kept: (result: R) => string
}

/**
 * Runs a long write in whole transactions with its progress, which Ctrl-C stops after the
 * transaction in flight: `write` reports progress and asks `stopAsked` between transactions. When
 * it was stopped, what it kept stays (`keepStore` says so of a store this run made), stderr says so
 * with `kept(result)` and how to finish, and the exit code is 130.
 */
export async function interruptibleWrite<R extends {interrupted: boolean}>(job: InterruptibleWrite<R>, interactive: boolean, keepStore: () => void): Promise<R> {
  // Listening before anything is printed: under Deno a signal listener starts a moment after it is added.
  const interrupt = catchInterrupt()
  const shown = await progress(job.label, job.total, interactive)
  const result = await job
    .write(
      (done) => shown.update(done),
      () => interrupt.requested,
    )
    .finally(() => {
      shown.stop()
      interrupt.release()
    })
  if (result.interrupted) {
    keepStore()
    process.stderr.write(`Interrupted: ${job.kept(result)}; run the same command again to finish.\n`)
    process.exitCode = INTERRUPTED_EXIT
  }
  return result
}
