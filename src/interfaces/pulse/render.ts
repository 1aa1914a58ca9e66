import type {PulseQuestionRow} from './tables.js'
import type {PulseQuestion, PulseRowQuestion} from './schema.js'

/** A stored question (and, for grids, its stored rows) in the export's shape and key order. */
export function questionFromRows(row: PulseQuestionRow, gridRows: PulseQuestionRow[] | undefined): PulseQuestion {
  return {
    ...questionFields(row),
    Rows: row.has_rows === 1 ? (gridRows ?? []).map((r) => ({...questionFields(r), Rows: r.has_rows === 1 ? [] : null}) satisfies PulseRowQuestion) : null,
  }
}

function questionFields(row: PulseQuestionRow) {
  return {
    QuestionCode: row.code,
    Title: row.title,
    Type: row.type,
    IsScreener: row.is_screener === 1,
    Choices: JSON.parse(row.choices) as string[],
    ParentCode: row.parent_code,
    OtherAvailable: row.other_available === 1,
    DisplayUnit: row.display_unit,
    FixedSumTotal: row.fixed_sum_total,
    AnswersRequired: row.answers_required,
    FreetextLabels: row.freetext_labels === null ? null : (JSON.parse(row.freetext_labels) as string[]),
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
