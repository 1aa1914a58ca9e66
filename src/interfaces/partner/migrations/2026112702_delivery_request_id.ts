import type {Kysely} from 'kysely'

/**
 * The request id of the CLI run or HTTP request that queued a delivery, sent with every attempt
 * as X-Request-Id and written in the delivery's log line, so one push can be followed from the
 * command to the partner's log. Rows queued by an earlier release have none.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('partner_deliveries').addColumn('request_id', 'text').execute()
}
