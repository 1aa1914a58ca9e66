import type {Generated, Insertable, Kysely, Selectable} from 'kysely'
import type {GrantTables} from '../../grants/tables.js'
import type {RegistryTables} from '../../registry/tables.js'
import type {JsonColumn} from '../../store/json.js'
import type {PulseStatus, SurveyStatus} from './schema.js'

/** A pulse (short survey) owned by one client. Datetimes are ISO 8601 UTC text, sortable. */
export interface PulseTable {
  /** Lowercase UUID: the export's Project.ProjectId. */
  id: string
  client_id: string
  title: string
  internal_title: string
  identifier: string | null
  start_date: string | null
  end_date: string | null
  /** hh:mm */
  fielding_time: string
  external_introduction: string
  /** Completed, Draft, Launched, Queued, Held, PendingMasterApproval, Pending */
  status: PulseStatus
  /** When the status last changed (ProjectInfo.LastUpdated). */
  last_updated: string
  created_at: string
}

/**
 * A question, or a row of a grid question (grid_id points at the grid). Codes are unique within a
 * pulse across questions and rows, since answers to grids name the row.
 */
export interface PulseQuestionTable {
  id: Generated<number>
  pulse_id: string
  grid_id: number | null
  position: number
  code: string
  title: string
  type: string
  is_screener: number
  choices: JsonColumn<string[]>
  parent_code: string | null
  other_available: number
  display_unit: string | null
  fixed_sum_total: number | null
  answers_required: number
  freetext_labels: JsonColumn<string[]> | null
  /** 1 when the export carries Rows as an array (grids), 0 when Rows is null. */
  has_rows: number
}

export interface PulseRespondentTable {
  /** Insertion order: the export reads respondents in pages keyed on it. */
  seq: Generated<number>
  pulse_id: string
  respondent_id: string
  sermo_id: number | null
  survey_status: SurveyStatus
  first_interaction: string
  last_interaction: string
  /**
   * The respondent's export object as JSON text, rendered by SQL from this row, its profile
   * entries and its answers whenever they are written. Null means not rendered: the export then
   * renders it on the fly from the same rows, so clearing it is how a writer invalidates it.
   */
  export_json: string | null
}

export interface PulseProfileEntryTable {
  respondent_seq: number
  position: number
  key: string
  value: string
}

export interface PulseAnswerTable {
  respondent_seq: number
  position: number
  question_code: string
  /** The answer's Values as compact JSON (an array of strings), written only by this interface. */
  answer_values: string
}

export interface PulseTables {
  pulses: PulseTable
  pulse_questions: PulseQuestionTable
  pulse_respondents: PulseRespondentTable
  pulse_profile_entries: PulseProfileEntryTable
  pulse_answers: PulseAnswerTable
}

export type PulseRow = Selectable<PulseTable>
export type NewPulseRow = Insertable<PulseTable>
export type PulseQuestionRow = Selectable<PulseQuestionTable>
export type NewPulseQuestionRow = Insertable<PulseQuestionTable>
export type PulseRespondentRow = Selectable<PulseRespondentTable>
export type NewPulseRespondentRow = Insertable<PulseRespondentTable>

/** What this layer's queries see: interface D's tables and those of the registry and grants below it. */
export type PulseView = PulseTables & RegistryTables & GrantTables
export type PulseDb = Kysely<PulseView>
