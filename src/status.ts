import {statSync} from 'node:fs'
import {sql} from 'kysely'
import {Money} from './interfaces/balance/money.js'
import {apiKeyView} from './interfaces/conversations/keys.js'
import type {Decimal} from 'decimal.js'
import type {Grant} from './grants/names.js'
import type {Db} from './schema.js'
import {storeFile} from './store/handle.js'
import {readTransaction} from './store/transactions.js'
import {storeKind, tableExists, type StoreKind} from './store/dialect.js'
import {fromJsonText, stringList} from './store/json.js'
import {migrationStatus, type MigrationStatus} from './store/migrate.js'
import {SERVICE_SCHEMA} from './schema.js'
import {MEDPANEL_VERSION} from './version.js'
import {iso} from './lib/clock.js'

/**
 * What `medpanel status` reports: one read-only look at a store, whatever release wrote it. Every
 * query runs in one read transaction (one snapshot; on PostgreSQL a READ ONLY one), nothing is
 * migrated, and a part whose tables the store does not have yet (an empty database) is null.
 */

/** An API key is "near" its allowance once it has used this share of its data calls. */
export const NEAR_ALLOWANCE = 0.8

export interface StoreSize {
  /** The bytes the store takes: SQLite's file and its WAL; PostgreSQL's pg_database_size. */
  size_bytes: number
  /** SQLite only: the database file alone. */
  file_bytes?: number
  /** SQLite only: its write-ahead log (0 when there is none). */
  wal_bytes?: number
}

export interface PartnerOutbox {
  client_id: string
  /** The client's name; null for deliveries of a client no longer registered. */
  name: string | null
  /** Deliveries waiting to be sent (or being sent now): the outbox depth. */
  pending: number
  /** Deliveries given up on after the retry schedule (list-deliveries --status failed, retry-deliveries). */
  failed: number
  /** When the oldest pending delivery was queued; null when none is pending. */
  oldest_pending_at: string | null
  oldest_pending_age_seconds: number | null
}

export interface KeyNearAllowance {
  id: string
  client_id: string
  data_call_allowance: number
  data_calls_used: number
  data_calls_remaining: number
  /** Share of the allowance used in the current period, in percent, rounded down to 0.1. */
  used_percent: number
  /** When the allowance is restored in full; null when it never renews. */
  renews_at: string | null
}

/** A standby streaming from the server (pg_stat_replication). */
export interface Standby {
  /** Its application_name (pg_auto_failover's: pgautofailover_standby_<node id>). */
  name: string
  /** Where it connects from; null when the role may not see it (pg_read_all_stats). */
  address: string | null
  /** streaming, catchup, …; null when the role may not see it. */
  state: string | null
  /** sync or quorum: a commit waits for it (synchronous_standby_names); async: it does not. */
  sync_state: string | null
}

/** PostgreSQL: the server the store writes to, and the standbys replicating from it. */
export interface Replication {
  /** host:port of the server this command reached (the primary with target_session_attrs=read-write). */
  server: string | null
  /** That server is the primary (not in recovery); false on a standby. */
  primary: boolean
  /** Its synchronous_commit and synchronous_standby_names. */
  synchronous_commit: string
  synchronous_standby_names: string
  standbys: Standby[]
  /** A standby is streaming and a commit waits for it: a commit acknowledged is on two servers. */
  synchronous_standby_attached: boolean
}

export interface StoreStatus {
  medpanel_version: string
  store: {kind: StoreKind; location: string} & StoreSize
  schema: MigrationStatus
  clients: number | null
  members: number | null
  balance: {accounts: number; totals: {currency: string; available_funds: Decimal}[]} | null
  outbox: {partners: PartnerOutbox[]; pending: number; failed_deliveries: number} | null
  api_keys: {
    /** Keys that can make data calls now: not revoked, subscription running, methods include data. */
    active: number
    near_allowance_percent: number
    near_allowance: KeyNearAllowance[]
  } | null
  /** PostgreSQL only: which server is the primary and whether a synchronous standby is attached. */
  replication?: Replication
  taken_at: string
}

/** Accounts read per query while adding up the balances. */
const ACCOUNT_PAGE = 5000

export async function storeStatus(db: Db, now: Date, location: string): Promise<StoreStatus> {
  const kind = storeKind(db)
  return readTransaction(db, async (trx) => {
    const has = async (table: string) => tableExists(trx, table)
    return {
      medpanel_version: MEDPANEL_VERSION,
      store: {kind, location, ...(await storeSize(trx, kind, storeFile(db)))},
      schema: await migrationStatus(trx, SERVICE_SCHEMA),
      clients: (await has('clients')) ? await count(trx, 'clients') : null,
      members: (await has('members')) ? await count(trx, 'members') : null,
      balance: (await has('balance_accounts')) ? await balances(trx) : null,
      outbox: (await has('partner_deliveries')) && (await has('clients')) ? await outbox(trx, now) : null,
      api_keys: (await has('conversation_api_keys')) ? await apiKeys(trx, now) : null,
      ...(kind === 'postgres' ? {replication: await replication(trx)} : {}),
      taken_at: iso(now),
    }
  })
}

/** The server's role and its standbys, as pg_stat_replication shows them to this role. */
export async function replication(db: Db): Promise<Replication> {
  const {rows} = await sql<{address: string | null; port: number | null; recovery: boolean; commit: string; names: string}>`
    select host(inet_server_addr()) as address, inet_server_port() as port, pg_is_in_recovery() as recovery,
      current_setting('synchronous_commit') as commit, current_setting('synchronous_standby_names') as names`.execute(db)
  const server = rows[0]!
  const {rows: standbys} = await sql<Standby>`
    select application_name as name, host(client_addr) as address, state, sync_state from pg_stat_replication order by application_name`.execute(db)
  return {
    server: server.address === null ? null : `${server.address}:${server.port}`,
    primary: !server.recovery,
    synchronous_commit: server.commit,
    synchronous_standby_names: server.names,
    standbys,
    synchronous_standby_attached:
      !server.recovery &&
      !['off', 'local'].includes(server.commit) &&
      standbys.some((standby) => standby.state === 'streaming' && (standby.sync_state === 'sync' || standby.sync_state === 'quorum')),
  }
}

