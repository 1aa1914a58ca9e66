import type {Kysely} from 'kysely'

/**
 * The whole schema as Kysely sees it. The store knows no table: each layer and interface declares
 * its own in its folder's tables.ts, and the composition root above them all (src/schema.ts) adds
 * them to this interface, so code in any layer types its queries against the full schema without
 * importing a layer above its own.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled in by src/schema.ts (declaration merging)
export interface Database {}

/** A database handle or an open transaction: services accept either. */
export type Db = Kysely<Database>
