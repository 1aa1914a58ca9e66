import {z} from 'zod'
import {narrow} from '../../store/database.js'
import {balanceConfig} from './config.js'
import {CompiledQuery, type Kysely} from 'kysely'
import {canonical as canonicalEnum} from '../../lib/enums.js'
import {AppError, isClientError, notFound} from '../../errors.js'
import type {RefusalReason} from './metrics.js'
import {iso} from '../../lib/clock.js'
import {sha256} from '../../lib/hashing.js'
import {isUuid, newTimeOrderedUuid, storedIdOf} from '../../lib/ids.js'
import {isValidNpi} from '../../lib/npi.js'
import {findMemberBy} from '../../registry/repository.js'
import type {MemberRow} from '../../registry/tables.js'
import type {BalanceView as Database, BalanceDb as Db} from './tables.js'
import {type BatchRunner, savepointRunner, submitToSetWriter, writeTransaction} from '../../store/db.js'
import {isRetryableConflict, storeKind} from '../../store/dialect.js'
import {inBatch, type Outcome} from '../../store/writer.js'
import {versionCache} from '../../store/version-cache.js'
import {fromJsonText, toJsonText} from '../../store/json.js'
import {DEFAULT_CURRENCY, Money, ZERO, amountText, parseAmount} from './money.js'
import * as repo from './repository.js'
import {
  ACCOUNT_KEYS,
  CREDIT_TYPES,
  STATUSES,
  TRANSACTION_TYPES,
  TRANSITIONS,
  isCreditType,
  parseProperties,
  parseWithdrawalBody,
  validateMemberDetails,
  type CreditType,
  type TransactionStatus,
  type TransactionType,
  type WithdrawalRequest,
} from './schema.js'
import type {NewTransactionRow, TransactionRow, WithdrawalTypeRow} from './tables.js'

type Decimal = InstanceType<typeof Money>

export interface AccountSummary {
  available_funds: Decimal
  currency: string
  preferred_status: boolean
}

export interface TransactionView {
  id: string
  /** Negative for debits. */
  amount: Decimal
  currency: string
  type: TransactionType
  type_description: string
  status: TransactionStatus
  survey_id: string | null
  created_date: string
  properties: Record<string, string>
}

export type TransactionListItem = Omit<TransactionView, 'created_date' | 'properties'> & {
  current_balance: Decimal
  created_date: string
  properties: Record<string, string>
}

export interface MoneyObject {
  amount: Decimal
  currency: string
}

export interface WithdrawalTypeView {
  type: string
  description: string
  fee: MoneyObject | null
  minimum_balance_required: MoneyObject | null
  required_fields: string[]
  optional_fields: string[]
}

export interface WithdrawalCreated {
  transaction_id: string
  uri: string
}

/** The path of one transaction, as a withdrawal's `uri` gives it. */
export function transactionPath(id: string): string {
  return `/balance/transactions/${id}`
}

/** Account holders as last read, while the store is unchanged (store/version-cache.ts): every call of C resolves one. */
const recentHolder = versionCache<string, MemberRow | undefined>(balanceConfig.caches.accountHolders, (row) => row !== undefined)

/**
 * Finds the person behind `{key}/{id}`. Every way of failing (an unsupported key such as
 * partner_id, a malformed identifier, nobody with it) is the spec's 404 "account not found".
 */
