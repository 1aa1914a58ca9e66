import type {Kysely} from 'kysely'
import type {BalanceTables, BalanceView} from './interfaces/balance/tables.js'
import {migrations as balance} from './interfaces/balance/migrations/index.js'
import type {ConversationTables, ConversationsView} from './interfaces/conversations/tables.js'
import {migrations as conversations} from './interfaces/conversations/migrations/index.js'
import type {PartnerTables, PartnerView} from './interfaces/partner/tables.js'
import {migrations as partner} from './interfaces/partner/migrations/index.js'
import type {PulseTables, PulseView} from './interfaces/pulse/tables.js'
import {migrations as pulse} from './interfaces/pulse/migrations/index.js'
import type {SignonTables, SignonView} from './interfaces/signon/tables.js'
import {migrations as signon} from './interfaces/signon/migrations/index.js'
import {migrations as grants} from './grants/migrations/index.js'
import type {GrantTables, GrantsView} from './grants/tables.js'
import type {OperatorTables, OperatorView} from './operator/tables.js'
import {migrations as operator} from './operator/migrations/index.js'
import type {RegistryTables, RegistryView} from './registry/tables.js'
import {migrations as registry} from './registry/migrations/index.js'
import {openStore as openStoreWith, type Store, type StoreOptions} from './store/db.js'
import type {StoreParts} from './store/database.js'
import type {AnyMigration} from './store/migration-types.js'
import type {Schema} from './store/migrate.js'
import {migrations as store} from './store/migrations/index.js'

/*
 * The composition root of medpanel's schema. It sits above the store and every interface: each
 * layer and interface owns its tables (tables.ts) and its migrations (migrations/), and this
 * module joins them, so the store never imports the code that uses it. A new interface adds its
 * tables to Database and its migrations to SERVICE_SCHEMA here.
 */

/** The whole schema: every owner's tables, composed here and nowhere else. */
export type Database = RegistryTables & GrantTables & SignonTables & ConversationTables & PartnerTables & BalanceTables & PulseTables & OperatorTables
/** A handle on the whole schema (the app layer and the commands); lower layers narrow it (store/database.ts). */
export type Db = Kysely<Database>
/** A store opened on the whole schema (openStore below). */
/** What a service is handed of medpanel's open store (StoreParts): its connection, reader and keys. */
export type ServiceStore = StoreParts<Db>

/*
 * Each layer's and interface's view (its own tables and the layers' below) must be part of the
 * whole schema with the same columns: the app hands every interface this store as its view. Grants
 * also names the registry columns its token lookup reads (TokenOwnerTables); this checks that the
 * registry's tables have them.
 */
type Holds<View> = Database extends View ? true : false
type AllTrue<T extends true[]> = T
export type ViewsHeld = AllTrue<
  [Holds<GrantsView>, Holds<RegistryView>, Holds<SignonView>, Holds<PulseView>, Holds<PartnerView>, Holds<BalanceView>, Holds<ConversationsView>, Holds<OperatorView>]
>

/**
 * Joins the owners' migrations into one list. They run in the order of their names (a timestamp,
 * then a name), whoever owns them, exactly as when they were one list: a store an earlier release
 * wrote records the same names. Two owners claiming one name is a mistake caught at start.
 */
export function composeMigrations(...owners: Record<string, AnyMigration>[]): Record<string, AnyMigration> {
  const all: Record<string, AnyMigration> = {}
  for (const owned of owners) {
    for (const [name, migration] of Object.entries(owned)) {
      if (name in all) throw new Error(`two migrations are named ${name}`)
      all[name] = migration
    }
  }
  return Object.fromEntries(Object.entries(all).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
}

/** medpanel's own schema: every layer's and interface's migrations, recorded in `kysely_migration`. */
export const SERVICE_SCHEMA: Schema = {
  migrations: composeMigrations(store, registry, grants, signon, partner, balance, pulse, conversations, operator),
  notifiesChanges: true,
}

/** Opens (and migrates) a store with medpanel's own schema. */
export function openStore(options: StoreOptions = {}): Promise<Store<Database>> {
  return openStoreWith<Database>(options, SERVICE_SCHEMA)
}
