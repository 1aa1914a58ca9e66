import {AppError} from '../../errors.js'
import {writeTransaction} from '../../store/transactions.js'
import type {PulseDb as Db} from './tables.js'
import {Rng} from '../../lib/prng.js'
import * as repo from './repository.js'
import {isoUtc, type PulseProject, type PulseQuestion, type PulseRespondent, type PulseRowQuestion, type PulseStatus, type SurveyStatus} from './schema.js'
import {requirePulseOwner, storePulse, type StoredPulse} from './service.js'
import {DEMOGRAPHICS, FREE_TEXT, QUESTION_BANK, TOPICS, type ChoiceSource, type Topic} from './vocabulary.js'

/**
 * Generated pulses are anchored to a fixed date, not the clock, so the same seed always gives the
 * same documents, byte for byte.
 */
const ANCHOR = Date.UTC(2026, 10, 1, 9, 0, 0)
const HOUR = 3600_000
const DAY = 24 * HOUR

/** Pulse i gets status i mod 7: the first three are fielded, so any --count ≥ 3 has respondents of every status. */
export const STATUS_CYCLE: readonly PulseStatus[] = ['Launched', 'Completed', 'Held', 'Draft', 'Queued', 'PendingMasterApproval', 'Pending']
const FIELDED: readonly PulseStatus[] = ['Launched', 'Completed', 'Held']
const FIELDING_TIMES = ['04:00', '08:00', '12:00', '24:00', '48:00', '72:00']
/** The main body after the two screeners: 18 slots, so every pulse has 20 questions and all seven types. */
const MAIN_SLOTS = [
  'single',
  'followup',
  'multi',
  'rank',
  'fixedsum',
  'gridsingle',
  'gridmulti',
  'numeric',
  'text',
  'single',
  'followup',
  'multi',
  'followup',
  'gridsingle',
  'rank',
  'fixedsum',
  'single',
  'text',
] as const
type Slot = (typeof MAIN_SLOTS)[number]

const FORCED_STATUSES: readonly SurveyStatus[] = ['Completed', 'ScreenedOut', 'Incomplete', 'ScreenedIn', 'QuotaFull']
const STATUS_WEIGHTS: [SurveyStatus[], number[]] = [
  ['Completed', 'ScreenedOut', 'Incomplete', 'ScreenedIn', 'QuotaFull'],
  [62, 14, 10, 6, 8],
]
const OTHER_LABEL = 'Other (please specify)'

/** How the generator answers one question; kept beside the public question, never exported. */
interface Plan {
  question: PulseQuestion
  kind: Slot | 'specialty' | 'volume'
  answer: (rng: Rng, who: Persona) => {code: string; values: string[]}[]
  /** For follow-ups: asked only when the parent's answer contains one of these values. */
  trigger?: {parent: string; values: Set<string>}
}

interface Persona {
  specialty: string
  setting: string
}

export interface GeneratedPulse {
  project: PulseProject
  status: PulseStatus
  lastUpdated: string
  respondentCount: number
  /** Respondents are produced lazily (and identically on every call), so 10,000 never sit in memory. */
  respondents: () => Generator<PulseRespondent>
}

export interface PulseSeedOptions {
  seed: string | number
  clientId: string
  /** Which pulse of the client's seeded series (0-based): decides its status and its stream of randomness. */
  index: number
  /** Respondents for a fielded pulse (Launched, Completed, Held); pulses not yet fielded have none. */
  respondents: number
}

function base(question: Partial<PulseQuestion> & Pick<PulseQuestion, 'QuestionCode' | 'Title' | 'Type'>): PulseQuestion {
  return {
    IsScreener: false,
    Choices: [],
    ParentCode: null,
    OtherAvailable: false,
    DisplayUnit: null,
    FixedSumTotal: null,
    AnswersRequired: 1,
    FreetextLabels: null,
    Rows: null,
    ...question,
  }
}

function fill(text: string, topic: Topic, drug: string): string {
  return text.replaceAll('{condition}', topic.condition).replaceAll('{area}', topic.area).replaceAll('{drug}', drug)
}

