/** The time source, injectable so tests can move time forward instead of sleeping. */
export interface Clock {
  now(): Date
}

export const systemClock: Clock = {now: () => new Date()}

/** A clock tests can set and advance. */
export class ManualClock implements Clock {
  private current: number
  constructor(start: Date | string = '2026-01-15T12:00:00.000Z') {
    this.current = new Date(start).getTime()
  }
  now(): Date {
    return new Date(this.current)
  }
  advance(seconds: number): void {
    this.current += seconds * 1000
  }
}

/** ISO 8601 UTC with milliseconds and Z: sortable as text, which the store relies on. */
export function iso(date: Date): string {
  return date.toISOString()
}
