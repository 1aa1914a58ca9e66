import pg from 'pg'

/*
 * PostgreSQL test databases used again instead of made and dropped per test. A test store's
 * database came from a migrated template (test/helpers/store.ts); making one and dropping it
 * cost the cluster two checkpoints and a cold catalog for every connection to it, which was most
 * of the PostgreSQL run's time in files of many short tests (a token test: 0.08 s on SQLite, 0.8 s
 * on PostgreSQL). Here a database a test closed is put back as the template left it and handed
 * to the next test of the same process.
 *
 * Each database this process made has a keeper: one session of its own, held open, that noted at
 * the start what the template put there (its rows, in temporary tables only that session sees,
 * its sequences' positions and its schema's fingerprint). When the test's store closes and no
 * other session is left on it, the keeper deletes every row, puts the template's rows back and
 * the sequences where they were, in one transaction. Anything it cannot vouch for — a schema the
 * test changed, a session still connected, a reset that fails — and the database is dropped as
 * before, never handed on.
 */

/** One query's text: every row noted, sequences' positions and the schema fingerprint, in the keeper's session. */
const NOTE = `
do $$
declare t record;
begin
  for t in select tablename from pg_tables where schemaname = 'public' loop
    execute format('create temp table %I as select * from public.%I', 'template_' || t.tablename, t.tablename);
  end loop;
end $$;
create temp table template_sequences as
  select sequencename, start_value, last_value from pg_sequences where schemaname = 'public';
create function pg_temp.reset_to_template() returns void language plpgsql as $$
declare t record;
begin
  -- Neither foreign keys nor the change-notifying triggers fire: the rows go back as they were.
  set local session_replication_role = replica;
  for t in select tablename from pg_tables where schemaname = 'public' loop
    execute format('delete from public.%I', t.tablename);
  end loop;
  -- The template's rows, each column but the generated ones (computed again from the rest).
  for t in
    select c.relname, string_agg(quote_ident(a.attname), ', ' order by a.attnum) as columns
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped and a.attgenerated = ''
    where n.nspname = 'public' and c.relkind = 'r'
    group by c.relname
  loop
    execute format('insert into public.%I (%s) overriding system value select %s from pg_temp.%I', t.relname, t.columns, t.columns, 'template_' || t.relname);
  end loop;
  for t in select * from pg_temp.template_sequences loop
    perform setval(format('public.%I', t.sequencename), coalesce(t.last_value, t.start_value), t.last_value is not null);
  end loop;
end $$;
`

/**
 * What a test could change that a row reset would not put back: the relations and their columns,
 * triggers, functions and schemas. Compared before each reset with what it was at the start.
 */
const FINGERPRINT = `
select md5(coalesce(string_agg(item, ',' order by item), '')) as fingerprint from (
  select 'rel:' || c.relname || ':' || c.relkind::text || ':' || coalesce((
      select string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull, ';' order by a.attnum)
      from pg_attribute a where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped), '') as item
    from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'public'
  union all
  select 'trigger:' || t.tgname || ':' || t.tgenabled::text from pg_trigger t join pg_class c on c.oid = t.tgrelid
    join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'public' and not t.tgisinternal
  union all
  select 'function:' || p.proname || ':' || md5(p.prosrc) from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = 'public'
  union all
  select 'schema:' || nspname from pg_namespace where nspname not like 'pg\\_%' and nspname <> 'information_schema'
) items`

interface Kept {
  url: string
  keeper: pg.Client
  fingerprint: string
}

/** Databases put back as the template left them, ready for the next test of this process. */
const spare: Kept[] = []
/** Databases handed to a test, by URL, until it gives them back. */
const lent = new Map<string, Kept>()

/**
 * A database as the template left it: a spare one, or one `make` creates (returning its URL),
 * then noted by a keeper session of its own.
 */
export async function borrowDatabase(make: () => Promise<string>): Promise<string> {
  const reused = spare.pop()
  if (reused) {
    lent.set(reused.url, reused)
    return reused.url
  }
  const url = await make()
  const keeper = new pg.Client({connectionString: url})
  await keeper.connect()
  // An idle keeper must not keep a finished test process alive, nor fail it if the cluster goes.
  keeper.on('error', () => undefined)
  await keeper.query(NOTE)
  const {rows} = await keeper.query<{fingerprint: string}>(FINGERPRINT)
  const kept = {url, keeper, fingerprint: rows[0]!.fingerprint}
  lent.set(url, kept)
  return url
}

/**
 * Takes back a database `borrowDatabase` lent, once its test closed every connection of its own:
 * reset and kept for the next test, or, where that cannot be vouched for, dropped by `drop`.
 */
export async function returnDatabase(url: string, drop: () => Promise<void>): Promise<void> {
  const kept = lent.get(url)
  lent.delete(url)
  if (!kept) return drop()
  let clean = false
  try {
    clean = (await othersGone(kept)) && (await kept.keeper.query<{fingerprint: string}>(FINGERPRINT)).rows[0]!.fingerprint === kept.fingerprint
    if (clean) await kept.keeper.query('select pg_temp.reset_to_template()')
  } catch {
    clean = false
  }
  if (clean) {
    spare.push(kept)
    return
  }
  await kept.keeper.end().catch(() => undefined)
  await drop()
}

/**
 * True once no session but the keeper is on the database. A closed pool's sessions end as their
 * sockets close, a moment after; a session that stays (a handle the test left open) means the
 * database is not the test's to give back.
 */
async function othersGone(kept: Kept): Promise<boolean> {
  for (let attempt = 0; attempt < 40; attempt++) {
    const {rows} = await kept.keeper.query<{n: number}>('select count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()')
    if (rows[0]!.n === 0) return true
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  return false
}
