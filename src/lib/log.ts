/**
 * The two shapes of medpanel's log lines (`serve --log-format`): `text`, one readable line per
 * event as it always was, and `json`, one JSON object per line for log collectors, each with
 * `time`, `level` and `msg` first and the event's own fields after. Where lines go (stderr,
 * batched; a test's array) is the caller's `write`; this only decides what a line says.
 */

export const LOG_FORMATS = ['text', 'json'] as const
export type LogFormat = (typeof LOG_FORMATS)[number]
export type LogLevel = 'info' | 'warn' | 'error'
/** An event's structured fields; undefined ones are left out of the JSON. */
export type LogFields = Record<string, string | number | boolean | null | undefined>

export interface Logger {
  readonly format: LogFormat
  /** Where finished lines go. */
  readonly write: (line: string) => void
  /**
   * One event: `text` is its whole line in the text format; `msg` and `fields` make its JSON
   * object. Neither may hold a secret: both formats are read by people and machines alike.
   */
  log(level: LogLevel, text: string, msg: string, fields?: LogFields): void
}

export function createLogger(write: (line: string) => void, format: LogFormat = 'text'): Logger {
  return {
    format,
    write,
    log: format === 'json' ? (level, _text, msg, fields) => write(jsonLogLine(level, msg, fields)) : (_level, text) => write(text),
  }
}

/** One JSON log line: time, level and msg, then the fields. */
export function jsonLogLine(level: LogLevel, msg: string, fields?: LogFields): string {
  return JSON.stringify({time: timestamp(), level, msg, ...fields})
}

let lastMs = 0
let lastStamp = ''

/** ISO time of now; many requests finish in the same millisecond under load, so reuse its text. */
export function timestamp(): string {
  const ms = Date.now()
  if (ms !== lastMs) {
    lastMs = ms
    lastStamp = new Date(ms).toISOString()
  }
  return lastStamp
}
