import type {Generated} from 'kysely'

/** The reference partner's own store: what it received, as received. */
export interface ReceivedProjectTable {
  project_id: string
  body: string
  updated_at: string
}

export interface ReceivedQuotaTable {
  project_id: string
  quota_id: string
  body: string
  updated_at: string
}

export interface ReceivedMemberTable {
  project_id: string
  quota_id: string
  npi: string
  body: string
  position: number
}

export interface ReceivedEventTable {
  id: Generated<number>
  project_id: string
  body: string
  delivery_id: string | null
  received_at: string
}

/** X-Medpanel-Delivery ids already applied, so a resent delivery is acknowledged, not applied twice. */
export interface SeenDeliveryTable {
  delivery_id: string
  received_at: string
}

/** Every write request as it arrived, in order, resends included. */
export interface ReceivedRequestTable {
  seq: Generated<number>
  method: string
  path: string
  delivery_id: string | null
  received_at: string
}

export interface ReceiverDatabase {
  received_requests: ReceivedRequestTable
  received_projects: ReceivedProjectTable
  received_quotas: ReceivedQuotaTable
  received_members: ReceivedMemberTable
  received_events: ReceivedEventTable
  seen_deliveries: SeenDeliveryTable
}
