import {Decimal} from 'decimal.js'
import {z} from 'zod'
import {canonical} from '../../lib/enums.js'

export const METHODS = ['summary', 'data'] as const
export type Method = (typeof METHODS)[number]

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/i

/** True for an ISO 8601 datetime with a time zone (Z or an offset) that names a real instant. */
export function isIsoDateTime(value: string): boolean {
  const match = ISO_UTC.exec(value)
  if (!match) return false
  const [year, month, day, hour, minute, secondOfMinute] = value.slice(0, 19).split(/[-T:]/).map(Number) as [number, number, number, number, number, number]
  // Date.parse rolls 2025-02-30 over into March; refuse it instead of moving the instant.
  // setUTCFullYear, not Date.UTC, which reads years 0 to 99 as 1900 to 1999 (0000 is a leap year, 1900 is not).
  const daysInMonth = new Date(new Date(0).setUTCFullYear(year, month, 0)).getUTCDate()
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth || hour > 23 || minute > 59 || secondOfMinute > 59) return false
  const offset = /([+-])(\d{2}):(\d{2})$/.exec(value)
  if (offset && (Number(offset[2]) > 14 || Number(offset[3]) > 59)) return false
  return !Number.isNaN(new Date(value).getTime())
}

/** An ISO 8601 datetime, stored as UTC with milliseconds so that text order is time order. */
export const isoDateTime = z
  .string()
  .refine(isIsoDateTime, 'must be an ISO 8601 datetime with a time zone, such as 2024-05-01T09:30:00Z')
  .transform((v) => new Date(v).toISOString())

/** Publication times must fall in the range the search keys can hold (see the migration). */
const publishedAt = isoDateTime.refine((v) => v >= '1970-01-01T00:00:00.000Z' && v < '2101-01-01T00:00:00.000Z', 'must fall between 1970 and 2100')

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

/** Free text; a lone UTF-16 surrogate (which UTF-8 storage cannot hold) becomes U+FFFD. */
const text = (max: number) =>
  z
    .string()
    .max(max, `must be at most ${max} characters`)
    .transform((v) => v.replace(LONE_SURROGATE, '\uFFFD'))

const author = z.preprocess(
  // Some samples spell the field "country of practice"; the model's name is country_of_practice.
  (value) => {
    if (value && typeof value === 'object' && !('country_of_practice' in value) && 'country of practice' in value) {
      const {'country of practice': country, ...rest} = value as Record<string, unknown>
      return {...rest, country_of_practice: country}
    }
    return value
  },
  z
    .object({
      id: z.union([z.string().min(1, 'is required').max(64), z.number().int().nonnegative().transform(String)]),
      specialty: text(200),
      country_of_practice: text(100),
      zipcode: text(20),
      post_badge: z.boolean(),
      comment_badge: z.boolean(),
    })
    .strict(),
)
export type AuthorInput = z.output<typeof author>

const positiveId = z
  .number()
  .int('must be an integer')
  .positive('must be positive')
  .max(2 ** 31 - 1, 'must be below 2147483648')

const comment = z
  .object({
    id: positiveId,
    author,
    published_at: publishedAt,
    content: text(100_000),
    helpful_count: z.number().int('must be an integer').nonnegative('must not be negative'),
  })
  .strict()
export type CommentInput = z.output<typeof comment>

const rating = z
  .union([z.number(), z.string()])
  .refine((v) => {
    try {
      const d = new Decimal(v)
      return d.isFinite() && d.gte(0) && d.lte(5) && d.decimalPlaces() <= 4
    } catch {
      return false
    }
  }, 'must be a decimal between 0 and 5 with at most 4 decimal places')
  .transform((v) => new Decimal(v).toString())

const post = z
  .object({
    id: positiveId,
    author,
    published_at: publishedAt,
    rating,
    iconsult: z.boolean(),
    solved_at: isoDateTime.nullable(),
    title: text(1_000),
    content: text(200_000),
    comments: z.array(comment).max(10_000),
  })
  // A key the import does not know is named rather than dropped: it is likely a misspelt field.
  .strict()
  .refine((p) => p.iconsult || p.solved_at === null, {message: 'must be null when the post is not an iConsult', path: ['solved_at']})
export type PostInput = z.output<typeof post>

/** One element of a document's conversations array. */
export const conversation = z.object({matched_terms: z.array(z.string()).optional(), post}).strict()

/** A whole data-call answer; a bare `conversations` array is wrapped into one before parsing. */
export const importDocument = z.object({conversations: z.array(conversation)}).loose()

const methods = z.array(z.preprocess((v) => (typeof v === 'string' ? (canonical(v, METHODS) ?? v) : v), z.enum(METHODS))).min(1, 'name at least one of summary, data')
const dataCalls = z.number().int('must be a whole number').nonnegative('must not be negative').max(1_000_000_000)
const renewDays = z.number().int('must be a whole number of days').min(1, 'must be at least 1').max(3660).nullable()

export const newApiKeySchema = z.object({
  client_id: z.string().min(1, 'is required'),
  methods: methods.default([...METHODS]),
  data_calls: dataCalls.default(1000),
  renew_days: renewDays.default(null),
  subscription_ends: isoDateTime.nullable().default(null),
})
export type NewApiKeyInput = z.input<typeof newApiKeySchema>

export const apiKeyPatchSchema = z.object({
  methods: methods.optional(),
  data_calls: dataCalls.optional(),
  renew_days: renewDays.optional(),
  subscription_ends: isoDateTime.nullable().optional(),
  revoke: z.boolean().optional(),
})
export type ApiKeyPatch = z.input<typeof apiKeyPatchSchema>
