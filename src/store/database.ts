import type {Kysely} from 'kysely'
import type {RegistryTables} from '../registry/tables.js'
import type {SignonTables} from '../interfaces/signon/tables.js'
import type {ConversationTables} from '../interfaces/conversations/tables.js'
import type {PartnerTables} from '../interfaces/partner/tables.js'
import type {BalanceTables} from '../interfaces/balance/tables.js'
import type {PulseTables} from '../interfaces/pulse/tables.js'

/**
 * The whole schema as Kysely sees it. Each interface declares its own tables in its folder's
 * tables.ts; this type joins them. Add a new interface's tables here and a migration in
 * migrations/index.ts.
 */
export interface Database extends RegistryTables, SignonTables, ConversationTables, PartnerTables, BalanceTables, PulseTables {}

/** A database handle or an open transaction: services accept either. */
export type Db = Kysely<Database>