export async function resolveAccountHolder(db: Db, key: string, id: string): Promise<MemberRow> {
  if (!(ACCOUNT_KEYS as readonly string[]).includes(key)) throw notFound(`"${key}" is not an account key; use user_id, npi or me`)
  const value = id.trim()
  let row: MemberRow | undefined
  if (key === 'user_id') {
    // Past the id column's range names nobody, on SQLite and PostgreSQL alike (lib/ids.ts).
    const userId = storedIdOf(value)
    if (userId === undefined) {
      // Digits past the range are answered as any other unknown user_id.
      throw notFound(
        /^\d+$/.test(value)
          ? `no account for user_id ${value.length > 64 ? `${value.slice(0, 64)}…` : value}`
          : `no account for user_id ${shown(id)}: a user_id is a positive integer`,
      )
    }
    row = await recentHolder(db, `id:${userId}`, () => findMemberBy(narrow(db), 'id', userId))
  } else if (key === 'npi') {
    if (!isValidNpi(value)) throw notFound(`no account for npi "${id}": not a valid NPI (10 digits ending in a Luhn check digit)`)
    row = await recentHolder(db, `npi:${value}`, () => findMemberBy(narrow(db), 'npi', value))
  } else {
    if (!/^\d{10,11}$/.test(value)) throw notFound(`no account for me "${id}": an AMA ME number is 10 or 11 digits`)
    row = await recentHolder(db, `me:${value}`, () => findMemberBy(narrow(db), 'me', value))
  }
  if (!row) throw notFound(`no account for ${key} ${value}`)
  return row
}

/**
 * What a transaction contributes to available funds: a credit counts once Completed; a debit
 * holds its money while Processing or OnHold and keeps it once Completed. Cancelled and Reversed
 * count for nothing.
 */
export function effect(type: string, status: string, amount: Decimal): Decimal {
  if (isCreditType(type)) return status === 'Completed' ? amount : ZERO
  return status === 'Processing' || status === 'OnHold' || status === 'Completed' ? amount.neg() : ZERO
}

/** How the JSON columns of the ledger are checked when read back. */
const propertiesSchema = z.record(z.string(), z.string())
const fieldListSchema = z.array(z.string())
const createdSchema = z.object({transaction_id: z.string(), uri: z.string()})

function transactionView(row: TransactionRow): TransactionView {
  const amount = new Money(row.amount)
  return {
    id: row.id,
    amount: isCreditType(row.type) ? amount : amount.neg(),
    currency: row.currency,
    type: row.type,
    type_description: TRANSACTION_TYPES[row.type],
    status: row.status,
    survey_id: row.survey_id,
    created_date: row.created_at,
    properties: fromJsonText(row.properties, propertiesSchema, `the properties of transaction ${row.id}`),
  }
}

export async function getSummary(db: Db, member: MemberRow): Promise<AccountSummary> {
  const account = await repo.findAccount(db, member.id)
  return {
    available_funds: new Money(account?.available_funds ?? '0'),
    currency: account?.currency ?? DEFAULT_CURRENCY,
    preferred_status: account?.preferred_status === 1,
  }
}

/** Oldest first, each with the balance up to and including it. */
export async function listTransactions(db: Db, member: MemberRow): Promise<TransactionListItem[]> {
  let running = ZERO
  return (await repo.listTransactionRows(db, member.id)).map((row) => {
    running = running.plus(effect(row.type, row.status, new Money(row.amount)))
    const {created_date, properties, ...rest} = transactionView(row)
    return {...rest, current_balance: running, created_date, properties}
  })
}

export async function getTransaction(db: Db, id: string): Promise<TransactionView> {
  const row = await findTransactionById(db, id)
  if (!row) throw notFound(`no transaction with id ${shown(id)}`)
  return transactionView(row)
}

/** A transaction by the id a caller gave; anything but a UUID names none and is not looked up. */
async function findTransactionById(db: Db, id: string): Promise<TransactionRow | undefined> {
  const wanted = id.trim().toLowerCase()
  return isUuid(wanted) ? repo.findTransaction(db, wanted) : undefined
}

/** A caller's identifier in a message: quoted, and cut short when it is long. */
function shown(value: string): string {
  return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value)
}

function moneyObject(amount: string | null, currency: string | null): MoneyObject | null {
  return amount === null ? null : {amount: new Money(amount), currency: currency ?? DEFAULT_CURRENCY}
}

