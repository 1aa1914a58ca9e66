import {z} from 'zod'
import {useOpenApi} from '../../lib/zod.js'

useOpenApi()

/** The question types the spec lists; the seeder uses all of them. */
export const QUESTION_TYPES = ['Rank', 'Text', 'MultiSelect', 'SingleSelect', 'GridMultiSelect', 'GridSingleSelect', 'Numeric'] as const
export type QuestionType = (typeof QUESTION_TYPES)[number]
export const GRID_TYPES: readonly string[] = ['GridMultiSelect', 'GridSingleSelect']

export const SURVEY_STATUSES = ['Incomplete', 'ScreenedOut', 'ScreenedIn', 'Completed', 'QuotaFull'] as const
export type SurveyStatus = (typeof SURVEY_STATUSES)[number]

export const PULSE_STATUSES = ['Completed', 'Draft', 'Launched', 'Queued', 'Held', 'PendingMasterApproval', 'Pending'] as const
export type PulseStatus = (typeof PULSE_STATUSES)[number]

/** Datetimes go out as ISO 8601 UTC with Z, to the second unless the value carries milliseconds. */
export function isoUtc(value: string | Date): string {
  return new Date(value).toISOString().replace('.000Z', 'Z')
}

const text = (max: number) => z.string().max(max, `must be at most ${max} characters`)
const guid = z
  .guid('must be a GUID (8-4-4-4-12 hex digits)')
  .transform((v) => v.toLowerCase())
  .openapi({example: '3f1c2a9e-7b4d-4e2a-9c1f-0a5b6d7e8f90'})
const datetime = z.iso
  .datetime({offset: true, error: 'must be an ISO 8601 datetime with Z or an offset'})
  .transform((v) => isoUtc(v))
  .openapi({example: '2026-10-12T14:05:00Z'})
/** Optional fields of the spec are always present in an export, as null when unset; a file may omit them. */
const optional = <T extends z.ZodType>(schema: T) => schema.nullable().default(null)
const code = z.string().min(1, 'must not be empty').max(64, 'must be at most 64 characters')
const questionType = z
  .string()
  .regex(/^[A-Za-z]{1,40}$/, 'must be a question type name such as SingleSelect')
  .openapi({description: 'Rank, Text, MultiSelect, SingleSelect, GridMultiSelect, GridSingleSelect or Numeric'})

const questionFields = {
  QuestionCode: code,
  Title: text(2000),
  Type: questionType,
  IsScreener: z.boolean(),
  Choices: z.array(text(500)).max(200, 'at most 200 choices'),
  ParentCode: optional(code),
  OtherAvailable: z.boolean(),
  DisplayUnit: optional(text(40)),
  FixedSumTotal: optional(z.number().int('must be a whole number')),
  AnswersRequired: z.number().int('must be a whole number').min(0, 'must not be negative'),
  FreetextLabels: optional(z.array(text(500)).max(50, 'at most 50 labels')),
}

/** A row of a grid: a question of its own, without rows. */
export const rowSchema = z
  .object({...questionFields, Rows: optional(z.array(z.null()).max(0, 'a grid row cannot have rows of its own'))})
  .strict()
  .openapi('PulseQuestionRow')

export const questionSchema = z
  .object({...questionFields, Rows: optional(z.array(rowSchema).max(100, 'at most 100 rows'))})
  .strict()
  .openapi('PulseQuestion')

export const respondentSchema = z
  .object({
    RespondentId: guid,
    SermoId: optional(z.number().int('must be a whole number').nonnegative()),
    SurveyStatus: z.enum(SURVEY_STATUSES),
    Profile: z.array(z.object({Key: text(100).min(1, 'must not be empty'), Value: text(500)}).strict()).max(50),
    Answers: z.array(z.object({QuestionCode: code, Values: z.array(text(5000)).max(200)}).strict()).max(1000),
    FirstInteraction: datetime,
    LastInteraction: datetime,
  })
  .strict()
  .openapi('PulseRespondent')

