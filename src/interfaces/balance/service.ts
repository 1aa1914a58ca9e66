/*
 * Interface C's service, as routes, commands and tests call it. Each part lives in a module of its
 * own; this file only names them together:
 *
 * - queries.ts   account holders, summaries, transactions, withdrawal types (reads)
 * - views.ts     what those answer (in-process types, amounts as Money) and the balance rule (`effect`)
 * - withdraw.ts  createWithdrawal: the transaction (or PostgreSQL's batch) around a decision
 * - ledger.ts    SQLite: the one writer's memory of the ledger, a batch decided there and written at once
 * - decide.ts    decideWithdrawal, pure: the remembered answer, a refusal, or a grant and its lines
 * - postings.ts  credits, debits, status moves (TRANSITIONS), restrictions, the preferred flag
 * - invariants.ts the ledger's invariants, asserted where a withdrawal is decided and written
 * - body.ts      the edge parser of a withdrawal body (text or object → WithdrawalRequest)
 */
export {checkWithdrawalFunds, decideWithdrawal, refusalReason, type WithdrawalAsk, type WithdrawalDecision, type WithdrawalResult} from './decide.js'
export {type CreditInput, postCredit, postDebit, type RestrictionResult, restrictWithdrawalType, setPreferredStatus, updateTransactionStatus} from './postings.js'
export {getSummary, getTransaction, listTransactions, listWithdrawalTypes, resolveAccountHolder} from './queries.js'
export type {WithdrawalCreated} from './schema.js'
export {
  type AccountSummary,
  effect,
  type MoneyObject,
  type TransactionListItem,
  type TransactionView,
  transactionPath,
  type WithdrawalTypeView,
} from './views.js'
export {createWithdrawal, type WithdrawalOptions} from './withdraw.js'
