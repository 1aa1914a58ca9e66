import {formatRecord, formatTable} from '../../src/lib/table.js'
import type {ApiKeyListItem} from '../../src/interfaces/conversations/keys.js'
import type {ProjectDetail, ProjectListItem} from '../../src/interfaces/partner/projects.js'

/** Human output of the operator commands for API keys and partner projects. */

export function apiKeysTable(keys: ApiKeyListItem[]): string {
  return formatTable(keys, [
    {header: 'ID', get: (k) => k.id},
    {header: 'CLIENT', get: (k) => k.client_id},
    {header: 'STATUS', get: (k) => k.status},
    {header: 'ALLOWANCE', get: (k) => k.data_call_allowance, align: 'right'},
    {header: 'USED', get: (k) => k.data_calls_used, align: 'right'},
    {header: 'PERIOD', get: (k) => (k.renew_days === null ? `since ${k.period_started_at}, no renewal` : `${k.renew_days}d, renews ${k.renews_at}`)},
    {header: 'SUBSCRIPTION ENDS', get: (k) => k.subscription_ends_at ?? 'never'},
    {header: 'METHODS', get: (k) => k.methods.join(',')},
  ])
}

export function projectsTable(projects: ProjectListItem[]): string {
  return formatTable(projects, [
    {header: 'PROJECT ID', get: (p) => p.project_id},
    {header: 'STATUS', get: (p) => p.status},
    {header: 'QUOTAS', get: (p) => p.quotas, align: 'right'},
    {header: 'PARTNERS', get: (p) => p.partners.join(',')},
    {header: 'PENDING', get: (p) => p.pending, align: 'right'},
    {header: 'FAILED', get: (p) => p.failed, align: 'right'},
    {header: 'DELIVERED', get: (p) => p.delivered, align: 'right'},
    {header: 'LAST DELIVERED', get: (p) => p.last_delivered_at ?? 'never'},
    {header: 'NAME', get: (p) => p.name},
  ])
}

export function projectText(p: ProjectDetail): string {
  const head = formatRecord({
    project_id: p.project_id,
    name: typeof p.project.name === 'string' ? p.project.name : null,
    status: p.status,
    partners: p.partners.length ? p.partners.join(', ') : 'none',
    deliveries: `${p.deliveries.pending} pending, ${p.deliveries.failed} failed, ${p.deliveries.delivered} delivered, ${p.deliveries.superseded} superseded`,
    last_delivered_at: p.deliveries.last_delivered_at ?? 'never',
    last_delivery: p.last_delivery ? `${p.last_delivery.request} to ${p.last_delivery.client_id}: ${p.last_delivery.status} (${p.last_delivery.at})` : 'none',
  })
  const quotas = p.quotas.length
    ? formatTable(p.quotas, [
        {header: 'QUOTA ID', get: (q) => q.quota_id},
        {header: 'STATUS', get: (q) => q.status},
        {header: 'LIMIT', get: (q) => q.limit, align: 'right'},
        {header: 'COMPLETES', get: (q) => q.completes, align: 'right'},
        {header: 'MEMBERS', get: (q) => q.members, align: 'right'},
      ])
    : 'No quotas yet (push-quota adds one).'
  return `${head}\n\n${quotas}`
}
