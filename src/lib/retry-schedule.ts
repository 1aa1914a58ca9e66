/**
 * When a durable outbox tries a failed send again (partner pushes, back-channel logout tokens):
 * after the scheduled waits, then at a steady interval, until giving up some time after the first
 * attempt.
 */
export interface RetrySchedule {
  /** Waits after the 1st, 2nd, … failed attempt. */
  readonly retryScheduleSeconds: readonly number[]
  /** The wait once the schedule has run out. */
  readonly retryEverySeconds: number
  /** No attempt later than this after the first one. */
  readonly giveUpAfterSeconds: number
}

/** The delay before the next attempt after `attempts` failed ones, or null when it is time to give up. */
export function retryDelay(schedule: RetrySchedule, attempts: number, firstAttemptAt: Date, now: Date): number | null {
  const delay = schedule.retryScheduleSeconds[attempts - 1] ?? schedule.retryEverySeconds
  const at = now.getTime() + delay * 1000
  return at - firstAttemptAt.getTime() > schedule.giveUpAfterSeconds * 1000 ? null : delay
}
