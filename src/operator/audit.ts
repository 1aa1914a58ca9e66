import {userInfo} from 'node:os'
import {toJson} from '../lib/exact-json.js'
import type {Page, PageAsk} from '../lib/page.js'
import {narrow, type StoreParts} from '../store/database.js'
import type {JsonText} from '../store/json.js'
import {writeTransaction} from '../store/transactions.js'
import type {OperatorAuditRow, OperatorDb} from './tables.js'

/*
 * The operators' audit trail: every command that changes the store records who ran it, when, its
 * target and the fields it set, in the same write transaction as the change (audited), so the
 * change and its record commit together or not at all. A secret's value never reaches the table:
 * the commands write SECRET_CHANGED in its place, and withoutSecrets replaces whatever a field
 * named like a secret holds before the row is written.
 */

/** What a change is made to, as list-audit --kind names it. */
export const AUDIT_KINDS = ['client', 'member', 'account', 'api_key', 'signing_keys', 'store_key', 'project', 'deliveries', 'pulses', 'posts', 'store'] as const
export type AuditKind = (typeof AUDIT_KINDS)[number]

/** What the trail holds in place of a secret that was set, replaced or issued. */
export const SECRET_CHANGED = '(changed)'

/** What one command changed: its target and the fields it set (what the command knows). */
export interface AuditNote {
  kind: AuditKind
  /** The target's id: a client_id, a member's user_id, an API key's id (never the key), … */
  target: string | number
  changes: Record<string, unknown>
}

/** Who made a change and when: what the command run knows of itself. */
export interface AuditRun {
  command: string
  os_user: string
  at: Date
}

/** One row of the trail, as list-audit shows it. */
export interface AuditView {
  id: number
  at: string
  os_user: string
  command: string
  target_kind: string
  target: string
  changes: Record<string, unknown>
}

/**
 * The user this process runs as. A uid with no passwd entry (systemd's DynamicUser, a container
 * run with a numeric user) has no name, and os.userInfo() throws for it: it is then `uid:N`.
 * Never throws: a change is not refused for want of a name to record.
 */
export function osUser(): string {
  try {
    const {username} = userInfo()
    if (username) return username
  } catch {
    // No passwd entry for this uid: named by the number below.
  }
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined
  return uid === undefined ? 'unknown' : `uid:${uid}`
}

/** A field that holds a credential when it has a value: passwords, secrets, tokens, keys and their hashes. */
const SECRET_FIELD = /(^|_)(password|secret|token|key|hash)$/i

/**
 * `changes` with every field named like a secret replaced by SECRET_CHANGED, at any depth. A field
 * that is null, false or absent stays so: a secret removed (a partner password cleared) is no secret.
 * Values with a JSON form of their own (money's Decimal) are kept whole for the writer.
 */
export function withoutSecrets(value: unknown, field = ''): unknown {
  if (SECRET_FIELD.test(field)) return value === null || value === undefined || value === false ? value : SECRET_CHANGED
  if (Array.isArray(value)) return value.map((item) => withoutSecrets(item))
  if (value === null || typeof value !== 'object') return value
  if (typeof (value as {toJSON?: unknown}).toJSON === 'function') return value
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, withoutSecrets(inner, key)]))
}

/**
 * Writes one row of the trail, secrets taken out, on `db` (the change's own transaction). Money
 * is written as a JSON number from its exact text, as every --json output writes it.
 */
export async function recordAudit(db: OperatorDb, run: AuditRun, note: AuditNote): Promise<void> {
  await db
    .insertInto('operator_audit')
    .values({
      at: run.at.toISOString(),
      os_user: run.os_user,
      command: run.command,
      target_kind: note.kind,
      target: String(note.target),
      changes: toJson(withoutSecrets(note.changes)) as JsonText<Record<string, unknown>>,
    })
    .execute()
}

/**
 * Runs an operator's change and records it in one write transaction: `change` gets the store with
 * that transaction as both its connection and its reader (its own write transactions become
 * savepoints inside it), and `note` says what it changed from its result. If either throws,
 * neither the change nor its record is kept. `run` is asked once the change is made, so the
 * record's time is when the change was made, not when the command started.
 */
export function audited<R>(store: StoreParts, run: () => AuditRun, change: (store: StoreParts) => Promise<R>, note: (result: R) => AuditNote): Promise<R> {
  return writeTransaction(store.db, async (trx) => {
    const inside: StoreParts = {
      db: trx,
      reader: trx,
      get keys() {
        return store.keys
      },
    }
    const result = await change(inside)
    await recordAudit(narrow(trx), run(), note(result))
    return result
  })
}

/** What list-audit narrows the trail to; `since` is inclusive, `until` exclusive, both ISO 8601 instants. */
export interface AuditAsk extends PageAsk {
  target?: string
  kind?: string
  command?: string
  user?: string
  since?: string
  until?: string
}

/** A page of the trail, newest first. */
export async function pageAudit(db: OperatorDb, ask: AuditAsk): Promise<Page<AuditView>> {
  let query = db.selectFrom('operator_audit')
  if (ask.target !== undefined) query = query.where('target', '=', ask.target)
  if (ask.kind !== undefined) query = query.where('target_kind', '=', ask.kind)
  if (ask.command !== undefined) query = query.where('command', '=', ask.command)
  if (ask.user !== undefined) query = query.where('os_user', '=', ask.user)
  if (ask.since !== undefined) query = query.where('at', '>=', ask.since)
  if (ask.until !== undefined) query = query.where('at', '<', ask.until)
  const [rows, count] = await Promise.all([
    query.selectAll().orderBy('id', 'desc').limit(ask.limit).offset(ask.offset).execute(),
    query.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow(),
  ])
  return {rows: rows.map(auditView), total: Number(count.n)}
}

function auditView(row: OperatorAuditRow): AuditView {
  return {
    id: Number(row.id),
    at: row.at,
    os_user: row.os_user,
    command: row.command,
    target_kind: row.target_kind,
    target: row.target,
    changes: parseChanges(row.changes),
  }
}

/**
 * A row's fields; text that is not a JSON object (written by hand, say) is shown as it is. An
 * amount comes back as a JavaScript number, which prints as the exact text stored: the ledger takes
 * amounts up to 1,000,000,000 in the currency's decimals, fewer than the 15 significant digits a
 * double keeps exactly.
 */
function parseChanges(text: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text) as unknown
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {value}
  } catch {
    return {text}
  }
}
