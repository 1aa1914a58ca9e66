import fc from 'fast-check'
import {describe, expect, it} from 'vitest'
import {Rng} from '../../../src/lib/prng.js'
import {exportSchema, PULSE_STATUSES, QUESTION_TYPES, SURVEY_STATUSES} from '../../../src/interfaces/pulse/schema.js'
import {generatePulse, STATUS_CYCLE} from '../../../src/interfaces/pulse/seed.js'
import {DEMOGRAPHICS} from '../../../src/interfaces/pulse/vocabulary.js'
import {answerProblems} from './answer-rules.js'

function materialise(seed: string | number, index: number, respondents: number) {
  const pulse = generatePulse({seed, clientId: 'client-a', index, respondents})
  return {...pulse, list: [...pulse.respondents()]}
}

describe('pulse generator', () => {
  it('every generated respondent obeys the answer rules, over many seeds (property)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.integer(), fc.string({maxLength: 12})), fc.integer({min: 0, max: 2}), fc.integer({min: 5, max: 60}), (seed, index, count) => {
        const pulse = materialise(seed, index, count)
        const problems = pulse.list.flatMap((r) => answerProblems(pulse.project, r))
        expect(problems).toEqual([])
        // Every fielded pulse shows every survey status, since its first five respondents cycle them.
        expect(new Set(pulse.list.map((r) => r.SurveyStatus))).toEqual(new Set(SURVEY_STATUSES))
      }),
      {numRuns: 60},
    )
  })

  it('the rule checker itself rejects broken answers (so the property above can fail)', () => {
    const pulse = materialise(5, 0, 20)
    const completed = pulse.list.find((r) => r.SurveyStatus === 'Completed')!
    const questions = pulse.project.Questions
    const mutate = (fn: (answers: {QuestionCode: string; Values: string[]}[]) => void, status = completed.SurveyStatus) => {
      const copy = structuredClone(completed)
      copy.SurveyStatus = status
      fn(copy.Answers)
      return answerProblems(pulse.project, copy)
    }
    const fixedSum = questions.find((q) => q.FixedSumTotal !== null)!.QuestionCode
    const rank = questions.find((q) => q.Type === 'Rank')!.QuestionCode
    const single = questions.find((q) => q.Type === 'SingleSelect' && !q.OtherAvailable && !q.IsScreener)!.QuestionCode
    const answer = (answers: {QuestionCode: string; Values: string[]}[], code: string) => answers.find((a) => a.QuestionCode === code)!
    expect(mutate(() => {})).toEqual([])
    expect(mutate((a) => (answer(a, fixedSum).Values[0] = String(Number(answer(a, fixedSum).Values[0]) + 1)))).not.toEqual([])
    expect(mutate((a) => (answer(a, rank).Values[1] = answer(a, rank).Values[0]!))).not.toEqual([])
    expect(mutate((a) => (answer(a, single).Values = ['Not a listed choice']))).not.toEqual([])
    expect(mutate((a) => a.splice(5, 1))).not.toEqual([])
    expect(mutate(() => {}, 'ScreenedOut')).not.toEqual([])
    expect(mutate(() => {}, 'QuotaFull')).not.toEqual([])
  })

  it('covers every question type, screeners, follow-ups, other-with-text, units and fixed sums in each pulse', () => {
    fc.assert(
      fc.property(fc.integer(), fc.integer({min: 0, max: 6}), (seed, index) => {
        const {project} = generatePulse({seed, clientId: 'c', index, respondents: 0})
        const qs = project.Questions
        expect(qs).toHaveLength(20)
        expect(new Set(qs.map((q) => q.Type))).toEqual(new Set(QUESTION_TYPES))
        expect(qs.filter((q) => q.IsScreener).length).toBeGreaterThan(0)
        expect(qs.some((q) => q.ParentCode !== null && qs.some((p) => p.QuestionCode === q.ParentCode))).toBe(true)
        expect(qs.some((q) => q.OtherAvailable && q.FreetextLabels !== null)).toBe(true)
        expect(qs.some((q) => q.DisplayUnit === '%' && q.FixedSumTotal === 100)).toBe(true)
        for (const q of qs) {
          const grid = q.Type.startsWith('Grid')
          expect(grid ? q.Rows!.length > 0 : q.Rows === null).toBe(true)
        }
      }),
      {numRuns: 40},
    )
  })

  it('uses open "other" answers with free text, and screens out by specialty and by volume', () => {
    const pulse = materialise(7, 0, 600)
    const otherQuestions = new Map(pulse.project.Questions.filter((q) => q.OtherAvailable).map((q) => [q.QuestionCode, q]))
    const freeText = pulse.list.flatMap((r) =>
      r.Answers.filter((a) => otherQuestions.has(a.QuestionCode) && a.Values.some((v) => !otherQuestions.get(a.QuestionCode)!.Choices.includes(v))),
    )
    expect(freeText.length).toBeGreaterThan(0)
    const screenedOut = pulse.list.filter((r) => r.SurveyStatus === 'ScreenedOut')
    expect(screenedOut.some((r) => r.Answers.length === 1 && r.Answers[0]!.Values[0] === 'None of these')).toBe(true)
    expect(screenedOut.some((r) => r.Answers.length === 2 && Number(r.Answers[1]!.Values[0]) < 5)).toBe(true)
  })

  it('gives realistic physician profiles: known specialties, countries, US states', () => {
    const pulse = materialise('profiles', 1, 300)
    const us = new Set(DEMOGRAPHICS.usStates)
    for (const r of pulse.list) {
      const profile = new Map(r.Profile.map((e) => [e.Key, e.Value]))
      expect(DEMOGRAPHICS.specialties).toContain(profile.get('Specialty'))
      expect(DEMOGRAPHICS.countries.map((c) => c.code)).toContain(profile.get('Country'))
      if (profile.get('Country') === 'US') expect(us.has(profile.get('State')!)).toBe(true)
    }
    expect(new Set(pulse.list.map((r) => r.Profile.find((e) => e.Key === 'State')?.Value)).size).toBeGreaterThan(10)
  })

  it('produces documents that pass the import schema', () => {
    const pulse = materialise(3, 2, 40)
    const doc = {Project: pulse.project, Respondents: pulse.list, ClientName: 'Acme'}
    const parsed = exportSchema.safeParse(doc)
    expect(parsed.success ? 'ok' : parsed.error.issues[0]).toBe('ok')
  })

  it('is deterministic: the same seed gives the same pulse, another seed another pulse', () => {
    const a = materialise(42, 0, 30)
    const b = materialise(42, 0, 30)
    const c = materialise(43, 0, 30)
    expect(JSON.stringify({p: a.project, r: a.list})).toBe(JSON.stringify({p: b.project, r: b.list}))
    expect(c.project.ProjectId).not.toBe(a.project.ProjectId)
    expect(JSON.stringify(c.list)).not.toBe(JSON.stringify(a.list))
  })

  it('cycles pulse statuses: fielded pulses have respondents, unlaunched ones none', () => {
    expect(new Set(STATUS_CYCLE)).toEqual(new Set(PULSE_STATUSES))
    for (let index = 0; index < 7; index++) {
      const pulse = generatePulse({seed: 1, clientId: 'c', index, respondents: 10})
      const fielded = ['Launched', 'Completed', 'Held'].includes(pulse.status)
      expect(pulse.respondentCount).toBe(fielded ? 10 : 0)
      expect(pulse.project.StartDate !== null).toBe(fielded || pulse.status === 'Queued')
      if (pulse.status === 'Completed') expect(pulse.project.EndDate! <= '2026-11-01T09:00:00Z').toBe(true)
      expect(pulse.project.FieldingTime).toMatch(/^\d{2}:[0-5]\d$/)
    }
  })

  it('draws uniform, seed-stable numbers and valid v4 UUIDs', () => {
    const rng = new Rng('x')
    const again = new Rng('x')
    const values = Array.from({length: 2000}, () => rng.next())
    expect(values).toEqual(Array.from({length: 2000}, () => again.next()))
    expect(Math.min(...values)).toBeGreaterThanOrEqual(0)
    expect(Math.max(...values)).toBeLessThan(1)
    const mean = values.reduce((a, b) => a + b, 0) / values.length
    expect(Math.abs(mean - 0.5)).toBeLessThan(0.05)
    expect(rng.uuid()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  })
})
