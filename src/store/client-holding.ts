import type {Kysely} from 'kysely'

/*
 * What one owner of tables keeps for a client (a row of the registry's `clients`), as remove-client
 * asks it. The store knows no table: each owner that keeps rows by client declares its holding
 * beside its own queries, typed against its own view, and src/operator/queries.ts lists them.
 */

/**
 * `count` answers how many rows of each kind the client has, under the words remove-client prints
 * (`Kind`, in the order it lists them); `release` removes them, inside remove-client's one
 * transaction, before the client's own row goes.
 */
export interface ClientHolding<View, Kind extends string = string> {
  count(db: Kysely<View>, clientId: string): Promise<Record<Kind, number>>
  release(trx: Kysely<View>, clientId: string): Promise<void>
}

/**
 * Any owner's holding, as the one list of them carries it: each is typed against its own view,
 * which src/schema.ts checks the whole schema holds (as StoreHandle carries the store past the
 * layers that cannot name every table).
 */
export type AnyClientHolding<Kind extends string = string> = ClientHolding<any, Kind>

/** A table whose rows each name a client. */
interface ByClient {
  client_id: string
}

/**
 * How many rows of `table` belong to the client, optionally only those whose columns hold one of
 * the given values (`{status: ['pending', 'failed']}`): the one count every holding takes.
 */
export async function countByClient<View extends Record<Table, ByClient>, Table extends keyof View & string>(
  db: Kysely<View>,
  table: Table,
  clientId: string,
  only: {[Column in keyof View[Table] & string]?: readonly View[Table][Column][]} = {},
): Promise<number> {
  // The table is known here only by its type; the signature above checked it has client_id.
  let query = (db as unknown as Kysely<Record<string, ByClient & Record<string, unknown>>>).selectFrom(table as string).where('client_id', '=', clientId)
  for (const [column, values] of Object.entries(only)) query = query.where(column, 'in', values as readonly unknown[])
  const row = await query.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow()
  return Number(row.n)
}

/** The kinds a holding counts (its `Kind`). */
export type HeldKind<Holding> = Holding extends ClientHolding<any, infer Kind> ? Kind : never