function resolve(source: ChoiceSource, topic: Topic): string[] {
  if (Array.isArray(source)) return source
  if (source === '$drugs') return topic.drugs
  if (source === '$classes') return topic.classes
  if (source === '$settings') return DEMOGRAPHICS.practiceSettings
  throw new Error(`unknown choice list ${source}`)
}

function pool(name: string, topic: Topic): string[] {
  if (name === '$drugs') return topic.drugs
  const list = FREE_TEXT[name.replace(/^\$/, '')]
  if (!list) throw new Error(`unknown free-text pool ${name}`)
  return list
}

/** `parts` non-negative integers adding up to exactly `total` (cuts of a stick, then the gaps). */
function splitTotal(rng: Rng, total: number, parts: number): number[] {
  const cuts = Array.from({length: parts - 1}, () => rng.int(0, total)).sort((a, b) => a - b)
  const out: number[] = []
  let last = 0
  for (const cut of [...cuts, total]) {
    out.push(cut - last)
    last = cut
  }
  return out
}

/** One single- or multi-select answer that may use the open "other" choice. */
function withOther(rng: Rng, picked: string[], other: boolean, probability: number): string[] {
  return other && rng.chance(probability) ? [...picked, rng.pick(FREE_TEXT.other!)] : picked
}

/** The question bank's templates of each kind, shuffled for one pulse; `draw` takes the next one. */
function shuffledDecks(rng: Rng) {
  const bank = QUESTION_BANK
  // The shuffles run in this order, which fixes every seed's pulses: keep it.
  const decks = {
    single: rng.shuffle(bank.single),
    multi: rng.shuffle(bank.multi),
    rank: rng.shuffle(bank.rank),
    fixedsum: rng.shuffle(bank.fixedsum),
    numeric: rng.shuffle(bank.numeric),
    gridsingle: rng.shuffle(bank.gridsingle),
    gridmulti: rng.shuffle(bank.gridmulti),
    text: rng.shuffle(bank.text),
    followup: rng.shuffle(bank.followups),
  }
  return <K extends keyof typeof decks>(kind: K): (typeof decks)[K][number] => {
    const next = decks[kind].shift()
    if (!next) throw new Error(`the question bank has too few ${kind} questions`)
    return next
  }
}

/** What planning one main question needs: the pulse's topic and drug, its decks, the plans so far. */
interface PlanContext {
  code: string
  topic: Topic
  drug: string
  draw: ReturnType<typeof shuffledDecks>
  /** The plans made before this one; a follow-up asks about the last of them. */
  earlier: readonly Plan[]
}

/** The two screeners every pulse opens with: the specialty, then the patient volume. */
function screenerPlans(topic: Topic, drug: string): Plan[] {
  const {specialty, volume} = QUESTION_BANK.screeners
  return [
    {
      kind: 'specialty',
      question: base({QuestionCode: 'S1', Title: specialty.title, Type: 'SingleSelect', IsScreener: true, Choices: [...topic.specialties, specialty.disqualifier]}),
      answer: (_r, who) => [{code: 'S1', values: [topic.specialties.includes(who.specialty) ? who.specialty : specialty.disqualifier]}],
    },
    {
      kind: 'volume',
      question: base({QuestionCode: 'S2', Title: fill(volume.title, topic, drug), Type: 'Numeric', IsScreener: true, DisplayUnit: volume.unit}),
      // Qualifying answers only; screened-out respondents get theirs in respondentAnswers.
      answer: (r) => [{code: 'S2', values: [String(r.int(volume.qualifyingMin, Math.min(volume.max, volume.qualifyingMin + r.int(5, 120))))]}],
    },
  ]
}

function singlePlan({code, topic, drug, draw}: PlanContext): Plan {
  const t = draw('single')
  const choices = resolve(t.choices, topic)
  const other = t.other === true
  const bySetting = t.choices === '$settings'
  return {
    kind: 'single',
    question: base({
      QuestionCode: code,
      Title: fill(t.title, topic, drug),
      Type: 'SingleSelect',
      Choices: choices,
      OtherAvailable: other,
      FreetextLabels: other ? [OTHER_LABEL] : null,
    }),
    answer: (r, who) => [{code, values: bySetting ? [who.setting] : other && r.chance(0.07) ? [r.pick(FREE_TEXT.other!)] : [r.pick(choices)]}],
  }
}

