import {AppError, notFound} from '../../errors.js'
import {narrow} from '../../store/database.js'
import {iso} from '../../lib/clock.js'
import {isUuid} from '../../lib/ids.js'
import {parseInput} from '../../lib/validate.js'
import {findClient} from '../../registry/repository.js'
import {hasGrant} from '../../registry/service.js'
import {writeTransaction} from '../../store/transactions.js'
import type {PulseDb as Db} from './tables.js'
import {toJsonText} from '../../store/json.js'
import {nestQuestions} from './render.js'
import * as repo from './repository.js'
import type {NewPulseRespondentRow} from './tables.js'
import {
  exportSchema,
  PULSE_STATUSES,
  isoUtc,
  type PulseDocument,
  type PulseProject,
  type PulseQuestion,
  type PulseRowQuestion,
  type PulseRespondent,
  type PulseStatus,
} from './schema.js'
import {pulseConfig} from './config.js'

/** Who is asking: a client, and whether it is an admin (admins see every pulse). */
export interface Viewer {
  clientId: string
  admin: boolean
}

/** Respondents read per query while exporting; each page becomes one chunk of the response. */
export const EXPORT_PAGE_SIZE = pulseConfig.exportPageSize

const UTF8 = new TextEncoder()

/** The same answer whether the pulse is missing or someone else's, so ids cannot be probed. */
function noSuchPulse(projectId: string): AppError {
  return notFound(`no pulse ${projectId.slice(0, 100)} among this client's projects`)
}

export interface PreparedExport {
  projectId: string
  /** The export document as UTF-8 pieces, read from the store page by page as they are consumed. */
  chunks: () => AsyncGenerator<Uint8Array, void, undefined>
}

/**
 * Checks access and loads the pulse head (questions), then hands back a generator for the rest.
 * Every refusal happens here, before the caller starts writing a response.
 */
export async function prepareExport(db: Db, viewer: Viewer, projectId: string, pageSize: number = EXPORT_PAGE_SIZE): Promise<PreparedExport> {
  if (!isUuid(projectId)) throw noSuchPulse(projectId)
  const id = projectId.toLowerCase()
  const pulse = await repo.findPulseWithOwner(db, id)
  if (!pulse || (!viewer.admin && pulse.client_id !== viewer.clientId)) throw noSuchPulse(projectId)
  const questions = nestQuestions(await repo.questionsOf(db, id))
  const project = {
    ProjectId: pulse.id,
    Title: pulse.title,
    InternalTitle: pulse.internal_title,
    Identifier: pulse.identifier,
    StartDate: pulse.start_date,
    EndDate: pulse.end_date,
    FieldingTime: pulse.fielding_time,
    ExternalIntroduction: pulse.external_introduction,
    Questions: questions,
  }
  const head = UTF8.encode(`{"Project":${JSON.stringify(project)},"Respondents":[`)
  const tail = UTF8.encode(`],"ClientName":${JSON.stringify(pulse.client_name)}}`)

  async function* chunks(): AsyncGenerator<Uint8Array, void, undefined> {
    yield head
    let after = 0
    for (;;) {
      const page = await repo.respondentJsonPage(db, id, after, pageSize, after !== 0)
      if (page.last === null || !page.bytes) break
      yield page.bytes
      after = page.last
      if (page.count < pageSize) break
    }
    yield tail
  }
  return {projectId: id, chunks}
}

/** The whole export as one parsed document, for tests and scripts; the HTTP route streams instead. */
export async function exportDocument(db: Db, viewer: Viewer, projectId: string): Promise<PulseDocument> {
  const prepared = await prepareExport(db, viewer, projectId)
  const parts: Uint8Array[] = []
  for await (const chunk of prepared.chunks()) parts.push(chunk)
  const document: unknown = JSON.parse(Buffer.concat(parts).toString('utf8'))
  if (!isPulseDocument(document)) throw new Error(`the export of ${projectId} is not a pulse document`)
  return document
}

