import {ILL_FORMED_TEXT, isWellFormedText} from '../../lib/unicode.js'
import {Decimal} from 'decimal.js'
import {z} from 'zod'
import {type JsonText, toJsonText} from '../../store/json.js'
import {canonical} from '../../lib/enums.js'
import {isValidNpi} from '../../lib/npi.js'

/**
 * Interface B's resources, exactly as the spec's field tables give them. The same schemas check
 * what operators push (before anything is stored or queued) and what the reference partner
 * receives, so both ends agree on one definition.
 */

/** The 50 states, DC, and the inhabited territories with a USPS two-letter code. */
export const US_POSTAL_ABBREVIATIONS = [
  'AL',
  'AK',
  'AZ',
  'AR',
  'CA',
  'CO',
  'CT',
  'DE',
  'FL',
  'GA',
  'HI',
  'ID',
  'IL',
  'IN',
  'IA',
  'KS',
  'KY',
  'LA',
  'ME',
  'MD',
  'MA',
  'MI',
  'MN',
  'MS',
  'MO',
  'MT',
  'NE',
  'NV',
  'NH',
  'NJ',
  'NM',
  'NY',
  'NC',
  'ND',
  'OH',
  'OK',
  'OR',
  'PA',
  'RI',
  'SC',
  'SD',
  'TN',
  'TX',
  'UT',
  'VT',
  'VA',
  'WA',
  'WV',
  'WI',
  'WY',
  'DC',
  'AS',
  'GU',
  'MP',
  'PR',
  'VI',
] as const
const POSTAL = new Set<string>(US_POSTAL_ABBREVIATIONS)

export const PROJECT_STATUSES = ['onhold', 'active', 'closed'] as const
export const PROJECT_TYPES = ['custom', 'real-time'] as const
export const QUOTA_STATUSES = ['open', 'closed'] as const
export const QUOTA_TYPES = ['specialty', 'list_match', 'other'] as const
export const EVENT_STATES = ['start', 'screenout', 'quotafull', 'complete'] as const
export type ProjectStatus = (typeof PROJECT_STATUSES)[number]
export type QuotaStatus = (typeof QUOTA_STATUSES)[number]
export type EventState = (typeof EVENT_STATES)[number]

/** One of `values` in any letter case, kept in its canonical spelling (src/lib/enums.ts). */
function anyCase<T extends string>(values: readonly [T, ...T[]]) {
  return z.preprocess((v) => (typeof v === 'string' ? (canonical(v, values) ?? v) : v), z.enum(values, {error: `must be one of ${values.join(', ')} (any case)`}))
}

// Control characters in an id would corrupt paths and log lines, and "." or ".." would be read
// as a path step by every URL parser (even percent-encoded), rewriting which resource a push
// reaches. Otherwise ids are opaque: each is percent-encoded into exactly one path segment.
export const id = z
  .string({error: 'is required and must be a string'})
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters')
  .refine((v) => !/[\u0000-\u001f\u007f-\u009f]/.test(v), 'must not contain control characters')
  .refine(isWellFormedText, ILL_FORMED_TEXT)
  .refine((v) => !isDotSegment(v), 'must not be "." or ".." (they would change the partner path)')

/** "." and ".." in any spelling a URL parser folds into a path step (%2e is a dot to it too). */
export function isDotSegment(value: string): boolean {
  return /^(\.|%2e){1,2}$/i.test(value)
}

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?Z$/

/** ISO 8601 in UTC (ending in Z), and a real date; kept as written. */
export const utcTimestamp = z
  .string({error: 'is required and must be an ISO 8601 UTC timestamp'})
  .refine(
    (v) => ISO_UTC.test(v) && !Number.isNaN(Date.parse(v)) && new Date(v).toISOString().slice(0, 10) === v.slice(0, 10),
    'must be an ISO 8601 UTC timestamp such as 2026-03-01T12:00:00Z',
  )

/**
 * USD amounts: JSON numbers or decimal text, never negative, at most 4 decimal places and 10
 * integer digits. That bound keeps every accepted value exactly representable as a JSON number
 * written from its decimal text, so the value pushed is the value given.
 */
export const money = z.union([z.number(), z.string()], {error: 'must be a decimal amount'}).transform((v, ctx) => {
  const text = typeof v === 'number' ? String(v) : v.trim()
  if (!/^\d{1,10}(\.\d{1,4})?$/.test(text)) {
    ctx.addIssue({code: 'custom', message: 'must be a non-negative decimal amount with at most 4 decimal places'})
    return z.NEVER
  }
  return new Decimal(text).toString()
})

const positiveNumber = z.number({error: 'must be a number'}).positive('must be greater than 0')

const npi = z.string({error: 'is required and must be a string'}).refine(isValidNpi, 'must be a valid 10-digit NPI')

const httpUrl = z
  .string({error: 'must be a string'})
  .max(2048, 'must be at most 2048 characters')
  .refine((v) => {
    const probe = v.replaceAll('<npi>', '1234567893')
    return URL.canParse(probe) && /^https?:$/.test(new URL(probe).protocol)
  }, 'must be an http(s) URL')

