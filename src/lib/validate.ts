import type {z} from 'zod'
import {AppError, type ErrorCode} from '../errors.js'

/** "redirect_uris[1]" style path of a zod issue. */
export function issuePath(path: ReadonlyArray<PropertyKey>): string {
  let out = ''
  for (const part of path) {
    out += typeof part === 'number' ? `[${part}]` : `${out ? '.' : ''}${String(part)}`
  }
  return out
}

/** One line naming the first bad field, e.g. `redirect_uris[0]: must use https`. */
export function describeZodError(error: z.ZodError): string {
  const issue = error.issues[0]
  if (!issue) return 'invalid input'
  // An unknown key is named by its own path (conversations[0].bogus), not its parent's.
  if (issue.code === 'unrecognized_keys') {
    const keys = (issue as {keys: string[]}).keys
    return keys.map((key) => `${issuePath([...issue.path, key])}: is not a known field`).join('; ')
  }
  const path = issuePath(issue.path)
  return path ? `${path}: ${issue.message}` : issue.message
}

/** Parses `input` with `schema` or throws an AppError (default 400 bad_request) naming the field. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, code: ErrorCode = 'bad_request'): z.output<S> {
  const result = schema.safeParse(input)
  if (!result.success) throw new AppError(code, describeZodError(result.error))
  return result.data
}
