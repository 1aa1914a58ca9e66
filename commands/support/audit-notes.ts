import type {AuditNote} from '../../src/operator/audit.js'
import type {TransactionView} from '../../src/interfaces/balance/service.js'
import type {DemoInfo} from '../../src/demo.js'

/*
 * What the commands that write to a balance account record in the audit trail: the account by its
 * member's user_id, and the transaction by its id, type, amount and status.
 */

/** The record of a ledger transaction an operator posted or moved on a member's account. */
export function ledgerNote(memberId: number, tx: TransactionView, more: Record<string, unknown> = {}): AuditNote {
  return {
    kind: 'account',
    target: memberId,
    changes: {transaction_id: tx.id, type: tx.type, amount: tx.amount, status: tx.status, ...more},
  }
}

/** What a push queued: the partners it goes to, its deliveries and the run's request id they carry. */
interface Queued {
  deliveries: string[]
  partners: string[]
}

/** The record of a change to a partner project (interface B), with what it queued for the partners. */
export function projectNote(projectId: string, queued: Queued, requestId: string, changes: Record<string, unknown>): AuditNote {
  return {
    kind: 'project',
    target: projectId,
    changes: {...changes, partners: queued.partners, deliveries: queued.deliveries.length, request_id: requestId},
  }
}

/**
 * The record of a demo seeding (demo, serve --demo): the data set it made or found, without its
 * published credentials.
 */
export function demoNote(info: DemoInfo, force: boolean): AuditNote {
  return {
    kind: 'store',
    target: 'demo',
    changes: {demo_client: info.client.client_id, demo_member: info.member.user_id, redirect_uri: info.client.redirect_uri, force},
  }
}
