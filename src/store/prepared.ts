import type {CompiledQuery, Compilable, Kysely} from 'kysely'
import {contextOf} from './context.js'
import {storeKind, type StoreKind} from './dialect.js'
import {inBatch} from './writer.js'
import {registerStatement} from './postgres/statements.js'

/** Stands in for the i-th argument while a prepared query is built. */
class Slot {
  constructor(readonly index: number) {}
}

/**
 * A query that hot paths run many times a second, built with Kysely once per kind of store and
 * compiled; each call then only puts its arguments in. Building and compiling a query costs about
 * as much as SQLite takes to run a point read, so this roughly halves the cost of such a read.
 *
 * `build` must pass each argument straight into the query as a value (a `where` operand, an
 * inserted or updated value) and decide nothing from it: it runs once, with placeholders. The
 * first call checks that every argument landed in the statement exactly where a value goes.
 *
 * Inside a batch of the group writer on SQLite, the statement runs straight on the batch's
 * connection (see StoreContext.direct): the batch holds that connection, so Kysely's queue in
 * front of it has nothing to order, and skipping it saves about as much as the statement costs.
 * On PostgreSQL the compiled text is registered as a named statement, which each connection
 * parses and plans once (postgres/statements.ts).
 */
export function prepared<A extends unknown[], R>(arity: A['length'], build: (db: Kysely<any>, ...args: A) => Compilable<R>): (db: Kysely<any>, ...args: A) => Promise<R[]> {
  const compiled = new Map<StoreKind, {query: CompiledQuery<R>; slots: (number | undefined)[]}>()
  return async (db, ...args) => {
    const kind = storeKind(db)
    let entry = compiled.get(kind)
    if (!entry) {
      const placeholders = Array.from({length: arity}, (_, i) => new Slot(i)) as unknown as A
      const query = build(db, ...placeholders).compile()
      const slots = query.parameters.map((p) => (p instanceof Slot ? p.index : undefined))
      const used = new Set(slots.filter((s) => s !== undefined))
      if (used.size !== arity) throw new Error(`a prepared query uses ${used.size} of its ${arity} arguments: ${query.sql}`)
      entry = {query, slots}
      compiled.set(kind, entry)
      // PostgreSQL: sent as a named statement from now on (postgres/statements.ts).
      if (kind === 'postgres') registerStatement(query.sql)
    }
    const {query, slots} = entry
    const parameters = query.parameters.map((p, i) => {
      const slot = slots[i]
      return slot === undefined ? p : args[slot]
    })
    const direct = inBatch(db) ? contextOf(db)?.direct : undefined
    if (direct) return direct(query.sql, parameters) as R[]
    return (await db.executeQuery<R>({...query, parameters})).rows
  }
}
