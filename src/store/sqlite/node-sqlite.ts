import type {SqliteStatement} from 'kysely'
import {normalizeError, type OpenOptions, type SqliteHandle} from './handle.js'

/** The part of node:sqlite's API the adapter uses (the installed @types/node predates it). */
interface StatementSync {
  columns(): unknown[]
  all(...parameters: unknown[]): unknown[]
  run(...parameters: unknown[]): {changes: number | bigint; lastInsertRowid: number | bigint}
  iterate(...parameters: unknown[]): IterableIterator<unknown>
}
interface DatabaseSync {
  exec(text: string): void
  prepare(text: string): StatementSync
  close(): void
}
interface NodeSqliteModule {
  DatabaseSync: new (file: string, options?: {readOnly?: boolean; open?: boolean}) => DatabaseSync
}

let loaded: NodeSqliteModule | undefined

/**
 * Loads node:sqlite once. Node still calls it experimental and says so on stderr at first load;
 * that one line would break every `--json` consumer's clean stderr, so it alone is held back.
 */
async function load(): Promise<NodeSqliteModule> {
  if (loaded) return loaded
  const emitWarning = process.emitWarning
  process.emitWarning = function quietSqlite(this: unknown, warning: string | Error, ...rest: unknown[]) {
    if (String(typeof warning === 'string' ? warning : warning.message).includes('SQLite')) return
    return (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest)
  } as typeof process.emitWarning
  try {
    loaded = (await import('node:sqlite' as string)) as NodeSqliteModule
  } finally {
    process.emitWarning = emitWarning
  }
  return loaded
}

function attempt<T>(fn: () => T): T {
  try {
    return fn()
  } catch (error) {
    throw normalizeError(error)
  }
}

/**
 * Adapts node:sqlite's statement to Kysely's: parameters are spread rather than passed as an
 * array, and whether a statement returns rows comes from its result columns.
 */
function adapt(statement: StatementSync): SqliteStatement {
  return {
    reader: statement.columns().length > 0,
    all: (parameters) => attempt(() => statement.all(...parameters)),
    run: (parameters) => attempt(() => statement.run(...parameters)),
    iterate: (parameters) => rows(attempt(() => statement.iterate(...parameters))),
  }
}

/** Errors raised while stepping a streamed query get the same codes as any other. */
function* rows(iterator: IterableIterator<unknown>): IterableIterator<unknown> {
  try {
    yield* iterator
  } catch (error) {
    throw normalizeError(error)
  }
}

/** node:sqlite's DatabaseSync: Deno, Node 22 and later, and the single executable. */
export async function openNodeSqlite(file: string, options: OpenOptions = {}): Promise<SqliteHandle> {
  if (options.image) throw new Error('node:sqlite cannot open a database from its bytes (better-sqlite3 can)')
  const {DatabaseSync} = await load()
  const db = attempt(() => new DatabaseSync(file, {readOnly: options.readonly ?? false}))
  return {
    driver: 'node:sqlite',
    exec: (text) => attempt(() => db.exec(text)),
    value: (text) => {
      const row = attempt(() => db.prepare(text).all())[0] as Record<string, unknown> | undefined
      return row === undefined ? undefined : Object.values(row)[0]
    },
    prepare: (text) => adapt(attempt(() => db.prepare(text))),
    close: () => db.close(),
  }
}