async function count(db: Db, table: 'clients' | 'members'): Promise<number> {
  const row = await db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirst()
  return Number(row?.n ?? 0)
}

async function storeSize(db: Db, kind: StoreKind, file: string | undefined): Promise<StoreSize> {
  if (kind === 'postgres') {
    const {rows} = await sql<{n: number | bigint}>`select pg_database_size(current_database()) as n`.execute(db)
    return {size_bytes: Number(rows[0]?.n ?? 0)}
  }
  if (file === undefined) return {size_bytes: 0, file_bytes: 0, wal_bytes: 0}
  const bytes = (path: string) => {
    try {
      return statSync(path).size
    } catch {
      return 0
    }
  }
  const [fileBytes, walBytes] = [bytes(file), bytes(`${file}-wal`)]
  return {size_bytes: fileBytes + walBytes, file_bytes: fileBytes, wal_bytes: walBytes}
}

/**
 * Accounts and the sum of their available funds per currency, added up exactly (decimal.js, as
 * the ledger does): the amounts are decimal text, which neither SQLite's sum() nor a float keeps.
 * Read a page at a time, so a store of a million accounts is never held in memory at once.
 */
async function balances(db: Db): Promise<NonNullable<StoreStatus['balance']>> {
  const totals = new Map<string, Decimal>()
  let accounts = 0
  let after = -1
  for (;;) {
    const page = await db
      .selectFrom('balance_accounts')
      .select(['member_id', 'currency', 'available_funds'])
      .where('member_id', '>', after)
      .orderBy('member_id')
      .limit(ACCOUNT_PAGE)
      .execute()
    for (const row of page) {
      totals.set(row.currency, (totals.get(row.currency) ?? new Money(0)).plus(new Money(row.available_funds)))
    }
    accounts += page.length
    if (page.length < ACCOUNT_PAGE) break
    after = page.at(-1)!.member_id
  }
  return {accounts, totals: [...totals].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([currency, available_funds]) => ({currency, available_funds}))}
}

/** Pending and failed deliveries per partner: every client holding the partner grant, and any other client that still has some. */
async function outbox(db: Db, now: Date): Promise<NonNullable<StoreStatus['outbox']>> {
  const rows = await db
    .selectFrom('partner_deliveries')
    .select((eb) => ['client_id', 'status', eb.fn.countAll<number>().as('n'), eb.fn.min('created_at').as('oldest')])
    .where('status', 'in', ['pending', 'failed'])
    .groupBy(['client_id', 'status'])
    .execute()
  const clients = await db.selectFrom('clients').select(['id', 'name', 'grants']).orderBy('id').execute()
  const names = new Map(clients.map((c) => [c.id, c.name]))
  const partners = new Map<string, PartnerOutbox>()
  const entry = (clientId: string) => {
    let found = partners.get(clientId)
    if (!found) {
      found = {client_id: clientId, name: names.get(clientId) ?? null, pending: 0, failed: 0, oldest_pending_at: null, oldest_pending_age_seconds: null}
      partners.set(clientId, found)
    }
    return found
  }
  for (const client of clients) {
    // Any grant names, so a store a newer release wrote (with grants this one does not know) still reads.
    if (fromJsonText(client.grants, stringList(), `clients.grants of ${client.id}`).includes('partner' satisfies Grant)) entry(client.id)
  }
  for (const row of rows) {
    const partner = entry(row.client_id)
    if (row.status === 'failed') partner.failed = Number(row.n)
    else {
      partner.pending = Number(row.n)
      partner.oldest_pending_at = row.oldest
      partner.oldest_pending_age_seconds = Math.max(0, Math.floor((now.getTime() - new Date(row.oldest).getTime()) / 1000))
    }
  }
  const list = [...partners.values()].sort((a, b) => (a.client_id < b.client_id ? -1 : a.client_id > b.client_id ? 1 : 0))
  return {
    partners: list,
    pending: list.reduce((sum, p) => sum + p.pending, 0),
    failed_deliveries: list.reduce((sum, p) => sum + p.failed, 0),
  }
}

/** Keys that can make data calls now, and those of them at NEAR_ALLOWANCE or more of their allowance. */
async function apiKeys(db: Db, now: Date): Promise<NonNullable<StoreStatus['api_keys']>> {
  const rows = await db.selectFrom('conversation_api_keys').selectAll().where('revoked_at', 'is', null).orderBy('id').execute()
  let active = 0
  const near: KeyNearAllowance[] = []
  for (const row of rows) {
    const view = apiKeyView(row, now)
    if (!view.methods.includes('data') || (view.subscription_ends_at !== null && now.getTime() >= new Date(view.subscription_ends_at).getTime())) continue
    active++
    const used = view.data_call_allowance - view.data_calls_remaining
    if (used < NEAR_ALLOWANCE * view.data_call_allowance) continue
    near.push({
      id: view.id,
      client_id: view.client_id,
      data_call_allowance: view.data_call_allowance,
      data_calls_used: used,
      data_calls_remaining: view.data_calls_remaining,
      used_percent: view.data_call_allowance === 0 ? 100 : Math.floor((used * 1000) / view.data_call_allowance) / 10,
      renews_at: view.renews_at,
    })
  }
  return {active, near_allowance_percent: NEAR_ALLOWANCE * 100, near_allowance: near}
}
