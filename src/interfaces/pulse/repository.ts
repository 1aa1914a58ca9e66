import {sql} from 'kysely'
import type {PulseDb as Db, PulseView} from './tables.js'
import {countByClient, type ClientHolding} from '../../store/client-holding.js'
import {isPostgres} from '../../store/dialect.js'
import type {NewPulseQuestionRow, NewPulseRespondentRow, NewPulseRow, PulseQuestionRow} from './tables.js'

/** SQLite allows 32,766 bound values a statement; stay well below it. */
const MAX_PARAMS = 8000

async function insertChunked<T>(rows: T[], columns: number, insert: (chunk: T[]) => Promise<unknown>): Promise<void> {
  const size = Math.max(1, Math.floor(MAX_PARAMS / columns))
  for (let i = 0; i < rows.length; i += size) await insert(rows.slice(i, i + size))
}

export async function insertPulse(db: Db, row: NewPulseRow): Promise<void> {
  await db.insertInto('pulses').values(row).execute()
}

export async function insertQuestion(db: Db, row: NewPulseQuestionRow): Promise<number> {
  const inserted = await db.insertInto('pulse_questions').values(row).returning('id').executeTakeFirstOrThrow()
  return inserted.id
}

/** The next free respondent sequence number. Call inside a write transaction only. */
export async function nextRespondentSeq(db: Db): Promise<number> {
  const row = await db.selectFrom('pulse_respondents').select(sql<number | null>`max(seq)`.as('top')).executeTakeFirst()
  return (row?.top ?? 0) + 1
}

export async function insertRespondents(db: Db, rows: NewPulseRespondentRow[]): Promise<void> {
  await insertChunked(rows, 7, (chunk) => db.insertInto('pulse_respondents').values(chunk).execute())
}

export async function insertProfileEntries(db: Db, rows: {respondent_seq: number; position: number; key: string; value: string}[]): Promise<void> {
  await insertChunked(rows, 4, (chunk) => db.insertInto('pulse_profile_entries').values(chunk).execute())
}

export async function insertAnswers(db: Db, rows: {respondent_seq: number; position: number; question_code: string; answer_values: string}[]): Promise<void> {
  await insertChunked(rows, 4, (chunk) => db.insertInto('pulse_answers').values(chunk).execute())
}

export async function pulseExists(db: Db, id: string): Promise<boolean> {
  return (await db.selectFrom('pulses').select('id').where('id', '=', id).executeTakeFirst()) !== undefined
}

/** A pulse with its owner's name (the export's ClientName). */
export async function findPulseWithOwner(db: Db, id: string) {
  return db.selectFrom('pulses as p').innerJoin('clients as c', 'c.id', 'p.client_id').selectAll('p').select('c.name as client_name').where('p.id', '=', id).executeTakeFirst()
}

/** Questions and grid rows of a pulse, top-level questions first, each group in position order. */
export async function questionsOf(db: Db, pulseId: string): Promise<PulseQuestionRow[]> {
  return db.selectFrom('pulse_questions').selectAll().where('pulse_id', '=', pulseId).orderBy(sql`grid_id is not null`).orderBy('grid_id').orderBy('position').execute()
}

/**
 * A respondent (table alias r) rendered to its export JSON object from the relational rows: its
 * profile entries and answers in position order. The string quoting escapes exactly as
 * JSON.stringify does on both stores (SQLite's json_quote, PostgreSQL's to_json of text); stored
 * answer values are already JSON arrays (written by JSON.stringify) and go in as they are. The two
 * stores spell concatenation of numbers and ordered aggregation differently, hence two texts of
 * the same rendering.
 */
const RENDER_RESPONDENT_SQLITE = sql<string>`'{"RespondentId":' || json_quote(r.respondent_id)
  || ',"SermoId":' || coalesce(r.sermo_id, 'null')
  || ',"SurveyStatus":' || json_quote(r.survey_status)
  || ',"Profile":[' || coalesce((
    select group_concat('{"Key":' || json_quote(p.key) || ',"Value":' || json_quote(p.value) || '}', ',' order by p.position)
    from pulse_profile_entries p where p.respondent_seq = r.seq), '')
  || '],"Answers":[' || coalesce((
    select group_concat('{"QuestionCode":' || json_quote(a.question_code) || ',"Values":' || a.answer_values || '}', ',' order by a.position)
    from pulse_answers a where a.respondent_seq = r.seq), '')
  || '],"FirstInteraction":' || json_quote(r.first_interaction)
  || ',"LastInteraction":' || json_quote(r.last_interaction) || '}'`