export const projectSchema = z
  .object({
    project_id: id,
    name: z.string({error: 'is required and must be a string'}).trim().min(1, 'must not be empty').max(500, 'must be at most 500 characters'),
    custom_text: z.string({error: 'must be a string'}).max(10_000, 'must be at most 10000 characters').optional(),
    duration: positiveNumber,
    status: anyCase(PROJECT_STATUSES),
    project_type: anyCase(PROJECT_TYPES),
    created_at: utcTimestamp,
    updated_at: utcTimestamp,
  })
  .strict()
export type Project = z.output<typeof projectSchema>

/** What an operator pushes: the timestamps are optional, medpanel fills them in. */
export const projectInputSchema = projectSchema.extend({created_at: utcTimestamp.optional(), updated_at: utcTimestamp.optional()}).strict()
export type ProjectInput = z.input<typeof projectInputSchema>

export const quotaSchema = z
  .object({
    quota_id: id,
    project_id: id,
    status: anyCase(QUOTA_STATUSES),
    limit: z.number({error: 'is required and must be a number'}).int('must be a whole number').min(1, 'must be at least 1'),
    duration: positiveNumber.optional(),
    incidence_rate: z.number({error: 'is required and must be a number'}).min(0, 'must be between 0 and 1').max(1, 'must be between 0 and 1'),
    type: anyCase(QUOTA_TYPES).optional(),
    matching_specialties: z
      .array(z.string({error: 'must be a string'}).min(1, 'must not be empty').max(200))
      .max(500)
      .optional(),
    matching_regions: z
      .array(z.string({error: 'must be a string'}).refine((v) => POSTAL.has(v), 'must be a two-letter US state or territory postal abbreviation (e.g. NY, DC, PR)'))
      .max(100)
      .optional(),
    cost_per_complete: money.optional(),
    cost_per_incentive: money.optional(),
    honoraria: money.optional(),
    url: httpUrl.refine((v) => v.includes('<npi>'), 'must contain the literal <npi> placeholder').optional(),
    closes_at: utcTimestamp,
    created_at: utcTimestamp,
    updated_at: utcTimestamp,
  })
  .strict()
export type Quota = z.output<typeof quotaSchema>

export const quotaInputSchema = quotaSchema.extend({created_at: utcTimestamp.optional(), updated_at: utcTimestamp.optional()}).strict()
export type QuotaInput = z.input<typeof quotaInputSchema>

export const memberSchema = z
  .object({
    npi,
    honoraria: money,
    url: httpUrl,
  })
  .strict()
export type QuotaMember = z.output<typeof memberSchema>
export type QuotaMemberInput = z.input<typeof memberSchema>

export const memberListSchema = z.array(memberSchema, {error: 'must be an array of quota members'})

export const eventSchema = z
  .object({
    npi,
    quota_id: id.optional(),
    project_id: id,
    state: anyCase(EVENT_STATES),
    event_at: utcTimestamp,
  })
  .strict()
  .superRefine((e, ctx) => {
    if (e.state !== 'start' && e.quota_id === undefined) ctx.addIssue({code: 'custom', path: ['quota_id'], message: `is required for a ${e.state} event`})
  })
export type SurveyEvent = z.output<typeof eventSchema>

export const eventInputSchema = z
  .object({
    npi,
    quota_id: id.optional(),
    project_id: id,
    state: anyCase(EVENT_STATES),
    event_at: utcTimestamp.optional(),
  })
  .strict()
  .superRefine((e, ctx) => {
    if (e.state !== 'start' && e.quota_id === undefined) ctx.addIssue({code: 'custom', path: ['quota_id'], message: `is required for a ${e.state} event`})
  })
export type SurveyEventInput = z.input<typeof eventInputSchema>

/**
 * The wire form of each resource: exactly the spec's fields, in the spec's order, absent optional
 * fields left out, and money written as a JSON number made from its decimal text.
 */
export function projectBody(p: Project): JsonText<Project> {
  return toJsonText<Project>({
    project_id: p.project_id,
    name: p.name,
    custom_text: p.custom_text,
    duration: p.duration,
    status: p.status,
    project_type: p.project_type,
    created_at: p.created_at,
    updated_at: p.updated_at,
  })
}

export function quotaBody(q: Quota): JsonText<Record<string, unknown>> {
  return toJsonText<Record<string, unknown>>({
    quota_id: q.quota_id,
    project_id: q.project_id,
    status: q.status,
    limit: q.limit,
    duration: q.duration,
    incidence_rate: q.incidence_rate,
    type: q.type,
    matching_specialties: q.matching_specialties,
    matching_regions: q.matching_regions,
    cost_per_complete: moneyJson(q.cost_per_complete),
    cost_per_incentive: moneyJson(q.cost_per_incentive),
    honoraria: moneyJson(q.honoraria),
    url: q.url,
    closes_at: q.closes_at,
    created_at: q.created_at,
    updated_at: q.updated_at,
  })
}

export function memberJson(m: QuotaMember): {npi: string; honoraria: number; url: string} {
  return {npi: m.npi, honoraria: Number(m.honoraria), url: m.url}
}

export function eventBody(e: SurveyEvent): string {
  return JSON.stringify({npi: e.npi, quota_id: e.quota_id, project_id: e.project_id, state: e.state, event_at: e.event_at})
}

// The schema bounds amounts to 14 significant digits, so Number(text) prints back as the same text.
function moneyJson(text: string | undefined): number | undefined {
  return text === undefined ? undefined : Number(text)
}