function withdrawalTypeView(row: WithdrawalTypeRow): WithdrawalTypeView {
  return {
    type: row.code,
    description: row.description,
    fee: moneyObject(row.fee_amount, row.fee_currency),
    minimum_balance_required: moneyObject(row.minimum_amount, row.minimum_currency),
    required_fields: fromJsonText(row.required_fields, fieldListSchema, `the required fields of ${row.code}`),
    optional_fields: fromJsonText(row.optional_fields, fieldListSchema, `the optional fields of ${row.code}`),
  }
}

/** Why a type is not offered to this person, or undefined when it is. */
function unavailableReason(row: WithdrawalTypeRow, member: Pick<MemberRow, 'country'>, restricted: readonly string[]): string | undefined {
  if (restricted.includes(row.code)) return `withdrawal type ${row.code} is restricted for this person`
  const countries = row.countries ? fromJsonText(row.countries, fieldListSchema, `the countries of ${row.code}`) : null
  if (countries && !countries.includes(member.country)) return `withdrawal type ${row.code} is not offered to members practising in ${member.country}`
  return undefined
}

/** Every type when no member is given; otherwise the types this person may use. */
export async function listWithdrawalTypes(db: Db, member?: MemberRow): Promise<WithdrawalTypeView[]> {
  const rows = await repo.listWithdrawalTypeRows(db)
  if (!member) return rows.map(withdrawalTypeView)
  const restricted = await repo.listRestrictions(db, member.id)
  return rows.filter((row) => !unavailableReason(row, member, restricted)).map(withdrawalTypeView)
}

export interface CreditInput {
  type: string
  amount: unknown
  survey_id?: string | null | undefined
  properties?: Record<string, unknown> | undefined
}

function parseSurveyId(value: string | null | undefined): string | null {
  if (value === undefined || value === null) return null
  const trimmed = value.trim()
  if (!trimmed || trimmed.length > 100) throw new AppError('bad_request', 'survey_id: must be 1 to 100 characters')
  return trimmed
}

/** Posts a Completed credit (available at once) and returns it. */
export async function postCredit(db: Kysely<Database>, member: MemberRow, input: CreditInput, now: Date): Promise<TransactionView> {
  const creditType = canonicalEnum(input.type, CREDIT_TYPES)
  if (!creditType) throw new AppError('bad_request', `type: must be one of ${CREDIT_TYPES.join(', ')} (any case)`)
  input = {...input, type: creditType}
  const properties = parseProperties(input.properties)
  const surveyId = parseSurveyId(input.survey_id)
  return writeTransaction(db, async (trx) => {
    const stamp = iso(now)
    const account = await repo.ensureAccount(trx, member.id, DEFAULT_CURRENCY, stamp)
    const amount = parseAmount(input.amount, account.currency)
    const funds = new Money(account.available_funds).plus(amount)
    return postCompleted(trx, member, {type: input.type as CreditType, amount, currency: account.currency, surveyId, properties}, funds, stamp)
  })
}

/** Writes a Completed credit or debit and the account's new available funds, in the caller's transaction. */
async function postCompleted(
  trx: Kysely<Database>,
  member: MemberRow,
  tx: {type: CreditType | 'DEBIT_ADJUSTMENT'; amount: Money; currency: string; surveyId: string | null; properties: Record<string, string>},
  funds: Money,
  stamp: string,
): Promise<TransactionView> {
  const id = newTimeOrderedUuid()
  await repo.insertTransaction(trx, {
    id,
    member_id: member.id,
    type: tx.type,
    amount: amountText(tx.amount),
    currency: tx.currency,
    status: 'Completed',
    survey_id: tx.surveyId,
    properties: toJsonText(tx.properties),
    withdrawal_id: null,
    withdrawal_type: null,
    member_details: null,
    client_id: null,
    created_at: stamp,
    updated_at: stamp,
  })
  await repo.setAvailableFunds(trx, member.id, amountText(funds), stamp)
  return transactionView((await repo.findTransaction(trx, id))!)
}

