import type {Generated, Kysely, Selectable} from 'kysely'
import type {JsonColumn} from '../store/json.js'

/**
 * One operator command that changed the store: who ran it (the OS user), when, what it changed
 * (a kind of target and its id) and the fields it set. A secret's value is never kept, only that
 * it changed (src/operator/audit.ts). Rows name their target by id without a foreign key, so the
 * record of a client or member outlives its removal.
 */
export interface OperatorAuditTable {
  id: Generated<number>
  /** When the change was committed, as ISO 8601 text (the command's clock). */
  at: string
  os_user: string
  /** The command as operators type it (update-client). */
  command: string
  /** What kind of thing changed: client, member, account, api_key, … (AUDIT_KINDS). */
  target_kind: string
  /** Its id: a client_id, a member's user_id, an API key's id, a project id, … */
  target: string
  /** The fields the command set, as JSON; secrets as "(changed)". */
  changes: JsonColumn<Record<string, unknown>>
}

export interface OperatorTables {
  operator_audit: OperatorAuditTable
}

/** What the operator layer's own queries see. */
export type OperatorView = OperatorTables
export type OperatorDb = Kysely<OperatorView>
export type OperatorAuditRow = Selectable<OperatorAuditTable>
