import type {Clock} from '../src/lib/clock.js'
import {narrow} from '../src/store/database.js'
import {deliverNow, type WaitSummary} from '../src/interfaces/partner/operator.js'
import type {DeliveryRow} from '../src/interfaces/partner/tables.js'
import type {ServiceStore} from '../src/schema.js'
import {deliveredLine, requestIdLine, waitFailureLine} from './output/partner.js'

/*
 * What the interface B commands that queue deliveries share after queuing: the request id on
 * stderr and `--wait`. Behaviour lives here, with the commands; output/partner.ts only words it.
 */

/**
 * Gives a person the run's request id, on stderr beside progress and errors, when it queued
 * something: each delivery carries it to the partner as X-Request-Id, and serve's worker logs it
 * with every attempt. --json output has it as `request_id` instead.
 */
export function sayRequestId(requestId: string, deliveries: string[], json: boolean): void {
  if (!json && deliveries.length > 0) process.stderr.write(`${requestIdLine(requestId)}\n`)
}

/**
 * Runs `--wait` when asked: delivers, reports on stderr, and marks the process as failed (exit 1)
 * when something of this change was not delivered. Returns the summary for the --json output.
 */
export async function waitIfAsked(
  wait: boolean,
  store: ServiceStore,
  clock: Clock,
  projectIds: string[],
  deliveryIds: string[],
  say: (text: string) => void,
  onAttempt?: (row: DeliveryRow, ok: boolean) => void,
): Promise<WaitSummary | null> {
  if (!wait) return null
  const summary = await deliverNow({db: narrow(store.db), keys: store.keys}, clock, projectIds, deliveryIds, {onAttempt})
  say(deliveredLine(summary, deliveryIds.length))
  if (summary.pending + summary.failed > 0) {
    process.stderr.write(`Error: ${waitFailureLine(summary)}\n`)
    process.exitCode = 1
  }
  return summary
}
