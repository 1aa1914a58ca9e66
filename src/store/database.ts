import type {Kysely} from 'kysely'
import type {Keyring} from './secrets.js'

/*
 * The store knows no table. Each layer and interface declares the tables it owns in its folder's
 * tables.ts, and types its queries against what it may see: its own tables and those of the layers
 * below it (e.g. `Kysely<RegistryTables & GrantTables>`). The whole schema is composed once, at the
 * top (src/schema.ts), from those declarations.
 */

/**
 * The same handle, typed against fewer tables: what a caller hands a layer below it, which sees
 * only its own tables and those below. Kysely<DB> is invariant in DB (its transactions call back
 * with Kysely<DB>), so a handle on more tables is not assignable to one on fewer; this is the one
 * place that says it may be. The constraint checks it: every table the narrower type names must be
 * in the wider one with the same columns. Nothing happens at run time (the same object returns).
 * The narrower type is usually inferred from where the result goes: `revokeTokens(narrow(db), …)`.
 */
export function narrow<Wide extends Narrow, Narrow>(db: Kysely<Wide>): Kysely<Narrow> {
  return db as unknown as Kysely<Narrow>
}

/**
 * A store handle as the app's dependencies carry it past the layers that cannot name every table
 * (src/deps.ts): each interface types it against its own tables where it takes it, and the
 * composition root (src/schema.ts) checks that the composed schema holds every interface's tables.
 */
export type StoreHandle = Kysely<any>

/**
 * What a service is handed of an open store: its connection, where its plain reads go, its keys.
 * The composition root (src/compose.ts, a command's store helper, a test) opens the store and
 * hands these down; nothing below it looks them up from a connection.
 */
export interface StoreParts<Handle extends Kysely<any> = Kysely<any>> {
  db: Handle
  /** Where plain reads go (Store.reader). */
  reader: Handle
  readonly keys: Keyring
}

/** The same parts, their handles typed against fewer tables (as `narrow` does for one handle). */
export function narrowParts<Wide extends Narrow, Narrow>(store: StoreParts<Kysely<Wide>>): StoreParts<Kysely<Narrow>> {
  return store as unknown as StoreParts<Kysely<Narrow>>
}
