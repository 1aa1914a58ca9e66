import type {AnswerFormat} from './format.js'
import {jsonFormat} from './format-json.js'
import {xmlFormat} from './format-xml.js'

/**
 * Every answer format of interface E, the default first: a caller whose Accept names no format in
 * particular (none, `*\/*`, `application/*`) gets it. Negotiation, the error answers,
 * /openapi.json, the 406's advice, the demo's examples and the search threads all read this list,
 * so a new format is a file of its own (see format.ts) and one entry here.
 */
export const FORMATS = [jsonFormat, xmlFormat] as const satisfies FormatList

/** A list of formats to serve, the default first (FORMATS, or a test's own). */
export type FormatList = readonly [AnswerFormat, ...AnswerFormat[]]

/** A listed format's name: how a call or a search thread's job names its format. */
export type FormatName = (typeof FORMATS)[number]['name']

const BY_NAME = new Map<string, AnswerFormat>(FORMATS.map((format) => [format.name, format]))

/** The listed format of that name; a search thread finds the format of its job here. */
export function formatNamed(name: string): AnswerFormat {
  const format = BY_NAME.get(name)
  if (!format) throw new Error(`interface E has no answer format named ${JSON.stringify(name)} (formats.ts lists them)`)
  return format
}
