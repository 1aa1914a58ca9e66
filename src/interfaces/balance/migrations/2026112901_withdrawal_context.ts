import {type Kysely, sql} from 'kysely'
import {isPostgres} from '../../../store/dialect.js'

/**
 * PostgreSQL: everything a withdrawal decides on, locked and read in one call instead of five
 * round trips (interfaces/balance/repository.ts, withdrawalContext). In order, as the statements it
 * replaces: the Idempotency-Key's advisory lock, the account row (created if missing) locked for
 * update, the remembered answer for the key, the member's row locked for share, the withdrawal type
 * with whether the member is barred from it. Each statement of a PL/pgSQL function takes a fresh
 * snapshot under READ COMMITTED, so what is read after a lock is what committed before it, as with
 * separate statements. Amounts stay text (the columns are text), so nothing passes through a float.
 * SQLite runs the separate statements: its writes never wait on a network.
 *
 * medpanel_withdrawal_contexts does the same for a batch of withdrawals, in the order given (the
 * writer sorts them by member, so every batch takes its account locks in one order), and returns
 * the answers as one JSON array.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return
  await sql`
    create function medpanel_withdrawal_context(p_member integer, p_currency text, p_stamp text, p_client text, p_key text, p_type text)
    returns json language plpgsql volatile as $body$
    declare
      account balance_accounts;
      prior balance_idempotency;
      holder members;
      offered json;
    begin
      if p_key is not null then
        perform pg_advisory_xact_lock(hashtextextended('balance-idempotency:' || p_client || ':' || p_key, 0));
      end if;
      select * into account from balance_accounts a where a.member_id = p_member for update;
      if not found then
        insert into balance_accounts (member_id, currency, available_funds, preferred_status, created_at, updated_at)
          values (p_member, p_currency, '0', 0, p_stamp, p_stamp)
          on conflict (member_id) do nothing;
        select * into account from balance_accounts a where a.member_id = p_member for update;
      end if;
      if p_key is not null then
        select * into prior from balance_idempotency i where i.client_id = p_client and i.key = p_key;
        if found then
          return json_build_object('account', to_json(account), 'prior', to_json(prior));
        end if;
      end if;
      select * into holder from members m where m.id = p_member for share;
      if not found then
        return json_build_object('account', to_json(account));
      end if;
      select to_json(t) into offered from (
        select w.*, exists (select 1 from withdrawal_restrictions r where r.member_id = p_member and r.type = w.code)::int as restricted
        from withdrawal_types w where w.code = p_type and w.active = 1
      ) t;
      return json_build_object(
        'account', to_json(account),
        'holder', json_build_object('id', holder.id, 'active', holder.active, 'country', holder.country),
        'type', offered
      );
    end
    $body$
  `.execute(db)
  await sql`
    create function medpanel_withdrawal_contexts(asks json)
    returns json language plpgsql volatile as $body$
    declare
      ask json;
      answers json[] := '{}';
    begin
      for ask in select value from json_array_elements(asks) loop
        answers := array_append(answers, medpanel_withdrawal_context(
          (ask->>'member')::integer, ask->>'currency', ask->>'stamp', ask->>'client', ask->>'key', ask->>'type'));
      end loop;
      return array_to_json(answers);
    end
    $body$
  `.execute(db)
}