/** Posts a Completed DEBIT_ADJUSTMENT; refused when it would take the account below zero. */
export async function postDebit(
  db: Kysely<Database>,
  member: MemberRow,
  input: {amount: unknown; properties?: Record<string, unknown> | undefined},
  now: Date,
): Promise<TransactionView> {
  const properties = parseProperties(input.properties)
  return writeTransaction(db, async (trx) => {
    const stamp = iso(now)
    const account = await repo.findAccount(trx, member.id)
    const currency = account?.currency ?? DEFAULT_CURRENCY
    const amount = parseAmount(input.amount, currency)
    const available = new Money(account?.available_funds ?? '0')
    if (amount.gt(available))
      throw new AppError('unprocessable', `insufficient funds: a debit of ${amountText(amount)} exceeds available funds of ${amountText(available)} ${currency}`)
    if (!account) await repo.ensureAccount(trx, member.id, currency, stamp)
    return postCompleted(trx, member, {type: 'DEBIT_ADJUSTMENT', amount, currency, surveyId: null, properties}, available.minus(amount), stamp)
  })
}

export interface WithdrawalOptions {
  now: Date
  /** The balance client asking (null for an operator at the CLI). */
  clientId?: string | null
  idempotencyKey?: string | undefined
}

export interface WithdrawalResult {
  created: WithdrawalCreated
  /** True when an earlier request with the same Idempotency-Key produced this answer. */
  replayed: boolean
}

/** Key-order-independent JSON, so the same body sent twice hashes the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

/** The refusals of a withdrawal that have a reason of their own (refusalReason). */
const refusals = new WeakMap<AppError, RefusalReason>()

function refusal(reason: RefusalReason, error: AppError): AppError {
  refusals.set(error, reason)
  return error
}

/**
 * Why a withdrawal request was refused, for the metrics: the reason its refusal was made with, an
 * unknown account for any other 404, and an invalid request for any other answer a caller caused
 * (the body, the amount, member_details). Undefined for what is no refusal (a store failure).
 */
export function refusalReason(error: unknown): RefusalReason | undefined {
  if (!isClientError(error)) return undefined
  return refusals.get(error) ?? (error.status === 404 ? 'unknown_account' : 'invalid')
}

/** A withdrawal asked for: what to lock and read for it, and the request to decide on. */
interface WithdrawalAsk extends repo.ContextAsk {
  request: WithdrawalRequest
  clientId: string | null
  requestHash: string
}

/**
 * Creates a withdrawal and its fee. Everything from the idempotency check to the debit happens in
 * one write transaction, so concurrent requests see each other's debits and no combination of
 * them can overdraw the account: on SQLite the transaction holds the write lock from its start
 * (BEGIN IMMEDIATE); on PostgreSQL it first locks the idempotency key and the account row, then
 * takes a share lock on the member's row, and everything it decides on (the balance, the member's
 * `active` and `country`, the type and its restriction) is read after those locks
 * (repository.ts, withdrawalContext). Only `member.id` is taken from the caller: the row it
 * resolved may be older than a deactivation that commits before this transaction, and a
 * withdrawal decided on it would slip past that deactivation.
 *
 * On PostgreSQL the withdrawals of one event-loop turn are decided as a set (withdrawalRunner):
 * one statement locks and reads for all of them, one writes all that were granted.
 */
export async function createWithdrawal(db: Kysely<Database>, member: Pick<MemberRow, 'id'>, body: unknown, options: WithdrawalOptions): Promise<WithdrawalResult> {
  const request = parseWithdrawalBody(body)
  const clientId = options.clientId ?? null
  const idem = options.idempotencyKey !== undefined && clientId !== null ? {clientId, key: options.idempotencyKey} : undefined
  const ask: WithdrawalAsk = {
    memberId: member.id,
    currency: DEFAULT_CURRENCY,
    stamp: iso(options.now),
    idem,
    type: request.type,
    request,
    clientId,
    requestHash: idem ? sha256(`${member.id}\n${canonical(request)}`) : '',
  }
  if (storeKind(db) === 'postgres' && !inBatch(db)) return submitToSetWriter<WithdrawalResult>(db, withdrawalRunner, ask, member.id)
  return writeTransaction(db, (trx) => withdrawOne(trx, ask), {isolation: 'read committed', lockOrder: member.id})
}

