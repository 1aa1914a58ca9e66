import {z} from 'zod'
import {fromJsonText} from '../../store/json.js'
import type {PulseQuestionRow} from './tables.js'
import type {PulseQuestion, PulseRowQuestion} from './schema.js'

/** A stored question (and, for grids, its stored rows) in the export's shape and key order. */
export function questionFromRows(row: PulseQuestionRow, gridRows: PulseQuestionRow[] | undefined): PulseQuestion {
  return {
    ...questionFields(row),
    Rows: row.has_rows === 1 ? (gridRows ?? []).map((r) => ({...questionFields(r), Rows: r.has_rows === 1 ? [] : null}) satisfies PulseRowQuestion) : null,
  }
}

const stringList = z.array(z.string())

function questionFields(row: PulseQuestionRow) {
  return {
    QuestionCode: row.code,
    Title: row.title,
    Type: row.type,
    IsScreener: row.is_screener === 1,
    Choices: fromJsonText(row.choices, stringList, `the choices of question ${row.code}`),
    ParentCode: row.parent_code,
    OtherAvailable: row.other_available === 1,
    DisplayUnit: row.display_unit,
    FixedSumTotal: row.fixed_sum_total,
    AnswersRequired: row.answers_required,
    FreetextLabels: row.freetext_labels === null ? null : fromJsonText(row.freetext_labels, stringList, `the free-text labels of question ${row.code}`),
  }
}

/** Rebuilds the nested question list from the flat stored rows. */
export function nestQuestions(rows: PulseQuestionRow[]): PulseQuestion[] {
  const rowsOf = new Map<number, PulseQuestionRow[]>()
  for (const row of rows) {
    if (row.grid_id === null) continue
    const list = rowsOf.get(row.grid_id) ?? []
    list.push(row)
    rowsOf.set(row.grid_id, list)
  }
  return rows.filter((r) => r.grid_id === null).map((r) => questionFromRows(r, rowsOf.get(r.id)))
}
