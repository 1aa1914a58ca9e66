import {ILL_FORMED_TEXT, isWellFormedText} from '../../lib/unicode.js'
import {z} from 'zod'
import {useOpenApi} from '../../lib/zod.js'

useOpenApi()
import {AppError} from '../../errors.js'
import {DECIMAL_TEXT, type Money} from './money.js'
import {isCountry} from '../../lib/iso3166.js'
import {isEmailAddress} from '../../lib/email.js'
import {isRegionOf} from '../../lib/iso3166-regions.js'

export const ACCOUNT_KEYS = ['user_id', 'npi', 'me'] as const
export type AccountKey = (typeof ACCOUNT_KEYS)[number]

export const TRANSACTION_TYPES = {
  HONORARIUM: 'Honorarium for a completed survey',
  INCENTIVE: 'Incentive payment',
  WITHDRAWAL: 'Withdrawal',
  WITHDRAWAL_FEE: 'Fee for a withdrawal',
  CREDIT_ADJUSTMENT: 'Correcting credit',
  DEBIT_ADJUSTMENT: 'Correcting debit',
} as const
export type TransactionType = keyof typeof TRANSACTION_TYPES
export const CREDIT_TYPES = ['HONORARIUM', 'INCENTIVE', 'CREDIT_ADJUSTMENT'] as const
export type CreditType = (typeof CREDIT_TYPES)[number]

export function isCreditType(type: string): boolean {
  return (CREDIT_TYPES as readonly string[]).includes(type)
}

export const STATUSES = ['Processing', 'Completed', 'Cancelled', 'Reversed', 'OnHold'] as const
export type TransactionStatus = (typeof STATUSES)[number]

/** The only status moves there are; anything else is refused. */
export const TRANSITIONS: Record<TransactionStatus, readonly TransactionStatus[]> = {
  Processing: ['Completed', 'Cancelled', 'OnHold'],
  OnHold: ['Processing', 'Cancelled'],
  Completed: ['Reversed'],
  Cancelled: [],
  Reversed: [],
}

/** Member-detail fields, by the spec's table; nothing else is accepted. */
export const MEMBER_DETAIL_FIELDS = [
  'first_name',
  'last_name',
  'email',
  'address_line1',
  'address_line2',
  'address_line3',
  'city',
  'region',
  'postal_code',
  'country',
  'phone_number',
] as const
export type MemberDetailField = (typeof MEMBER_DETAIL_FIELDS)[number]
export type MemberDetails = Partial<Record<MemberDetailField, string>>

/** Checks one field's value; returns the problem or undefined. Country and region are checked together. */
function fieldProblem(field: MemberDetailField, value: string, details: MemberDetails): string | undefined {
  // Details go to payout tooling and operators' screens: an escape sequence or a line break
  // inside a name would be acted on there, not shown.
  if (CONTROL.test(value)) return 'must not contain control characters (escape sequences, line breaks, tabs)'
  if (!isWellFormedText(value)) return ILL_FORMED_TEXT
  switch (field) {
    case 'email':
      return isEmailAddress(value) ? undefined : 'must be a valid e-mail address'
    case 'country':
      return isCountry(value) ? undefined : `"${value}" is not an ISO 3166-1 alpha-2 code from the countries list`
    case 'region': {
      const country = details.country
      if (!country) return 'needs country, to check the region against'
      if (!isCountry(country)) return undefined // country reports its own problem
      return isRegionOf(value, country) ? undefined : `"${value}" is not an ISO 3166-2 region of ${country} (see /balance/countries/${country}/regions)`
    }
    case 'phone_number': {
      if (!/^\+?[\d\s-]+$/.test(value)) return 'may contain only digits, spaces, hyphens and a leading +'
      const digits = value.replace(/\D/g, '').length
      return digits >= 7 && digits <= 15 ? undefined : 'must have 7 to 15 digits'
    }
    case 'postal_code':
      if (details.country === 'US') return /^\d{5}(-\d{4})?$/.test(value) ? undefined : 'must be a US ZIP code (12345 or 12345-6789)'
      return /^[A-Za-z0-9][A-Za-z0-9 -]{0,11}$/.test(value) ? undefined : 'must be a postal code of letters, digits, spaces and hyphens'
    default:
      return value.length <= 200 ? undefined : 'must be at most 200 characters'
  }
}

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/

/**
 * Validates member details against a withdrawal type's field lists. Every problem is collected so
 * the 422 names each bad field at once; the result is trimmed, with codes upper-cased.
 */
export function validateMemberDetails(input: Record<string, unknown>, required: readonly string[], optional: readonly string[], typeCode: string): MemberDetails {
  const allowed = new Set([...required, ...optional])
  const problems: string[] = []
  const details: MemberDetails = {}
  for (const [field, raw] of Object.entries(input)) {
    if (!allowed.has(field)) {
      problems.push((MEMBER_DETAIL_FIELDS as readonly string[]).includes(field) ? `${field}: is not used by ${typeCode}` : `${field}: is not a member-detail field`)
      continue
    }
    if (raw === null || raw === undefined) continue
    if (typeof raw !== 'string') {
      problems.push(`${field}: must be a string`)
      continue
    }
    let value = raw.trim()
    if (field === 'country' || field === 'region') value = value.toUpperCase()
    if (value) details[field as MemberDetailField] = value
  }
  for (const field of required) if (!details[field as MemberDetailField]) problems.push(`${field}: is required for ${typeCode}`)
  for (const [field, value] of Object.entries(details) as [MemberDetailField, string][]) {
    const problem = fieldProblem(field, value, details)
    if (problem) problems.push(`${field}: ${problem}`)
  }
  if (problems.length) throw new AppError('unprocessable', `member_details: ${problems.join('; ')}`)
  return details
}

