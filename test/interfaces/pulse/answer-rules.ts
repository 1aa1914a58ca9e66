import type {PulseProject, PulseQuestion, PulseRespondent} from '../../../src/interfaces/pulse/schema.js'

/**
 * The answer rules a generated pulse must obey, written independently of the generator so a test
 * can catch it breaking them. Returns every violation found for one respondent (empty = valid).
 */
export function answerProblems(project: PulseProject, respondent: PulseRespondent): string[] {
  const problems: string[] = []
  const top = new Map(project.Questions.map((q) => [q.QuestionCode, q]))
  const rows = new Map<string, {row: PulseQuestion; grid: PulseQuestion}>()
  for (const q of project.Questions) for (const row of q.Rows ?? []) rows.set(row.QuestionCode, {row: {...row, Rows: null}, grid: q})
  const answers = new Map(respondent.Answers.map((a) => [a.QuestionCode, a.Values]))
  const who = respondent.RespondentId
  const fail = (code: string, why: string) => problems.push(`${who} ${code}: ${why}`)

  for (const {QuestionCode: code, Values: values} of respondent.Answers) {
    const question = top.get(code)
    const row = rows.get(code)
    if (!question && !row) {
      fail(code, 'answers a question that does not exist')
      continue
    }
    if (question && question.Rows !== null) {
      fail(code, 'a grid is answered per row, never as a whole')
      continue
    }
    const q = question ?? row!.row
    const inChoices = values.filter((v) => q.Choices.includes(v))
    const free = values.filter((v) => !q.Choices.includes(v))
    const distinct = new Set(values).size === values.length
    switch (q.Type) {
      case 'SingleSelect':
        if (values.length !== 1) fail(code, `single select has ${values.length} values`)
        if (free.length > (q.OtherAvailable ? 1 : 0)) fail(code, `value not among the choices: ${free.join(' | ')}`)
        break
      case 'MultiSelect':
        if (values.length < Math.max(1, q.AnswersRequired)) fail(code, `needs at least ${q.AnswersRequired} selections, has ${values.length}`)
        if (!distinct) fail(code, 'selects a choice twice')
        if (free.length > (q.OtherAvailable ? 1 : 0)) fail(code, `value not among the choices: ${free.join(' | ')}`)
        break
      case 'Rank': {
        const permutation = values.length === q.Choices.length && distinct && inChoices.length === values.length
        if (!permutation) fail(code, 'ranks are not a permutation of the choices')
        if (values.length !== q.AnswersRequired) fail(code, `ranks ${values.length} items, AnswersRequired is ${q.AnswersRequired}`)
        break
      }
      case 'Numeric': {
        const inputs = Math.max(1, q.Choices.length)
        if (values.length !== inputs) fail(code, `numeric needs ${inputs} values, has ${values.length}`)
        if (!values.every((v) => /^\d+$/.test(v))) fail(code, `non-numeric value in ${values.join(',')}`)
        if (q.FixedSumTotal !== null) {
          const sum = values.reduce((total, v) => total + Number(v), 0)
          if (sum !== q.FixedSumTotal) fail(code, `values sum to ${sum}, not ${q.FixedSumTotal}`)
        }
        break
      }
      case 'Text':
        if (values.length !== (q.FreetextLabels?.length ?? 1)) fail(code, `text needs one value per label (${q.FreetextLabels?.length}), has ${values.length}`)
        if (values.some((v) => v.trim() === '')) fail(code, 'empty text answer')
        if (values.length < q.AnswersRequired) fail(code, `needs ${q.AnswersRequired} answers`)
        break
      default:
        fail(code, `unexpected type ${q.Type} for an answered question`)
    }
  }

  // Grids: a row answered implies every row of that grid answered (per-row answers, all required).
  for (const q of project.Questions) {
    if (!q.Rows) continue
    const answered = q.Rows.filter((r) => answers.has(r.QuestionCode)).length
    if (answered !== 0 && answered !== q.Rows.length) fail(q.QuestionCode, `${answered} of ${q.Rows.length} grid rows answered`)
    if (q.AnswersRequired !== q.Rows.length) fail(q.QuestionCode, 'grid AnswersRequired should equal its row count')
  }
  // Follow-ups only after their parent was answered.
  for (const q of project.Questions) {
    if (q.ParentCode !== null && answers.has(q.QuestionCode) && !answers.has(q.ParentCode)) fail(q.QuestionCode, `follow-up answered without its parent ${q.ParentCode}`)
  }
  // Status rules.
  const screenerCodes = new Set(project.Questions.filter((q) => q.IsScreener).map((q) => q.QuestionCode))
  const nonScreener = respondent.Answers.filter((a) => !screenerCodes.has(a.QuestionCode))
  const status = respondent.SurveyStatus
  if (status === 'ScreenedOut' || status === 'QuotaFull') {
    if (nonScreener.length > 0) fail(status, `answered ${nonScreener.length} questions after the screener`)
    if (respondent.Answers.length === 0) fail(status, 'no screener answered')
  }
  if (status === 'ScreenedOut' && !screenerFailed(respondent)) fail(status, 'passed every screener yet is screened out')
  if (status !== 'ScreenedOut' && screenerFailed(respondent)) fail(status, 'failed a screener yet was not screened out')
  if (status === 'Completed') {
    for (const q of project.Questions) {
      if (q.ParentCode !== null) continue
      const codes = q.Rows ? q.Rows.map((r) => r.QuestionCode) : [q.QuestionCode]
      for (const c of codes) if (!answers.has(c)) fail(status, `completed but ${c} is unanswered`)
    }
  }
  if (respondent.LastInteraction < respondent.FirstInteraction) fail('time', 'LastInteraction before FirstInteraction')
  return problems
}

/** The seeded screeners: S1 fails on "None of these", S2 (a numeric volume) fails below 5. */
function screenerFailed(respondent: PulseRespondent): boolean {
  const byCode = new Map(respondent.Answers.map((a) => [a.QuestionCode, a.Values]))
  const s1 = byCode.get('S1')
  const s2 = byCode.get('S2')
  return s1?.[0] === 'None of these' || (s2 !== undefined && Number(s2[0]) < 5)
}
