import {formatMoney} from '../../src/interfaces/balance/money.js'
import {formatRecord, formatTable} from '../../src/lib/table.js'
import type {StoreStatus} from '../../src/status.js'

/** Human output of `status`: the store at a glance, then the outbox and the API keys as tables. */
export function statusText(status: StoreStatus): string {
  const {store, schema} = status
  const record: Record<string, string | number | null> = {
    medpanel: status.medpanel_version,
    store: `${store.kind} ${store.location}`,
    size: store.file_bytes === undefined ? bytes(store.size_bytes) : `${bytes(store.size_bytes)} (file ${bytes(store.file_bytes)}, WAL ${bytes(store.wal_bytes ?? 0)})`,
    schema: schemaLine(schema),
    clients: status.clients,
    members: status.members,
    'balance accounts': status.balance?.accounts ?? null,
    'total balance': status.balance ? status.balance.totals.map((t) => formatMoney(t.available_funds, t.currency)).join(', ') || '0' : null,
    'outbox pending': status.outbox?.pending ?? null,
    'failed deliveries': status.outbox?.failed_deliveries ?? null,
    'active API keys': status.api_keys?.active ?? null,
    ...(status.replication ? {replication: replicationLine(status.replication)} : {}),
  }
  const parts = [formatRecord(record)]
  if (status.outbox && status.outbox.partners.length > 0) {
    parts.push(
      `Partner outbox (deliveries not yet delivered, per partner):\n${formatTable(status.outbox.partners, [
        {header: 'CLIENT', get: (p) => p.client_id},
        {header: 'NAME', get: (p) => p.name},
        {header: 'PENDING', get: (p) => p.pending, align: 'right'},
        {header: 'OLDEST PENDING', get: (p) => p.oldest_pending_at},
        {header: 'AGE', get: (p) => (p.oldest_pending_age_seconds === null ? null : age(p.oldest_pending_age_seconds)), align: 'right'},
        {header: 'FAILED', get: (p) => p.failed, align: 'right'},
      ])}`,
    )
  }
  if (status.api_keys) {
    const {near_allowance: near, near_allowance_percent: percent} = status.api_keys
    parts.push(
      near.length === 0
        ? `No API key has used ${percent}% or more of its data-call allowance.`
        : `API keys that have used ${percent}% or more of their data-call allowance:\n${formatTable(near, [
            {header: 'ID', get: (k) => k.id},
            {header: 'CLIENT', get: (k) => k.client_id},
            {header: 'USED', get: (k) => `${k.data_calls_used}/${k.data_call_allowance}`, align: 'right'},
            {header: '%', get: (k) => k.used_percent, align: 'right'},
            {header: 'RENEWS AT', get: (k) => k.renews_at ?? 'never'},
          ])}`,
    )
  }
  return parts.join('\n\n')
}

function replicationLine(r: NonNullable<StoreStatus['replication']>): string {
  const where = r.server ?? 'the server'
  if (!r.primary) return `${where} is a standby (in recovery), not the primary`
  const standbys = r.standbys.map((s) => `${s.name} ${s.state ?? '?'} ${s.sync_state ?? '?'}`).join(', ')
  const attached = r.synchronous_standby_attached ? 'a synchronous standby is attached' : 'NO synchronous standby: a commit is on this server alone'
  return `primary ${where}; ${attached}${standbys ? ` (${standbys})` : ''}; synchronous_commit=${r.synchronous_commit}`
}

function schemaLine(schema: StoreStatus['schema']): string {
  if (schema.unknown.length > 0) return `${schema.version}, written by a newer medpanel (this one knows up to ${schema.latest}; unknown: ${schema.unknown.join(', ')})`
  if (schema.pending.length === 0) return `${schema.version} (up to date)`
  const n = schema.pending.length
  return `${schema.version}, ${n} migration${n === 1 ? '' : 's'} pending: ${schema.pending.join(', ')} (serve or any other command applies ${n === 1 ? 'it' : 'them'} when it opens the store with write access)`
}

/** Bytes for people: 1,536 → "1.5 KiB". */
function bytes(n: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB']
  let value = n
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return unit === 0 ? `${n} bytes` : `${value.toFixed(1)} ${units[unit]}`
}

/** Seconds for people: "45s", "12m 5s", "3h 20m", "2d 4h". */
function age(seconds: number): string {
  if (seconds < 60) return `${seconds}s`
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ${seconds % 60}s`
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h ${Math.floor((seconds % 3600) / 60)}m`
  return `${Math.floor(seconds / 86_400)}d ${Math.floor((seconds % 86_400) / 3600)}h`
}