/** Free-form transaction properties: string keys to string values. */
export function parseProperties(input: Record<string, unknown> | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  if (!input) return out
  const entries = Object.entries(input)
  if (entries.length > 20) throw new AppError('bad_request', 'properties: at most 20 entries')
  for (const [key, value] of entries) {
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(key)) throw new AppError('bad_request', `properties: "${key}" is not a valid key (letters, digits, _ . -)`)
    if (typeof value !== 'string' || value.length > 500) throw new AppError('bad_request', `properties.${key}: must be a string of at most 500 characters`)
    out[key] = value
  }
  return out
}

/** An Idempotency-Key header value: 1–255 visible ASCII characters. */
export function parseIdempotencyKey(value: string | undefined): string | undefined {
  if (value === undefined) return undefined
  if (!/^[\x21-\x7e]{1,255}$/.test(value)) throw new AppError('bad_request', 'Idempotency-Key: must be 1 to 255 visible ASCII characters')
  return value
}

// Response schemas, for the OpenAPI document.
const moneyObject = z.object({amount: z.number(), currency: z.string()}).nullable()
export const summarySchema = z.object({available_funds: z.number(), currency: z.string(), preferred_status: z.boolean()}).openapi('BalanceSummary')
const transactionFields = {
  id: z.string().openapi({format: 'uuid'}),
  amount: z.number().openapi({description: 'Negative for debits (withdrawals, fees, debit adjustments)'}),
  currency: z.string(),
  type: z.enum(Object.keys(TRANSACTION_TYPES) as [TransactionType, ...TransactionType[]]),
  type_description: z.string(),
  status: z.enum(STATUSES),
  survey_id: z.string().nullable(),
}
export const transactionSchema = z.object({...transactionFields, created_date: z.string(), properties: z.record(z.string(), z.string())}).openapi('BalanceTransaction')
export const transactionListSchema = z
  .array(z.object({...transactionFields, current_balance: z.number(), created_date: z.string(), properties: z.record(z.string(), z.string())}))
  .openapi('BalanceTransactionList')
export const withdrawalTypeSchema = z
  .object({
    type: z.string(),
    description: z.string(),
    fee: moneyObject,
    minimum_balance_required: moneyObject,
    required_fields: z.array(z.string()),
    optional_fields: z.array(z.string()),
  })
  .openapi('WithdrawalType')
/**
 * The body of a withdrawal as the route checks it: what makes it usable at all (400 otherwise).
 * Values are judged by the service (422): the amount's exact value, each member detail against
 * the chosen type. An amount may be a JSON number or a decimal string; the number is read from
 * the raw text, never through a float.
 */
export const withdrawalBodySchema = z
  .object({
    type: z
      .string({error: 'must be a withdrawal type code'})
      .trim()
      .min(1, {error: 'must be a withdrawal type code'})
      .transform((code) => code.toUpperCase())
      .openapi({example: 'PAYPAL', description: 'A code from GET …/withdrawal_types'}),
    amount: z
      .union([z.number().finite(), z.string().regex(DECIMAL_TEXT)], {error: 'must be a decimal number'})
      .openapi({example: 25.5, description: 'Greater than 0, at most the currency\'s decimal places; a number or a decimal string such as "25.50"'}),
    member_details: z
      .object(Object.fromEntries(MEMBER_DETAIL_FIELDS.map((f) => [f, z.unknown().openapi({type: 'string'})])) as Record<MemberDetailField, z.ZodUnknown>, {
        error: 'must be an object',
      })
      .catchall(z.unknown())
      .openapi({
        description: 'The fields the chosen type lists in required_fields (all of them) and optional_fields; any other field is refused with 422',
        example: {first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com'},
      }),
  })
  .strict()
  .openapi('WithdrawalRequest')
export const withdrawalCreatedSchema = z.object({transaction_id: z.string(), uri: z.string()}).openapi('WithdrawalCreated')

/** A withdrawal body as an in-process caller holds it (the CLI's flags, a test's object), before the schema reads it. */
export type WithdrawalInput = Readonly<Record<string, unknown>>

/**
 * A withdrawal body as the service takes it (body.ts makes it): the schema's output, its amount an
 * exact decimal. A field added to the schema arrives here, in the Idempotency-Key fingerprint and
 * in the decision without further typing.
 */
export type WithdrawalRequest = Omit<z.output<typeof withdrawalBodySchema>, 'amount'> & {
  amount: Money
  /** The amount as written: a JSON number's text, the string sent, or a caller's number. */
  amountWritten: string | number
}

/** The answer to a created withdrawal (and the one remembered for its Idempotency-Key). */
export type WithdrawalCreated = z.infer<typeof withdrawalCreatedSchema>
export const countrySchema = z.object({alpha_2_code: z.string(), short_name: z.string()}).openapi('Country')
export const regionSchema = z.object({region_code: z.string(), name: z.string(), alpha_2_code: z.string(), postal_abbreviation: z.string()}).openapi('Region')
export const messageSchema = z.object({message: z.string()}).openapi('BalanceError')