function multiPlan({code, topic, drug, draw}: PlanContext): Plan {
  const t = draw('multi')
  const choices = resolve(t.choices, topic)
  const other = t.other === true
  const required = t.required ?? 1
  return {
    kind: 'multi',
    question: base({
      QuestionCode: code,
      Title: fill(t.title, topic, drug),
      Type: 'MultiSelect',
      Choices: choices,
      OtherAvailable: other,
      AnswersRequired: required,
      FreetextLabels: other ? [OTHER_LABEL] : null,
    }),
    answer: (r) => [{code, values: withOther(r, r.sample(choices, r.int(required, Math.min(choices.length, required + 3))), other, 0.1)}],
  }
}

function rankPlan({code, topic, drug, draw}: PlanContext): Plan {
  const t = draw('rank')
  const choices = resolve(t.choices, topic)
  return {
    kind: 'rank',
    question: base({QuestionCode: code, Title: fill(t.title, topic, drug), Type: 'Rank', Choices: choices, AnswersRequired: choices.length}),
    answer: (r) => [{code, values: r.shuffle(choices)}],
  }
}

function fixedSumPlan({code, topic, drug, draw}: PlanContext): Plan {
  const t = draw('fixedsum')
  const choices = resolve(t.choices, topic)
  return {
    kind: 'fixedsum',
    question: base({
      QuestionCode: code,
      Title: fill(t.title, topic, drug),
      Type: 'Numeric',
      Choices: choices,
      DisplayUnit: t.unit,
      FixedSumTotal: t.total,
      AnswersRequired: choices.length,
    }),
    answer: (r) => [{code, values: splitTotal(r, t.total, choices.length).map(String)}],
  }
}

function numericPlan({code, topic, drug, draw}: PlanContext): Plan {
  const t = draw('numeric')
  return {
    kind: 'numeric',
    question: base({QuestionCode: code, Title: fill(t.title, topic, drug), Type: 'Numeric', DisplayUnit: t.unit}),
    answer: (r) => [{code, values: [String(r.int(t.min, t.max))]}],
  }
}

function gridPlan(slot: 'gridsingle' | 'gridmulti', {code, topic, drug, draw}: PlanContext): Plan {
  const t = draw(slot)
  const columns = resolve(t.choices, topic)
  const single = slot === 'gridsingle'
  const rows: PulseRowQuestion[] = resolve(t.rows, topic).map((title, j) => ({
    ...base({QuestionCode: `${code}_${j + 1}`, Title: title, Type: single ? 'SingleSelect' : 'MultiSelect', Choices: columns}),
    Rows: null,
  }))
  return {
    kind: slot,
    question: base({
      QuestionCode: code,
      Title: fill(t.title, topic, drug),
      Type: single ? 'GridSingleSelect' : 'GridMultiSelect',
      Choices: columns,
      AnswersRequired: rows.length,
      Rows: rows,
    }),
    answer: (r) => rows.map((row) => ({code: row.QuestionCode, values: single ? [r.pick(columns)] : r.sample(columns, r.int(1, Math.min(3, columns.length)))})),
  }
}

function textPlan({code, topic, drug, draw}: PlanContext): Plan {
  const t = draw('text')
  const answers = pool(t.answers, topic)
  return {
    kind: 'text',
    question: base({QuestionCode: code, Title: fill(t.title, topic, drug), Type: 'Text', FreetextLabels: t.labels, AnswersRequired: t.labels.length}),
    answer: (r) => [{code, values: t.labels.length > 1 ? r.shuffle(r.sample(answers, t.labels.length)) : [r.pick(answers)]}],
  }
}

