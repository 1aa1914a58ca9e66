import demographics from '../../../data/pulses/demographics.json' with {type: 'json'}
import freeText from '../../../data/pulses/free-text.json' with {type: 'json'}
import questions from '../../../data/pulses/questions.json' with {type: 'json'}
import topics from '../../../data/pulses/topics.json' with {type: 'json'}

/**
 * The seed vocabularies in data/pulses/, typed. A choice list written as "$drugs", "$classes" or
 * "$settings" stands for the pulse topic's drugs, therapy classes, or the practice settings.
 */
export type ChoiceSource = string[] | string

export interface Topic {
  area: string
  condition: string
  short: string
  specialties: string[]
  drugs: string[]
  classes: string[]
}

export interface ChoiceTemplate {
  title: string
  choices: ChoiceSource
  other?: boolean
  required?: number
}
export interface NumericTemplate {
  title: string
  unit: string
  min: number
  max: number
}
export interface FixedSumTemplate {
  title: string
  choices: ChoiceSource
  unit: string
  total: number
}
export interface GridTemplate {
  title: string
  choices: ChoiceSource
  rows: ChoiceSource
}
export interface TextTemplate {
  title: string
  labels: string[]
  answers: string
}
export interface FollowUpTemplate {
  type: 'Text' | 'SingleSelect'
  title: string
  labels?: string[]
  answers?: string
  choices?: string[]
}

export interface QuestionBank {
  screeners: {
    specialty: {title: string; disqualifier: string}
    volume: NumericTemplate & {qualifyingMin: number}
  }
  single: ChoiceTemplate[]
  multi: ChoiceTemplate[]
  rank: ChoiceTemplate[]
  fixedsum: FixedSumTemplate[]
  numeric: NumericTemplate[]
  gridsingle: GridTemplate[]
  gridmulti: GridTemplate[]
  text: TextTemplate[]
  followups: FollowUpTemplate[]
}

export const DEMOGRAPHICS: {
  specialties: string[]
  usStates: string[]
  populousStates: string[]
  countries: {code: string; weight: number}[]
  practiceSettings: string[]
  caProvinces: string[]
} = demographics
export const TOPICS: Topic[] = topics
export const QUESTION_BANK: QuestionBank = questions as QuestionBank
export const FREE_TEXT: Record<string, string[]> = freeText