/** One withdrawal in the caller's transaction: its locks and reads, its decision, its writes. */
async function withdrawOne(trx: Kysely<Database>, ask: WithdrawalAsk): Promise<WithdrawalResult> {
  const decision = decideWithdrawal(ask, await repo.withdrawalContext(trx, ask))
  if (decision.write) await repo.recordWithdrawal(trx, decision.write)
  return decision.result
}

const raw = (text: string) => CompiledQuery.raw(text)
const UNDO_SET = raw('rollback to batch')

/**
 * A batch of withdrawals on PostgreSQL as a set, in member order (the writer sorts them): one call
 * locks and reads for every one (medpanel_withdrawal_contexts), each is decided here in turn, an
 * earlier grant's debit and remembered answer carried over to a later request for the same
 * account or key, and one statement writes every grant. Four round trips for the batch, where one
 * savepoint per request costs three each. A refusal writes nothing but may leave an empty
 * account row behind (the lock created it); an account with nothing in it reads as no account. If
 * a statement fails for any other reason than a conflict (which reruns the batch), the set is
 * undone and each withdrawal runs again on its own, in a savepoint, so one bad request fails alone.
 */
const withdrawalRunner: BatchRunner = {
  begin: {serializable: raw('begin isolation level serializable; savepoint batch'), 'read committed': raw('begin isolation level read committed; savepoint batch')},
  commit: raw('commit'),
  // Every process's withdrawal batches take turns (store/postgres/writer.ts): with several `serve`
  // processes on one database, each batch then holds all its process queued while another
  // committed, where lanes running side by side split the same withdrawals into small batches.
  clusterLanes: 1,
  async run(conn, batch) {
    const asks = batch.map((job) => job.input as WithdrawalAsk)
    try {
      const contexts = await repo.withdrawalContexts(conn, asks)
      const funds = new Map<number, string>()
      const answers = new Map<string, NonNullable<repo.WithdrawalContext['prior']>>()
      const writes: repo.WithdrawalWrite[] = []
      const outcomes = asks.map((ask, i): Outcome => {
        const read = contexts[i]!
        const key = ask.idem && `${ask.idem.clientId}\n${ask.idem.key}`
        const answered = key === undefined ? undefined : answers.get(key)
        const available = funds.get(ask.memberId)
        const account = available === undefined ? read.account : {...read.account, available_funds: available}
        const context: repo.WithdrawalContext = answered ? {account, prior: answered} : {...read, account}
        try {
          const {result, write} = decideWithdrawal(ask, context)
          if (write) {
            writes.push(write)
            funds.set(ask.memberId, write.available)
            if (key !== undefined && write.remember) answers.set(key, write.remember)
          }
          return {ok: true, value: result}
        } catch (error) {
          return {ok: false, error}
        }
      })
      await repo.recordWithdrawals(conn, writes)
      return outcomes
    } catch (error) {
      if (isRetryableConflict(error)) throw error
      await conn.executeQuery(UNDO_SET).catch(() => {
        throw error
      })
      await conn.executeQuery(raw('savepoint request'))
      return savepointRunner.run(
        conn,
        batch.map((job) => ({...job, fn: (trx) => withdrawOne(trx, job.input as WithdrawalAsk)})),
      )
    }
  },
}

/**
 * Whether `available` funds allow a withdrawal of `amount` of `type`: the type's minimum balance,
 * then the amount and the type's fee together. Returns the fee; a refusal is thrown with its
 * reason. The service decides with it, and `withdraw` asks it at the prompt, before the details.
 */