const RENDER_RESPONDENT_POSTGRES = sql<string>`'{"RespondentId":' || to_json(r.respondent_id::text)::text
  || ',"SermoId":' || coalesce(r.sermo_id::text, 'null')
  || ',"SurveyStatus":' || to_json(r.survey_status::text)::text
  || ',"Profile":[' || coalesce((
    select string_agg('{"Key":' || to_json(p.key::text)::text || ',"Value":' || to_json(p.value::text)::text || '}', ',' order by p.position)
    from pulse_profile_entries p where p.respondent_seq = r.seq), '')
  || '],"Answers":[' || coalesce((
    select string_agg('{"QuestionCode":' || to_json(a.question_code::text)::text || ',"Values":' || a.answer_values || '}', ',' order by a.position)
    from pulse_answers a where a.respondent_seq = r.seq), '')
  || '],"FirstInteraction":' || to_json(r.first_interaction::text)::text
  || ',"LastInteraction":' || to_json(r.last_interaction::text)::text || '}'`

const renderRespondent = (db: Db) => (isPostgres(db) ? RENDER_RESPONDENT_POSTGRES : RENDER_RESPONDENT_SQLITE)

/**
 * Renders (again) the stored export JSON of a pulse's respondents from their rows. Writers call it
 * in the same transaction as the rows they write, so the two never disagree.
 */
export async function renderExportJson(db: Db, pulseId: string): Promise<void> {
  await sql`update pulse_respondents as r set export_json = ${renderRespondent(db)} where r.pulse_id = ${pulseId}`.execute(db)
}

export interface RespondentPage {
  /** seq of the page's last respondent (the key of the next page), null when the page is empty. */
  last: number | null
  count: number
  /** The page's respondents as export JSON objects joined by commas, as UTF-8 bytes; null when empty. */
  bytes: Uint8Array | null
}

/**
 * One keyset page of a pulse's respondents as ready export JSON: one statement, one buffer of
 * UTF-8 (a blob on SQLite, bytea on PostgreSQL, so the text never becomes a JavaScript string),
 * whatever the page size. `continues` puts the comma that separates this page from the previous
 * one in front. Pages are separate short statements rather than one cursor held open: a slow
 * reader then holds no transaction and no connection between pages, on either store.
 */
export async function respondentJsonPage(db: Db, pulseId: string, afterSeq: number, limit: number, continues: boolean): Promise<RespondentPage> {
  const lead = continues ? ',' : ''
  const result = isPostgres(db)
    ? await sql<RespondentPage>`
    select max(seq) as last, count(*) as count, convert_to(${lead} || string_agg(doc, ',' order by seq), 'UTF8') as bytes from (
      select r.seq, coalesce(r.export_json, ${RENDER_RESPONDENT_POSTGRES}) as doc
      from pulse_respondents r
      where r.pulse_id = ${pulseId} and r.seq > ${afterSeq}
      order by r.seq
      limit ${limit}
    ) as page`.execute(db)
    : await sql<RespondentPage>`
    select max(seq) as last, count(*) as count, cast(${lead} || group_concat(doc, ',') as blob) as bytes from (
      select r.seq, coalesce(r.export_json, ${RENDER_RESPONDENT_SQLITE}) as doc
      from pulse_respondents r
      where r.pulse_id = ${pulseId} and r.seq > ${afterSeq}
      order by r.seq
      limit ${limit}
    )`.execute(db)
  return result.rows[0] ?? {last: null, count: 0, bytes: null}
}

/** Pulses visible to a client (every pulse when `clientId` is null), oldest first. */
export async function listPulses(db: Db, clientId: string | null) {
  let query = db
    .selectFrom('pulses as p')
    .select(['p.id', 'p.client_id', 'p.title', 'p.status', 'p.last_updated', 'p.created_at'])
    .select((eb) => eb.selectFrom('pulse_respondents as r').select(eb.fn.countAll<number>().as('n')).whereRef('r.pulse_id', '=', 'p.id').as('respondents'))
    .orderBy('p.created_at')
    .orderBy(sql`p.rowid`)
  if (clientId !== null) query = query.where('p.client_id', '=', clientId)
  return query.execute()
}

/** The light list behind /clients/projectsInfo and /clients/info (no respondent counts). */
export async function pulseHeadlines(db: Db, clientId: string | null) {
  let query = db.selectFrom('pulses').select(['id', 'title', 'status', 'last_updated']).orderBy('created_at').orderBy(sql`rowid`)
  if (clientId !== null) query = query.where('client_id', '=', clientId)
  return query.execute()
}

/**
 * A client's pulses, as remove-client counts and releases them; the schema deletes their
 * questions, respondents and answers with them.
 */
export const pulseHolding: ClientHolding<PulseView, 'pulses'> = {
  count: async (db, clientId) => ({pulses: await countByClient(db, 'pulses', clientId)}),
  release: async (trx, clientId) => {
    await trx.deleteFrom('pulses').where('client_id', '=', clientId).execute()
  },
}
