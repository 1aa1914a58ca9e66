/**
 * A search thread of interface E (see searcher-threads.ts). It owns one read-only connection to the
 * store file and runs one job at a time, as the pool hands them over; SQLite's work happens
 * here, off the event loop that answers every other request. Bundled on its own into CommonJS
 * source text (scripts/search-worker-bundle.mjs) that the pool starts with `eval`, so it needs
 * no file on disk: the same text runs from dist/, under Deno and inside the single executable.
 */
import {Kysely, SqliteDialect} from 'kysely'
import {parentPort, workerData} from 'node:worker_threads'
import type {ConversationsView as Database} from './tables.js'
import {loadBetterSqlite3From, openSqlite, withStatementCache} from '../../store/sqlite-reader.js'
import {setContext} from '../../store/context.js'
import {dataSearch, summarySearch, type DataStep} from './search.js'
import {fromThreadJob, serializeError, type SearchReply, type SearchRequest, type SearchThreadSetup} from './search-protocol.js'

const setup = workerData as SearchThreadSetup
if (setup.betterSqlite3) loadBetterSqlite3From(setup.betterSqlite3)

let store: Kysely<Database> | undefined
async function connection(): Promise<Kysely<Database>> {
  if (!store) {
    const handle = withStatementCache(await openSqlite(setup.file, {readonly: true}))
    store = new Kysely<Database>({dialect: new SqliteDialect({database: handle})})
    // This thread runs one job at a time on a connection of its own, so statements may go straight to it.
    setContext(store, {kind: 'sqlite', direct: handle.direct, exclusive: true})
  }
  return store
}

const UTF8 = new TextEncoder()
let stream: AsyncGenerator<DataStep, void, undefined> | undefined

function reply(message: SearchReply, transfer: ArrayBuffer[] = []): void {
  parentPort!.postMessage(message, transfer)
}

/** The next step of the data answer in progress: its counts, a page (as bytes, handed over without a copy), or its end. */
async function step(id: number): Promise<void> {
  const next = await stream!.next()
  if (next.done) {
    stream = undefined
    return reply({id, ok: true, value: {kind: 'done'}})
  }
  if (next.value.kind === 'first') return reply({id, ok: true, value: next.value})
  const bytes = UTF8.encode(next.value.text)
  reply({id, ok: true, value: {kind: 'page', bytes}}, [bytes.buffer as ArrayBuffer])
}

async function handle(request: SearchRequest): Promise<void> {
  switch (request.type) {
    case 'summary':
      return reply({id: request.id, ok: true, value: {kind: 'summary', rows: await summarySearch(await connection(), request.search)}})
    case 'data':
      await stream?.return(undefined)
      stream = dataSearch(await connection(), fromThreadJob(request.job))
      return step(request.id)
    case 'next':
      if (!stream) return reply({id: request.id, ok: true, value: {kind: 'done'}})
      return step(request.id)
    case 'cancel':
      await stream?.return(undefined)
      stream = undefined
      return reply({id: request.id, ok: true, value: {kind: 'done'}})
  }
}

parentPort!.on('message', (request: SearchRequest) => {
  handle(request).catch(async (error: unknown) => {
    // A data answer cut short here still holds its read transaction: it is ended before the
    // failure is reported, so the next job finds the connection free (summaries run on it
    // directly, past Kysely's queue).
    const open = stream
    stream = undefined
    await open?.return(undefined).catch(() => undefined)
    reply({id: request.id, ok: false, error: serializeError(error)})
  })
})