function followUpPlan({code, topic, draw, earlier}: PlanContext): Plan {
  const t = draw('followup')
  const parent = earlier[earlier.length - 1]!.question
  // Asked of those who picked one of the parent's first choices (e.g. "Very unlikely", "Unlikely").
  const trigger = {parent: parent.QuestionCode, values: new Set(parent.Choices.slice(0, Math.max(1, Math.ceil(parent.Choices.length / 2))))}
  if (t.type === 'Text') {
    const labels = t.labels ?? ['Your answer']
    const answers = pool(t.answers ?? '$reasons', topic)
    return {
      kind: 'followup',
      trigger,
      question: base({QuestionCode: code, Title: t.title, Type: 'Text', ParentCode: parent.QuestionCode, FreetextLabels: labels, AnswersRequired: labels.length}),
      answer: (r) => [{code, values: labels.map(() => r.pick(answers))}],
    }
  }
  const choices = t.choices ?? []
  return {
    kind: 'followup',
    trigger,
    question: base({QuestionCode: code, Title: t.title, Type: 'SingleSelect', ParentCode: parent.QuestionCode, Choices: choices}),
    answer: (r) => [{code, values: [r.pick(choices)]}],
  }
}

/** How each slot of the main body is planned. */
const SLOT_PLANS: Record<Slot, (context: PlanContext) => Plan> = {
  single: singlePlan,
  multi: multiPlan,
  rank: rankPlan,
  fixedsum: fixedSumPlan,
  numeric: numericPlan,
  gridsingle: (context) => gridPlan('gridsingle', context),
  gridmulti: (context) => gridPlan('gridmulti', context),
  text: textPlan,
  followup: followUpPlan,
}

/** A pulse's questions with how respondents answer them: the two screeners, then MAIN_SLOTS in order. */
function buildPlans(rng: Rng, topic: Topic): Plan[] {
  // The drug is drawn before the decks are shuffled, as every seed's pulses were made.
  const drug = rng.pick(topic.drugs)
  const draw = shuffledDecks(rng)
  const plans = screenerPlans(topic, drug)
  MAIN_SLOTS.forEach((slot, i) => {
    plans.push(SLOT_PLANS[slot]({code: `Q${i + 1}`, topic, drug, draw, earlier: plans}))
  })
  return plans
}

function pulseTitle(rng: Rng, topic: Topic): {title: string; internal: string} {
  const cap = topic.condition.charAt(0).toUpperCase() + topic.condition.slice(1)
  const forms = [
    {title: `Treatment choices in ${topic.condition}`, internal: 'treatment tracker'},
    {title: `${cap}: what physicians prescribe today`, internal: 'prescribing pulse'},
    {title: `A quick pulse on ${topic.area}`, internal: 'quick pulse'},
    {title: `Barriers to care in ${topic.condition}`, internal: 'access barriers'},
  ]
  return rng.pick(forms)
}

function persona(rng: Rng, topic: Topic, qualifies: boolean): {who: Persona; profile: {Key: string; Value: string}[]} {
  const others = DEMOGRAPHICS.specialties.filter((s) => !topic.specialties.includes(s))
  const specialty = qualifies ? rng.pick(topic.specialties) : rng.pick(others)
  const country = rng.weighted(
    DEMOGRAPHICS.countries.map((c) => c.code),
    DEMOGRAPHICS.countries.map((c) => c.weight),
  )
  const setting = rng.pick(DEMOGRAPHICS.practiceSettings)
  const profile = [
    {Key: 'Specialty', Value: specialty},
    {Key: 'Country', Value: country},
  ]
  if (country === 'US') profile.push({Key: 'State', Value: rng.chance(0.6) ? rng.pick(DEMOGRAPHICS.populousStates) : rng.pick(DEMOGRAPHICS.usStates)})
  if (country === 'CA') profile.push({Key: 'State', Value: rng.pick(DEMOGRAPHICS.caProvinces)})
  profile.push({Key: 'PracticeSetting', Value: setting}, {Key: 'YearsInPractice', Value: String(rng.int(1, 38))})
  return {who: {specialty, setting}, profile}
}

/**
 * The answers one respondent gives, consistent with the status: screened-out respondents stop at
 * the screener they fail, quota-full ones after passing the screeners, incomplete and screened-in
 * ones part-way, completed ones answer everything that applies to them.
 */
