import {defineMetrics} from '../../metrics/define.js'

/** Why interface C refused a withdrawal (interfaces/balance/service.ts names each refusal). */
export const REFUSAL_REASONS = [
  'invalid',
  'unknown_account',
  'inactive_member',
  'unknown_type',
  'restricted',
  'below_minimum',
  'insufficient_funds',
  'idempotency_conflict',
] as const
export type RefusalReason = (typeof REFUSAL_REASONS)[number]

/** Interface C's metrics: withdrawals made, refused, and answered again for a repeated Idempotency-Key. */
export const balanceMetrics = defineMetrics('balance', (kit) => ({
  created: kit.single('balance_withdrawals_created_total', 'Withdrawals created'),
  refused: kit.children('balance_withdrawals_refused_total', 'Withdrawal requests refused by the withdrawal rules, by reason', 'reason', REFUSAL_REASONS),
  replays: kit.single('balance_idempotent_replays_total', 'Withdrawal requests answered from an earlier one with the same Idempotency-Key'),
}))
