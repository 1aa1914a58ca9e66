import type {Generated, Insertable, Kysely, Selectable} from 'kysely'
import type {GrantTables} from '../../grants/tables.js'
import type {RegistryTables} from '../../registry/tables.js'
import type {JsonColumn} from '../../store/json.js'
import type {Project, ProjectStatus, QuotaStatus} from './schema.js'

/**
 * medpanel's side of interface B: the source of truth (projects, quotas, member lists, events)
 * and the outbox of deliveries to partners. Resources are kept as their wire JSON (`body`) next
 * to the few columns the rules read, so what is pushed is exactly what was stored.
 */
export interface PartnerProjectTable {
  project_id: string
  status: ProjectStatus
  /** The project as pushed (its wire JSON). */
  body: JsonColumn<Project>
  /** The partner client ids that receive this project. */
  partner_ids: JsonColumn<string[]>
}

export interface PartnerQuotaTable {
  project_id: string
  quota_id: string
  status: QuotaStatus
  limit_count: number
  /** Complete events counted toward `limit`. */
  completes: number
  /** The quota as pushed, without the columns above (quotaBody). */
  body: JsonColumn<Record<string, unknown>>
}

export interface PartnerQuotaMemberTable {
  project_id: string
  quota_id: string
  npi: string
  /** Decimal text. */
  honoraria: string
  url: string
  position: number
}

export interface PartnerEventTable {
  id: Generated<number>
  project_id: string
  quota_id: string | null
  npi: string
  /** The state as the operator reported it. */
  reported_state: string
  /** The state pushed: a start on a closed quota goes out as quotafull. */
  state: string
  event_at: string
  created_at: string
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'superseded'
export type ResourceKind = 'project' | 'quota' | 'members' | 'member' | 'event'

/** One request to one partner. `seq` orders the outbox; `id` is sent as X-Medpanel-Delivery. */
export interface PartnerDeliveryTable {
  seq: Generated<number>
  id: string
  client_id: string
  project_id: string
  quota_id: string | null
  kind: ResourceKind
  method: string
  path: string
  status: DeliveryStatus
  attempts: number
  next_attempt_at: string
  first_attempt_at: string | null
  last_error: string | null
  last_status: number | null
  lease_owner: string | null
  lease_until: string | null
  created_at: string
  delivered_at: string | null
  updated_at: string
  /**
   * The request id of the CLI run or HTTP request that queued it: sent as X-Request-Id and logged
   * with each attempt. Null for rows an earlier release queued.
   */
  request_id: string | null
}

/**
 * Request bodies live apart from the outbox rows: a delivery's row is updated on every lease and
 * attempt, and keeping a 100 KB member chunk out of it means those updates never rewrite the chunk.
 */
export interface PartnerDeliveryBodyTable {
  seq: number
  body: string
}

export interface PartnerTables {
  partner_projects: PartnerProjectTable
  partner_quotas: PartnerQuotaTable
  partner_quota_members: PartnerQuotaMemberTable
  partner_events: PartnerEventTable
  partner_deliveries: PartnerDeliveryTable
  partner_delivery_bodies: PartnerDeliveryBodyTable
}

export type ProjectRow = Selectable<PartnerProjectTable>
export type QuotaRow = Selectable<PartnerQuotaTable>
export type QuotaMemberRow = Selectable<PartnerQuotaMemberTable>
export type EventRow = Selectable<PartnerEventTable>
export type DeliveryRow = Selectable<PartnerDeliveryTable>
export type NewDeliveryRow = Insertable<PartnerDeliveryTable>

/** What this layer's queries see: interface B's tables and those of the registry and grants below it. */
export type PartnerView = PartnerTables & RegistryTables & GrantTables
export type PartnerDb = Kysely<PartnerView>