/** The export's outline, checked before the document is handed on as one. */
function isPulseDocument(value: unknown): value is PulseDocument {
  if (typeof value !== 'object' || value === null) return false
  const doc = value as Record<string, unknown>
  return typeof doc.Project === 'object' && doc.Project !== null && Array.isArray(doc.Respondents)
}

export interface ClientProjects {
  ProjectIds: string[]
}

export async function clientProjects(db: Db, viewer: Viewer): Promise<ClientProjects> {
  const rows = await repo.pulseHeadlines(db, viewer.admin ? null : viewer.clientId)
  return {ProjectIds: rows.map((r) => r.id)}
}

export interface ClientInfo {
  ClientInfo: {Admin: boolean}
  ProjectInfo: {ProjectId: string; Title: string; Status: PulseStatus; LastUpdated: string}[]
}

export async function clientInfo(db: Db, viewer: Viewer): Promise<ClientInfo> {
  const rows = await repo.pulseHeadlines(db, viewer.admin ? null : viewer.clientId)
  return {
    ClientInfo: {Admin: viewer.admin},
    ProjectInfo: rows.map((r) => ({ProjectId: r.id, Title: r.title, Status: r.status, LastUpdated: r.last_updated})),
  }
}

/** A client that may own pulses: it must exist and hold the pulses grant. */
export async function requirePulseOwner(db: Db, clientId: string) {
  const client = await findClient(narrow(db), clientId)
  if (!client) throw notFound(`no client ${clientId}`)
  if (!hasGrant(client, 'pulses')) throw new AppError('bad_request', `client ${clientId} does not have the pulses grant (add it with update-client --grant)`)
  return client
}

export interface StoredPulse {
  project_id: string
  client_id: string
  title: string
  status: PulseStatus
  questions: number
  respondents: number
}

/**
 * Writes a whole pulse (already validated) with its questions, respondents, profiles and answers.
 * The caller holds a write transaction.
 */
export async function storePulse(
  trx: Db,
  clientId: string,
  p: PulseProject,
  respondentList: Iterable<PulseRespondent>,
  status: PulseStatus,
  lastUpdated: string,
  now: Date,
): Promise<StoredPulse> {
  await repo.insertPulse(trx, {
    id: p.ProjectId,
    client_id: clientId,
    title: p.Title,
    internal_title: p.InternalTitle,
    identifier: p.Identifier,
    start_date: p.StartDate,
    end_date: p.EndDate,
    fielding_time: p.FieldingTime,
    external_introduction: p.ExternalIntroduction,
    status,
    last_updated: lastUpdated,
    created_at: iso(now),
  })
  for (const [position, q] of p.Questions.entries()) {
    const gridId = await repo.insertQuestion(trx, questionRow(p.ProjectId, null, position, q))
    for (const [rowPosition, row] of (q.Rows ?? []).entries()) {
      await repo.insertQuestion(trx, questionRow(p.ProjectId, gridId, rowPosition, row))
    }
  }
  let seq = await repo.nextRespondentSeq(trx)
  const respondents: NewPulseRespondentRow[] = []
  const profiles: {respondent_seq: number; position: number; key: string; value: string}[] = []
  const answers: {respondent_seq: number; position: number; question_code: string; answer_values: string}[] = []
  // Written in slices so a pulse of many thousands of respondents never holds every row object at once.
  const flush = async () => {
    await repo.insertRespondents(trx, respondents.splice(0))
    await repo.insertProfileEntries(trx, profiles.splice(0))
    await repo.insertAnswers(trx, answers.splice(0))
  }
  let count = 0
  for (const r of respondentList) {
    count++
    respondents.push({
      seq,
      pulse_id: p.ProjectId,
      respondent_id: r.RespondentId,
      sermo_id: r.SermoId,
      survey_status: r.SurveyStatus,
      first_interaction: r.FirstInteraction,
      last_interaction: r.LastInteraction,
    })
    for (const [position, entry] of r.Profile.entries()) profiles.push({respondent_seq: seq, position, key: entry.Key, value: entry.Value})
    for (const [position, answer] of r.Answers.entries())
      answers.push({respondent_seq: seq, position, question_code: answer.QuestionCode, answer_values: JSON.stringify(answer.Values)})
    seq++
    if (respondents.length >= 1000) await flush()
  }
  await flush()
  await repo.renderExportJson(trx, p.ProjectId)
  return {project_id: p.ProjectId, client_id: clientId, title: p.Title, status, questions: p.Questions.length, respondents: count}
}

