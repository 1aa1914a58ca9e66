import {sql, type Kysely} from 'kysely'
import {isPostgres} from '../dialect.js'

/*
 * PostgreSQL only (SQLite tells every connection of any commit by itself): triggers that notify
 * every process LISTENing on medpanel_cache, in the same transaction, when a row the caches hold
 * changes meaning, whoever writes it. Kept self-contained: the channel and the columns are spelled
 * out here, as they were when this shipped (store/postgres/listen.ts names the same ones).
 *
 * Updates notify only when a column a cache reads changed (not for a token's last_used_at, set on
 * every use, nor an API key's spent calls); deletes always; inserts never, since only rows that
 * were found are cached. Notifications with the same payload in one transaction are delivered
 * once, so revoking a thousand tokens sends one.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return
  await sql`
    create function medpanel_cache_changed() returns trigger language plpgsql as $$
    begin
      perform pg_notify('medpanel_cache', tg_table_name);
      return null;
    end
    $$`.execute(db)

  const tokenColumns = ['token_hash', 'client_id', 'member_id', 'code_hash', 'scopes', 'expires_at', 'revoked_at']
  const keyColumns = ['key_hash', 'client_id', 'methods', 'data_call_allowance', 'renew_days', 'subscription_ends_at', 'revoked_at']
  const changed = (columns: string[]) => sql.raw(`(${columns.map((c) => `old.${c}`).join(', ')}) is distinct from (${columns.map((c) => `new.${c}`).join(', ')})`)
  const triggers: [table: string, update: {columns?: string[]}][] = [
    ['access_tokens', {columns: tokenColumns}],
    ['clients', {}],
    ['members', {}],
    ['conversation_api_keys', {columns: keyColumns}],
  ]
  for (const [table, {columns}] of triggers) {
    const of = columns ? sql.raw(` of ${columns.join(', ')}`) : sql``
    const when = columns ? changed(columns) : sql`old.* is distinct from new.*`
    await sql`create trigger ${sql.raw(`${table}_cache_update`)} after update${of} on ${sql.table(table)}
      for each row when (${when}) execute function medpanel_cache_changed()`.execute(db)
    await sql`create trigger ${sql.raw(`${table}_cache_delete`)} after delete on ${sql.table(table)}
      for each row execute function medpanel_cache_changed()`.execute(db)
    await sql`create trigger ${sql.raw(`${table}_cache_truncate`)} after truncate on ${sql.table(table)}
      for each statement execute function medpanel_cache_changed()`.execute(db)
  }
}