export const projectSchema = z
  .object({
    ProjectId: guid,
    Title: text(500).min(1, 'must not be empty'),
    InternalTitle: text(500),
    Identifier: optional(text(200)),
    StartDate: optional(datetime),
    EndDate: optional(datetime),
    FieldingTime: z.string().regex(/^\d{2}:[0-5]\d$/, 'must be hh:mm'),
    ExternalIntroduction: text(10000),
    Questions: z.array(questionSchema).max(500, 'at most 500 questions'),
  })
  .strict()
  .openapi('PulseProject')

/** The export object; also the input of `import-pulse`, checked for consistency as a whole. */
export const exportSchema = z
  .object({
    Project: projectSchema,
    Respondents: z.array(respondentSchema),
    ClientName: z.string(),
  })
  .strict()
  .superRefine((doc, ctx) => {
    const issue = (path: PropertyKey[], message: string) => ctx.addIssue({code: 'custom', path, message})
    const project = doc.Project
    if (project.StartDate && project.EndDate && project.EndDate < project.StartDate) issue(['Project', 'EndDate'], 'must not be before StartDate')
    const codes = new Set<string>()
    const topLevel = new Set<string>()
    project.Questions.forEach((q, i) => {
      const at = ['Project', 'Questions', i]
      if (codes.has(q.QuestionCode)) issue([...at, 'QuestionCode'], `duplicates question code ${q.QuestionCode}`)
      codes.add(q.QuestionCode)
      if (q.ParentCode !== null && !topLevel.has(q.ParentCode)) issue([...at, 'ParentCode'], `must name an earlier question (no question ${q.ParentCode} before this one)`)
      topLevel.add(q.QuestionCode)
      const grid = GRID_TYPES.includes(q.Type)
      if (grid && (q.Rows === null || q.Rows.length === 0)) issue([...at, 'Rows'], `a ${q.Type} question needs rows`)
      if (!grid && q.Rows !== null && q.Rows.length > 0) issue([...at, 'Rows'], `only grid questions have rows, not ${q.Type}`)
      q.Rows?.forEach((row, j) => {
        if (codes.has(row.QuestionCode)) issue([...at, 'Rows', j, 'QuestionCode'], `duplicates question code ${row.QuestionCode}`)
        codes.add(row.QuestionCode)
      })
    })
    const respondents = new Set<string>()
    doc.Respondents.forEach((r, i) => {
      const at = ['Respondents', i]
      if (respondents.has(r.RespondentId)) issue([...at, 'RespondentId'], `duplicates respondent ${r.RespondentId}`)
      respondents.add(r.RespondentId)
      if (r.LastInteraction < r.FirstInteraction) issue([...at, 'LastInteraction'], 'must not be before FirstInteraction')
      const answered = new Set<string>()
      r.Answers.forEach((a, j) => {
        if (!codes.has(a.QuestionCode)) issue([...at, 'Answers', j, 'QuestionCode'], `no question ${a.QuestionCode} in this pulse`)
        else if (answered.has(a.QuestionCode)) issue([...at, 'Answers', j, 'QuestionCode'], `answers ${a.QuestionCode} twice`)
        answered.add(a.QuestionCode)
      })
    })
  })
  .openapi('PulseExport')

export type PulseDocument = z.output<typeof exportSchema>
export type PulseQuestion = z.output<typeof questionSchema>
export type PulseRowQuestion = z.output<typeof rowSchema>
export type PulseRespondent = z.output<typeof respondentSchema>
export type PulseProject = z.output<typeof projectSchema>

export const projectIdParam = z.object({
  projectId: z.string().openapi({
    param: {name: 'projectId', in: 'path'},
    example: '51c9a47c-cd64-402e-a040-23ba7921059b',
    description: 'A pulse of the calling client (the example is a pulse of the demo client)',
  }),
})

export const projectsInfoResponse = z.object({ProjectIds: z.array(z.string())}).openapi('ClientProjects')

export const clientInfoResponse = z
  .object({
    ClientInfo: z.object({Admin: z.boolean()}),
    ProjectInfo: z.array(z.object({ProjectId: z.string(), Title: z.string(), Status: z.enum(PULSE_STATUSES), LastUpdated: z.string()})),
  })
  .openapi('ClientInfo')

export const oauthErrorBody = z.object({error: z.string(), error_description: z.string()}).openapi('PulseError')