export function checkWithdrawalFunds(type: WithdrawalTypeView, amount: Decimal, available: Decimal, currency: string): Decimal {
  const fee = type.fee?.amount ?? ZERO
  const minimum = type.minimum_balance_required?.amount ?? ZERO
  if (available.lt(minimum)) {
    throw refusal(
      'below_minimum',
      new AppError('unprocessable', `available funds of ${amountText(available)} ${currency} are below the minimum balance of ${amountText(minimum)} required for ${type.type}`),
    )
  }
  if (amount.plus(fee).gt(available)) {
    const what = fee.isZero() ? `amount ${amountText(amount)}` : `amount ${amountText(amount)} plus the ${type.type} fee of ${amountText(fee)}`
    throw refusal('insufficient_funds', new AppError('unprocessable', `insufficient funds: ${what} exceeds available funds of ${amountText(available)} ${currency}`))
  }
  return fee
}

/**
 * Decides a withdrawal from what was locked and read for it: the answer remembered for its key, a
 * refusal (thrown, with its reason for the metrics), or a grant with what it writes.
 */
function decideWithdrawal(ask: WithdrawalAsk, context: repo.WithdrawalContext): {result: WithdrawalResult; write?: repo.WithdrawalWrite} {
  const {account, prior, holder, type: typeRow} = context
  const {request, requestHash, stamp, memberId, idem} = ask
  if (prior) {
    if (prior.request_hash !== requestHash)
      throw refusal('idempotency_conflict', new AppError('unprocessable', 'Idempotency-Key: this key was already used for a different request'))
    return {result: {created: fromJsonText(prior.body, createdSchema, 'a remembered withdrawal answer'), replayed: true}}
  }
  if (!holder) throw notFound(`no account for user_id ${memberId}`)
  if (holder.active !== 1) throw refusal('inactive_member', new AppError('forbidden', "this person's membership is inactive; withdrawals are closed"))
  if (!typeRow) throw refusal('unknown_type', new AppError('unprocessable', `type: "${request.type}" is not a withdrawal type; list them with GET …/withdrawal_types`))
  const denied = unavailableReason(typeRow, holder, Number(typeRow.restricted) ? [typeRow.code] : [])
  if (denied) throw refusal('restricted', new AppError('forbidden', denied))
  const type = withdrawalTypeView(typeRow)
  const details = validateMemberDetails(request.member_details, type.required_fields, type.optional_fields, type.type)

  const currency = account.currency
  const amount = parseAmount(request.amount, currency)
  const available = new Money(account.available_funds)
  const fee = checkWithdrawalFunds(type, amount, available, currency)

  const id = newTimeOrderedUuid()
  const base = {member_id: memberId, currency, survey_id: null, withdrawal_type: type.type, client_id: ask.clientId, created_at: stamp, updated_at: stamp}
  const rows: NewTransactionRow[] = [
    {
      ...base,
      id,
      type: 'WITHDRAWAL',
      amount: amountText(amount),
      status: 'Processing',
      properties: toJsonText({withdrawal_type: type.type, vendor: type.description}),
      withdrawal_id: null,
      member_details: toJsonText(details),
    },
  ]
  if (!fee.isZero()) {
    rows.push({
      ...base,
      id: newTimeOrderedUuid(),
      type: 'WITHDRAWAL_FEE',
      amount: amountText(fee),
      status: 'Processing',
      properties: toJsonText({withdrawal_type: type.type, withdrawal_id: id}),
      withdrawal_id: id,
      member_details: null,
    })
  }
  const created = {transaction_id: id, uri: transactionPath(id)}
  return {
    result: {created, replayed: false},
    write: {
      rows,
      memberId,
      available: amountText(available.minus(amount).minus(fee)),
      stamp,
      remember: idem ? {client_id: idem.clientId, key: idem.key, request_hash: requestHash, status: 201, body: toJsonText(created), created_at: stamp} : undefined,
    },
  }
}

