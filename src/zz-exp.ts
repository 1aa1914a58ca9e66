import type {Kysely} from 'kysely'
import type {GrantTables} from './grants/tables.js'
import type {RegistryTables} from './registry/tables.js'
import type {SignonTables} from './interfaces/signon/tables.js'
type Full = GrantTables & RegistryTables & SignonTables
function narrow<Full extends Sub, Sub>(db: Kysely<Full>): Kysely<Sub> {
  return db as unknown as Kysely<Sub>
}
declare const full: Kysely<Full>
declare const reg: Kysely<RegistryTables>
declare function f(db: Kysely<GrantTables>, x: number): void
f(narrow(full), 1)
// @ts-expect-error registry's tables are not grants'
f(narrow(reg), 1)