function respondentAnswers(rng: Rng, plans: Plan[], status: SurveyStatus, who: Persona): {QuestionCode: string; Values: string[]}[] {
  const out: {QuestionCode: string; Values: string[]}[] = []
  const given = new Map<string, string[]>()
  const ask = (plan: Plan) => {
    for (const a of plan.answer(rng, who)) {
      out.push({QuestionCode: a.code, Values: a.values})
      given.set(a.code, a.values)
    }
  }
  const [specialty, volume, ...main] = plans as [Plan, Plan, ...Plan[]]
  ask(specialty)
  if (status === 'ScreenedOut') {
    // Failed the specialty screener already (persona outside the target), or fails the volume one.
    if (out[0]!.Values[0] === QUESTION_BANK.screeners.specialty.disqualifier) return out
    out.push({QuestionCode: 'S2', Values: [String(rng.int(0, QUESTION_BANK.screeners.volume.qualifyingMin - 1))]})
    return out
  }
  if (status === 'Incomplete' && rng.chance(0.2)) return out
  ask(volume)
  if (status === 'QuotaFull') return out
  const budget = status === 'Completed' ? Infinity : rng.int(0, main.length - 1)
  let asked = 0
  for (const plan of main) {
    if (asked >= budget) break
    if (plan.trigger) {
      const parent = given.get(plan.trigger.parent)
      if (!parent?.some((v) => plan.trigger!.values.has(v))) continue
    }
    ask(plan)
    asked++
  }
  return out
}

/** One deterministic pulse (project, status, and a lazy respondent stream) from seed, client and index. */
export function generatePulse(options: PulseSeedOptions): GeneratedPulse {
  // Content comes from seed and index alone, so two stores seeding the same --seed get the same
  // pulses whatever client ids they drew. Only the project id also depends on the client: two
  // clients seeding one store with the same seed must not collide on ids.
  const key = `${options.seed}:${options.index}`
  const rng = new Rng(key)
  const status = STATUS_CYCLE[options.index % STATUS_CYCLE.length]!
  const topic = rng.pick(TOPICS)
  const id = new Rng(`${options.seed}:${options.clientId}:${options.index}:id`).uuid()
  const {title, internal} = pulseTitle(rng, topic)
  const fielding = rng.pick(FIELDING_TIMES)
  const fieldingMs = Number(fielding.slice(0, 2)) * HOUR
  const minutes = rng.pick([3, 5, 5, 7, 10])
  // Every draw from rng keeps its place in this order: a seed must give the pulses it always gave.
  const {start, lastUpdated} = pulseDates(rng, status, fieldingMs)
  const month = isoUtc(new Date(start ?? lastUpdated))
    .slice(2, 7)
    .replace('-', '')

  const plans = buildPlans(rng, topic)
  const project: PulseProject = {
    ProjectId: id,
    Title: title,
    InternalTitle: `${topic.short}-${month}-${String(options.index + 1).padStart(2, '0')} ${internal}`,
    Identifier: rng.chance(0.5) ? `MP-${new Date(start ?? lastUpdated).getUTCFullYear()}-${rng.int(1000, 9999)}` : null,
    StartDate: start === null ? null : isoUtc(new Date(start)),
    EndDate: start === null ? null : isoUtc(new Date(start + fieldingMs)),
    FieldingTime: fielding,
    ExternalIntroduction: `Thank you for joining this short pulse on ${topic.condition}. It takes about ${minutes} minutes and asks how you care for these patients today. Answers are confidential and reported only in aggregate.`,
    Questions: plans.map((p) => p.question),
  }

  const count = FIELDED.includes(status) ? options.respondents : 0
  const window = {start: start ?? ANCHOR, fieldingMs, minutes}
  const respondents = () => respondentsOf(`${key}:respondents`, count, {topic, plans, window})
  return {project, status, lastUpdated: isoUtc(new Date(lastUpdated)), respondentCount: count, respondents}
}

/** When a pulse of `status` started (null: not yet) and was last changed, relative to ANCHOR. */
function pulseDates(rng: Rng, status: PulseStatus, fieldingMs: number): {start: number | null; lastUpdated: number} {
  const fieldingHours = Math.max(1, fieldingMs / HOUR - 1)
  if (status === 'Completed') {
    const start = ANCHOR - rng.int(10, 120) * DAY - rng.int(0, 23) * HOUR
    return {start, lastUpdated: start + fieldingMs}
  }
  if (status === 'Launched') {
    const start = ANCHOR - rng.int(1, fieldingHours) * HOUR
    return {start, lastUpdated: start}
  }
  if (status === 'Held') {
    const start = ANCHOR - rng.int(2, 20) * DAY
    return {start, lastUpdated: start + rng.int(1, fieldingHours) * HOUR}
  }
  if (status === 'Queued') {
    const start = ANCHOR + rng.int(1, 14) * DAY + rng.int(8, 17) * HOUR
    return {start, lastUpdated: ANCHOR - rng.int(1, 48) * HOUR}
  }
  return {start: null, lastUpdated: ANCHOR - rng.int(1, 30) * DAY}
}

