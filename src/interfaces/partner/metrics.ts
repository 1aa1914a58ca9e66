import type {Clock} from '../../lib/clock.js'
import {DELIVERY_OUTCOMES, defineMetrics} from '../../metrics/define.js'
import {listClients} from '../../registry/repository.js'
import {hasGrant} from '../../registry/service.js'
import type {PartnerDb as Db} from './tables.js'
import {narrow} from '../../store/database.js'
import {pendingByClient} from './repository.js'

/** Pending outbox rows of one partner client, for the outbox gauges. */
export interface OutboxBacklog {
  partner: string
  depth: number
  /** Seconds since the oldest pending row was queued; 0 when none is pending. */
  oldestAgeSeconds: number
}

/** Interface B's metrics: the outbox's backlog, read when scraped, and the delivery worker's attempts. */
export const partnerMetrics = defineMetrics('partner', (kit, {reader, clock}: {reader: Db; clock: Clock}) => {
  // Both outbox gauges come from one query per scrape: prom-client collects every metric at once.
  let outboxRead: Promise<OutboxBacklog[]> | undefined
  const outbox = () =>
    (outboxRead ??= outboxBacklog(reader, clock).finally(() => {
      outboxRead = undefined
    }))
  const gauges = {
    depth: {name: 'partner_outbox_depth', help: 'Deliveries waiting in the outbox, per partner client id'},
    oldestAgeSeconds: {name: 'partner_outbox_oldest_age_seconds', help: "Age of the oldest delivery waiting in a partner's outbox (0 when none waits)"},
  } as const
  for (const field of ['depth', 'oldestAgeSeconds'] as const) {
    kit.scraped({...gauges[field], labelNames: ['partner']}, async (gauge) => {
      const rows = await outbox()
      gauge.reset()
      for (const row of rows) gauge.set({partner: row.partner}, row[field])
    })
  }
  return {
    attempts: kit.children('partner_delivery_attempts_total', 'Delivery attempts of the outbox worker, by outcome', 'outcome', DELIVERY_OUTCOMES),
    retriesScheduled: kit.single('partner_retries_scheduled_total', 'Failed attempts after which the delivery was scheduled again (the others gave up)'),
  }
})

/** Every partner client's pending deliveries, those with none at 0 (so a drained outbox reads 0, not stale). */
async function outboxBacklog(reader: Db, clock: Clock): Promise<OutboxBacklog[]> {
  const [pending, clients] = await Promise.all([pendingByClient(reader), listClients(narrow(reader))])
  const now = clock.now().getTime()
  const byClient = new Map(pending.map((row) => [row.client_id, row]))
  const partners = new Set([...clients.filter((client) => hasGrant(client, 'partner')).map((client) => client.id), ...byClient.keys()])
  return [...partners].sort().map((partner) => {
    const row = byClient.get(partner)
    return {partner, depth: row?.depth ?? 0, oldestAgeSeconds: row ? Math.max(0, (now - Date.parse(row.oldest)) / 1000) : 0}
  })
}
