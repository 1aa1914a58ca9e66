import {formatTable} from '../../src/lib/table.js'
import type {DeliveryView} from '../../src/interfaces/partner/outbox.js'
import type {WaitSummary} from '../../src/interfaces/partner/operator.js'

/** Human output of the B commands: text only (deliveries.ts runs `--wait` and writes these lines). */

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

/** The stderr line that gives a person the run's request id (see deliveries.ts sayRequestId). */
export function requestIdLine(requestId: string): string {
  return `Request id: ${requestId} (each delivery carries it as X-Request-Id)`
}

/** What `--wait` says once it has tried every delivery of the change. */
export function deliveredLine(summary: WaitSummary, queued: number): string {
  return `Delivered ${summary.delivered} of ${queued}${summary.superseded ? ` (${summary.superseded} superseded by newer pushes)` : ''}.`
}