/** A fielded pulse's `count` respondents, drawn from a stream of their own (`seedKey`), one at a time. */
function* respondentsOf(
  seedKey: string,
  count: number,
  pulse: {topic: Topic; plans: Plan[]; window: {start: number; fieldingMs: number; minutes: number}},
): Generator<PulseRespondent> {
  const {topic, plans, window} = pulse
  const {minutes} = window
  const r = new Rng(seedKey)
  for (let i = 0; i < count; i++) {
    const status = count >= FORCED_STATUSES.length && i < FORCED_STATUSES.length ? FORCED_STATUSES[i]! : r.weighted(...STATUS_WEIGHTS)
    const failsSpecialty = status === 'ScreenedOut' && r.chance(0.5)
    const {who, profile} = persona(r, topic, !failsSpecialty)
    const respondentId = r.uuid()
    const sermoId = r.int(100_000, 9_999_999)
    const first = window.start + r.int(0, Math.floor(window.fieldingMs / 1000) - 1) * 1000
    const seconds = status === 'Completed' ? r.int(minutes * 40, minutes * 150) : r.int(20, minutes * 60)
    const answers = respondentAnswers(r, plans, status, who)
    yield {
      RespondentId: respondentId,
      SermoId: sermoId,
      SurveyStatus: status,
      Profile: profile,
      Answers: answers,
      FirstInteraction: isoUtc(new Date(first)),
      LastInteraction: isoUtc(new Date(first + seconds * 1000)),
    }
  }
}

export interface SeedPulsesOptions {
  clientId: string
  count: number
  respondents: number
  seed: string | number
}

export interface SeedPulsesResult {
  created: StoredPulse[]
  /** Ids already in the store from an earlier run with the same seed: left as they are. */
  skipped: string[]
  /** True when the run was asked to stop (Ctrl-C) before it reached count. */
  interrupted: boolean
}

/**
 * Seeds a client's pulses 0 … count-1. Re-running with the same seed finds the same ids and skips
 * them, so seeding is idempotent and a larger --count only adds the missing ones. `shouldStop` is
 * asked before each pulse; a stopped run keeps the pulses written so far.
 */
export async function seedPulses(
  db: Db,
  options: SeedPulsesOptions,
  now: Date,
  onProgress?: (done: number, total: number) => void,
  shouldStop?: () => boolean,
): Promise<SeedPulsesResult> {
  if (!Number.isInteger(options.count) || options.count < 1 || options.count > 1000) throw new AppError('bad_request', '--count must be a whole number from 1 to 1000')
  if (!Number.isInteger(options.respondents) || options.respondents < 0 || options.respondents > 100_000)
    throw new AppError('bad_request', '--respondents must be a whole number from 0 to 100000')
  await requirePulseOwner(db, options.clientId)
  const result: SeedPulsesResult = {created: [], skipped: [], interrupted: false}
  for (let index = 0; index < options.count; index++) {
    // A store that answers synchronously never lets the event loop run, and a signal is only
    // heard there: yield to it before asking.
    if (shouldStop) await new Promise((resolve) => setImmediate(resolve))
    // Asked between pulses: each one is written whole in its own transaction.
    if (shouldStop?.()) {
      result.interrupted = true
      break
    }
    const pulse = generatePulse({seed: options.seed, clientId: options.clientId, index, respondents: options.respondents})
    const stored = await writeTransaction(db, async (trx) => {
      if (await repo.pulseExists(trx, pulse.project.ProjectId)) return undefined
      return storePulse(trx, options.clientId, pulse.project, pulse.respondents(), pulse.status, pulse.lastUpdated, now)
    })
    if (stored) result.created.push(stored)
    else result.skipped.push(pulse.project.ProjectId)
    onProgress?.(index + 1, options.count)
  }
  return result
}
