import {AppError, type AppErrorOptions, type ErrorCode} from '../../errors.js'
import type {SearchQuery, SummaryRow} from './search-types.js'
import type {AnswerFormat} from './format.js'
import {FORMATS, formatNamed} from './formats.js'
import type {DataJob} from './search.js'

/** What a search thread is started with. */
export interface SearchThreadSetup {
  /** The store file; the thread opens it read-only. */
  file: string
  /** Absolute path of better-sqlite3 when that is this runtime's driver. */
  betterSqlite3?: string
}

/** A data job as it crosses to a search thread: its format by name (an object with functions cannot be posted). */
export type ThreadJob = Omit<DataJob, 'format'> & {format: string}

/** The job for a thread, whose format must be one formats.ts lists: the thread finds it there. */
export function threadJob(job: DataJob): ThreadJob {
  if (!(FORMATS as readonly AnswerFormat[]).includes(job.format)) throw new Error(`the ${job.format.label} format is not in formats.ts, so no search thread can write it`)
  return {...job, format: job.format.name}
}

/** The job a thread was sent, with its format found again. */
export function fromThreadJob(job: ThreadJob): DataJob {
  return {...job, format: formatNamed(job.format)}
}

/** Messages to a search thread. It takes one at a time: the pool waits for each reply. */
export type SearchRequest =
  | {id: number; type: 'summary'; search: SearchQuery}
  | {id: number; type: 'data'; job: ThreadJob}
  | {id: number; type: 'next'}
  | {id: number; type: 'cancel'}

export type SearchValue = {kind: 'summary'; rows: SummaryRow[]} | {kind: 'first'; summary: SummaryRow[]; conversations: number} | {kind: 'page'; bytes: Uint8Array} | {kind: 'done'}

export type SearchReply = {id: number; ok: true; value: SearchValue} | {id: number; ok: false; error: SerializedError}

/**
 * An error as it crosses from a thread: structured cloning keeps an Error's message but drops
 * its own fields, and the SQLite code (a 503 for a busy or broken store) and an AppError's code
 * and details are what the caller's answer is made from.
 */
export interface SerializedError {
  message: string
  name?: string
  stack?: string
  code?: string
  errcode?: number
  app?: {code: ErrorCode; status: number; details?: string; headers: Record<string, string>}
}

export function serializeError(error: unknown): SerializedError {
  if (error instanceof AppError) {
    return {message: error.message, name: error.name, app: {code: error.code, status: error.status, details: error.details, headers: error.headers}}
  }
  const e = error as {message?: unknown; name?: unknown; stack?: unknown; code?: unknown; errcode?: unknown} | null
  return {
    message: typeof e?.message === 'string' ? e.message : String(error),
    name: typeof e?.name === 'string' ? e.name : undefined,
    stack: typeof e?.stack === 'string' ? e.stack : undefined,
    code: typeof e?.code === 'string' ? e.code : undefined,
    errcode: typeof e?.errcode === 'number' ? e.errcode : undefined,
  }
}

export function deserializeError(error: SerializedError): Error {
  if (error.app) {
    return new AppError(error.app.code, error.message, {status: error.app.status as AppErrorOptions['status'], details: error.app.details, headers: error.app.headers})
  }
  const rebuilt = new Error(error.message) as Error & {code?: string; errcode?: number}
  if (error.name) rebuilt.name = error.name
  if (error.stack) rebuilt.stack = error.stack
  if (error.code !== undefined) rebuilt.code = error.code
  if (error.errcode !== undefined) rebuilt.errcode = error.errcode
  return rebuilt
}