/**
 * Moves a transaction along the status graph (TRANSITIONS in schema.ts; docs/balance.md). A withdrawal's fee moves with it (so a
 * cancelled or reversed withdrawal refunds its fee); a change that would leave the account
 * below zero (reversing a credit already spent) is refused.
 */
export async function updateTransactionStatus(db: Kysely<Database>, id: string, status: string, now: Date): Promise<TransactionView> {
  const wanted = canonicalEnum(status, STATUSES)
  if (!wanted) throw new AppError('bad_request', `status: must be one of ${STATUSES.join(', ')} (any case)`)
  const next: TransactionStatus = wanted
  return writeTransaction(db, async (trx) => {
    const row = await findTransactionById(trx, id)
    if (!row) throw notFound(`no transaction with id ${shown(id)}`)
    if (row.type === 'WITHDRAWAL_FEE') throw new AppError('unprocessable', `a withdrawal fee follows its withdrawal; change ${row.withdrawal_id} instead`)
    const current = row.status
    if (!TRANSITIONS[current].includes(next)) {
      const allowed = TRANSITIONS[current]
      throw new AppError(
        'unprocessable',
        `a ${current} transaction cannot become ${next}${allowed.length ? ` (it can become ${allowed.join(' or ')})` : ' (that status is final)'}`,
      )
    }
    const moving = [row]
    const fee = row.type === 'WITHDRAWAL' ? await repo.findFee(trx, row.id) : undefined
    if (fee) moving.push(fee)
    let delta = ZERO
    for (const r of moving) {
      const amount = new Money(r.amount)
      delta = delta.plus(effect(r.type, next, amount)).minus(effect(r.type, r.status, amount))
    }
    const stamp = iso(now)
    const account = await repo.ensureAccount(trx, row.member_id, row.currency, stamp)
    const available = new Money(account.available_funds).plus(delta)
    if (available.lt(0)) {
      throw new AppError('unprocessable', `this would take available funds to ${amountText(available)} ${account.currency}; the account may not go below zero`)
    }
    for (const r of moving) await repo.updateTransactionRow(trx, r.id, {status: next, updated_at: stamp})
    await repo.setAvailableFunds(trx, row.member_id, amountText(available), stamp)
    return transactionView((await repo.findTransaction(trx, row.id))!)
  })
}

export interface RestrictionResult {
  user_id: number
  type: string
  restricted: boolean
  restricted_types: string[]
}

/** Bars (or, with lift, re-allows) a withdrawal type for one person. */
export async function restrictWithdrawalType(db: Kysely<Database>, member: MemberRow, type: string, lift: boolean, now: Date): Promise<RestrictionResult> {
  const code = type.trim().toUpperCase()
  return writeTransaction(db, async (trx) => {
    if (!(await repo.findWithdrawalType(trx, code))) {
      const known = (await repo.listWithdrawalTypeRows(trx)).map((r) => r.code)
      throw new AppError('bad_request', `type: "${type}" is not a withdrawal type (one of ${known.join(', ')})`)
    }
    if (lift) await repo.removeRestriction(trx, member.id, code)
    else await repo.addRestriction(trx, member.id, code, iso(now))
    return {user_id: member.id, type: code, restricted: !lift, restricted_types: await repo.listRestrictions(trx, member.id)}
  })
}

/** Marks whether the person gets preferred treatment in survey invitations. */
export async function setPreferredStatus(db: Kysely<Database>, member: MemberRow, preferred: boolean, now: Date): Promise<AccountSummary> {
  return writeTransaction(db, async (trx) => {
    const stamp = iso(now)
    await repo.ensureAccount(trx, member.id, DEFAULT_CURRENCY, stamp)
    await repo.setPreferred(trx, member.id, preferred, stamp)
    return getSummary(trx, member)
  })
}