function questionRow(pulseId: string, gridId: number | null, position: number, q: PulseQuestion | PulseRowQuestion) {
  return {
    pulse_id: pulseId,
    grid_id: gridId,
    position,
    code: q.QuestionCode,
    title: q.Title,
    type: q.Type,
    is_screener: q.IsScreener ? 1 : 0,
    choices: toJsonText(q.Choices),
    parent_code: q.ParentCode,
    other_available: q.OtherAvailable ? 1 : 0,
    display_unit: q.DisplayUnit,
    fixed_sum_total: q.FixedSumTotal,
    answers_required: q.AnswersRequired,
    freetext_labels: q.FreetextLabels === null ? null : toJsonText(q.FreetextLabels),
    has_rows: q.Rows === null ? 0 : 1,
  }
}

/** A pulse's status when an import does not name one: read from its dates. */
export function statusFromDates(project: Pick<PulseDocument['Project'], 'StartDate' | 'EndDate'>, now: Date): PulseStatus {
  const stamp = isoUtc(now)
  if (project.EndDate !== null && project.EndDate <= stamp) return 'Completed'
  if (project.StartDate !== null) return project.StartDate <= stamp ? 'Launched' : 'Queued'
  return 'Draft'
}

export interface ImportOptions {
  /** Store the pulse under this id instead of the file's Project.ProjectId. */
  projectId?: string | undefined
  status?: string | undefined
}

/**
 * Loads a pulse in the export shape for a client. The file is checked whole first (shape, then
 * consistency: unique codes, answers naming real questions…); one bad value rejects all of it.
 * The file's ClientName is informational: the owner is `clientId`.
 */
export async function importPulse(db: Db, clientId: string, input: unknown, options: ImportOptions, now: Date): Promise<StoredPulse> {
  const doc = parseInput(exportSchema, input)
  if (options.projectId !== undefined) {
    if (!isUuid(options.projectId)) throw new AppError('bad_request', '--project-id must be a GUID (8-4-4-4-12 hex digits)')
    doc.Project.ProjectId = options.projectId.toLowerCase()
  }
  let status: PulseStatus | undefined
  if (options.status !== undefined) {
    status = PULSE_STATUSES.find((known) => known === options.status)
    if (status === undefined) throw new AppError('bad_request', `--status must be one of ${PULSE_STATUSES.join(', ')}`)
  }
  return writeTransaction(db, async (trx) => {
    await requirePulseOwner(trx, clientId)
    if (await repo.pulseExists(trx, doc.Project.ProjectId)) {
      throw new AppError('conflict', `pulse ${doc.Project.ProjectId} already exists; import it under another id with --project-id`)
    }
    return storePulse(trx, clientId, doc.Project, doc.Respondents, status ?? statusFromDates(doc.Project, now), isoUtc(now), now)
  })
}

export interface PulseListItem {
  project_id: string
  client_id: string
  title: string
  status: string
  respondents: number
  last_updated: string
}

export async function listPulses(db: Db, clientId?: string): Promise<PulseListItem[]> {
  if (clientId !== undefined && !(await findClient(narrow(db), clientId))) throw notFound(`no client ${clientId}`)
  const rows = await repo.listPulses(db, clientId ?? null)
  return rows.map((r) => ({
    project_id: r.id,
    client_id: r.client_id,
    title: r.title,
    status: r.status,
    respondents: Number(r.respondents ?? 0),
    last_updated: r.last_updated,
  }))
}
