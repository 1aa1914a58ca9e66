/**
 * Ctrl-C during a long write that works in whole transactions (seed-posts, seed-pulses): the first
 * SIGINT asks the loop to stop after the transaction in flight, so what is kept is consistent and
 * the command can say how much that is; a second one exits at once (the open transaction is
 * rolled back by the store, so nothing half-written stays either).
 */
export interface Interrupt {
  /** True once SIGINT arrived. */
  readonly requested: boolean
  /** Stops listening (the default Ctrl-C behaviour returns). */
  release: () => void
}

export function catchInterrupt(): Interrupt {
  let requested = false
  const onSignal = () => {
    if (requested) process.exit(130)
    requested = true
  }
  process.on('SIGINT', onSignal)
  return {
    get requested() {
      return requested
    },
    release: () => {
      process.off('SIGINT', onSignal)
    },
  }
}

/** The shell's exit code for a run stopped by Ctrl-C. */
export const INTERRUPTED_EXIT = 130
