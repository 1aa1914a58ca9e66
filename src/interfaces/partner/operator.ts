import type {Keyring} from '../../store/secrets.js'
import {AppError} from '../../errors.js'
import type {Clock} from '../../lib/clock.js'
import type {PartnerDb as Db} from './tables.js'
import * as repo from './repository.js'
import type {DeliveryRow} from './tables.js'
import {partnerTransport, type Transport} from '../../http/outbound.js'
import {DeliveryWorker} from './worker.js'

/** What the B commands share besides output: reading member lists, and sending now for `--wait`. */

export interface MemberFile {
  members: unknown[]
  /** Names a member by where it sits in the file. */
  label: (index: number) => string
}

/**
 * A member list from CSV text with a header row naming npi, honoraria and url (columns in any
 * order; other columns are an error). `file` names it in errors and labels.
 */
export async function membersFromCsv(file: string, text: string): Promise<MemberFile> {
  const {parse: parseCsv} = await import('csv-parse/sync')
  let rows: Record<string, string>[]
  try {
    rows = parseCsv(text, {columns: (header: string[]) => header.map((h) => h.trim().toLowerCase()), skip_empty_lines: true, trim: true, bom: true}) as Record<string, string>[]
  } catch (error) {
    throw new AppError('bad_request', `--file: ${file} is not valid CSV (${(error as Error).message})`)
  }
  const first = rows[0]
  if (first) {
    for (const column of Object.keys(first)) {
      if (!['npi', 'honoraria', 'url'].includes(column))
        throw new AppError('bad_request', `--file: ${file} has an unexpected CSV column "${column}" (expected npi, honoraria, url)`)
    }
  }
  // Header is line 1, so row i is on line i + 2 when no blank lines intervene.
  return {members: rows, label: (i) => `${file} row ${i + 1}`}
}

/** A member list from a JSON document: an array, or `{"members": [...]}`. */
export function membersFromJson(file: string, data: unknown): MemberFile {
  const members = Array.isArray(data)
    ? data
    : data && typeof data === 'object' && Array.isArray((data as {members?: unknown}).members)
      ? (data as {members: unknown[]}).members
      : undefined
  if (!members) throw new AppError('bad_request', `--file: ${file} must hold an array of quota members (or {"members": [...]})`)
  return {members, label: (i) => `members[${i}]`}
}

export interface WaitSummary {
  delivered: number
  pending: number
  failed: number
  superseded: number
  /** Wall time of the sending, in seconds. */
  seconds: number
  problems: {id: string; method: string; path: string; client_id: string; last_error: string | null}[]
}

/**
 * `--wait`: sends every pending delivery of the projects now, in order, one attempt each, from
 * this process; then reports how the deliveries of this change ended.
 */
export async function deliverNow(
  {db, keys}: {db: Db; keys: Keyring},
  clock: Clock,
  projectIds: string[],
  deliveryIds: string[],
  options: {transport?: Transport; onAttempt?: (row: DeliveryRow, ok: boolean) => void} = {},
): Promise<WaitSummary> {
  const worker = new DeliveryWorker({db, keys, clock, transport: options.transport ?? partnerTransport, onAttempt: options.onAttempt})
  const started = performance.now()
  await worker.drain({projectIds, now: true})
  const seconds = Number(((performance.now() - started) / 1000).toFixed(3))
  const rows = await repo.listDeliveries(db, {ids: deliveryIds})
  const summary: WaitSummary = {delivered: 0, pending: 0, failed: 0, superseded: 0, seconds, problems: []}
  for (const row of rows) {
    summary[row.status]++
    if (row.status === 'pending' || row.status === 'failed') {
      summary.problems.push({
        id: row.id,
        method: row.method,
        path: row.path,
        client_id: row.client_id,
        last_error: row.last_error ?? (row.status === 'pending' ? 'waiting for an earlier delivery of the project' : null),
      })
    }
  }
  return summary
}
