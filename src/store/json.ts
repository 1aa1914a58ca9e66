import type {ColumnType} from 'kysely'

/*
 * JSON kept in a text column. Both stores hand such a column back as the text it holds, so the
 * column is typed as text that is known to encode T (Kysely's JSONColumnType would claim the
 * driver returns T itself, which neither SQLite nor a PostgreSQL `text` column does). Rows are
 * turned into views by one mapper per table, which decodes the text through a zod schema: what
 * comes out of the store is checked, never cast.
 */

declare const encodes: unique symbol

/** Text holding the JSON encoding of a T. */
export type JsonText<T> = string & {readonly [encodes]: T}

/** A text column holding JSON of type T, read and written as that text. */
export type JsonColumn<T> = ColumnType<JsonText<T>, JsonText<T>, JsonText<T>>

/** The one place a value becomes stored JSON text. */
export function toJsonText<T>(value: T): JsonText<T> {
  return JSON.stringify(value) as JsonText<T>
}

/** What checks a decoded value: any zod schema, or one of the small checkers below. */
export interface JsonCheck<O> {
  safeParse(value: unknown): {success: true; data: O} | {success: false; error: {issues: readonly {message: string}[]}}
}

/**
 * A list of strings, each one of `allowed` when given. Rows read on every CLI start (clients) are
 * checked with this rather than zod, so that reading them does not load zod.
 */
export function stringList<T extends string = string>(allowed?: readonly T[]): JsonCheck<T[]> {
  return {
    safeParse(value) {
      if (!Array.isArray(value)) return {success: false, error: {issues: [{message: 'expected an array'}]}}
      const bad = value.find((item) => typeof item !== 'string' || (allowed !== undefined && !allowed.includes(item as T)))
      if (bad !== undefined) return {success: false, error: {issues: [{message: `unexpected item ${JSON.stringify(bad)}`}]}}
      return {success: true, data: value as T[]}
    },
  }
}

/**
 * Stored JSON text back into a value, checked against `schema` (which may read it more narrowly or
 * more loosely than it was written); `what` names it in the error.
 */
export function fromJsonText<O>(text: JsonText<unknown>, schema: JsonCheck<O>, what: string): O {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new Error(`the store holds malformed JSON in ${what}`)
  }
  const result = schema.safeParse(value)
  if (!result.success) throw new Error(`the store holds an unexpected value in ${what}: ${result.error.issues[0]?.message ?? 'invalid'}`)
  return result.data
}
