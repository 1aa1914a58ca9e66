import type {Clock} from '../../src/lib/clock.js'
import {formatTable} from '../../src/lib/table.js'
import type {DeliveryView} from '../../src/interfaces/partner/outbox.js'
import {deliverNow, type WaitSummary} from '../../src/interfaces/partner/operator.js'
import type {DeliveryRow} from '../../src/interfaces/partner/tables.js'
import type {Db} from '../../src/store/database.js'

/** Human output of the B commands, and their `--wait`. */

/** The stderr line for a `--wait` that did not deliver everything. */
export function waitFailureLine(summary: WaitSummary): string {
  const first = summary.problems[0]
  const notDone = summary.pending + summary.failed
  return `${notDone} ${notDone === 1 ? 'delivery was' : 'deliveries were'} not delivered${first ? ` (first: ${first.method} ${first.path}: ${first.last_error ?? 'failed'})` : ''}; pending ones stay queued and the serve worker retries them`
}

export function deliveriesTable(rows: DeliveryView[]): string {
  if (rows.length === 0) return 'No deliveries.'
  return formatTable(rows, [
    {header: 'ID', get: (r) => r.id},
    {header: 'STATUS', get: (r) => r.status},
    {header: 'CLIENT', get: (r) => r.client_id},
    {header: 'REQUEST', get: (r) => `${r.method} ${r.path}`},
    {header: 'ATTEMPTS', get: (r) => r.attempts, align: 'right'},
    {header: 'NEXT ATTEMPT', get: (r) => r.next_attempt_at},
    {header: 'LAST ERROR', get: (r) => (r.last_error && r.last_error.length > 60 ? `${r.last_error.slice(0, 59)}…` : r.last_error)},
  ])
}

export function queuedLine(deliveries: string[], partners: string[]): string {
  if (partners.length === 0) return 'No partner clients receive this project, so nothing was queued.'
  return `Queued ${deliveries.length} ${deliveries.length === 1 ? 'delivery' : 'deliveries'} for ${partners.length} partner${partners.length === 1 ? '' : 's'} (${partners.join(', ')}).`
}

/**
 * Gives a person the run's request id, on stderr beside progress and errors, when it queued
 * something: each delivery carries it to the partner as X-Request-Id, and serve's worker logs it
 * with every attempt. --json output has it as `request_id` instead.
 */
export function sayRequestId(requestId: string, deliveries: string[], json: boolean): void {
  if (!json && deliveries.length > 0) process.stderr.write(`Request id: ${requestId} (each delivery carries it as X-Request-Id)\n`)
}

/**
 * Runs `--wait` when asked: delivers, reports on stderr, and marks the process as failed (exit 1)
 * when something of this change was not delivered. Returns the summary for the --json output.
 */
export async function waitIfAsked(
  wait: boolean,
  db: Db,
  clock: Clock,
  projectIds: string[],
  deliveryIds: string[],
  say: (text: string) => void,
  onAttempt?: (row: DeliveryRow, ok: boolean) => void,
): Promise<WaitSummary | null> {
  if (!wait) return null
  const summary = await deliverNow(db, clock, projectIds, deliveryIds, {onAttempt})
  say(`Delivered ${summary.delivered} of ${deliveryIds.length}${summary.superseded ? ` (${summary.superseded} superseded by newer pushes)` : ''}.`)
  if (summary.pending + summary.failed > 0) {
    process.stderr.write(`Error: ${waitFailureLine(summary)}\n`)
    process.exitCode = 1
  }
  return summary
}
