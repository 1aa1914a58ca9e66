import {AppError} from '../../src/errors.js'

/*
 * Questions at a terminal: asked only where a person can answer (stdin is a terminal and no
 * --json), and otherwise the missing flags named in one error line.
 */

/** True when a person can answer a prompt: stdin is a terminal and no --json was asked for. */
export function canPrompt(json: boolean): boolean {
  return Boolean(process.stdin.isTTY) && !json
}

/**
 * Refuses a run that cannot prompt and lacks flags it would be asked for, naming them all at
 * once (a `--NAME-stdin` given counts for --NAME).
 */
export function requireAsked(asked: readonly string[], given: Record<string, unknown>): void {
  const missing = asked.filter((name) => {
    const value = given[name] ?? (given[`${name}-stdin`] === true ? 'from stdin' : undefined)
    return value === undefined || value === '' || (Array.isArray(value) && value.length === 0)
  })
  if (missing.length > 0) {
    const list = missing.map((name) => `--${name}`).join(', ')
    throw new AppError('bad_request', `missing required flag${missing.length > 1 ? 's' : ''} ${list} (a terminal would be asked for ${missing.length > 1 ? 'them' : 'it'})`)
  }
}

/** A value from its flag, else from a prompt when `prompting`, else an error naming the flag. */
export async function need(value: string | undefined, flag: string, message: string, prompting: boolean, validate?: (v: string) => true | string): Promise<string> {
  if (value !== undefined && value !== '') return value
  if (!prompting) throw new AppError('bad_request', `missing required flag --${flag}`)
  const {input} = await import('@inquirer/prompts')
  return input({message, required: true, validate: validate ?? ((v) => (v.trim() ? true : 'required'))})
}

/**
 * A prompt's validate answer from a check that throws: true when `check` passes, else the refusal
 * in the words the same value would get from the flag (an AppError's message).
 */
export function answerCheck(check: () => unknown): true | string {
  try {
    check()
    return true
  } catch (error) {
    if (error instanceof AppError) return error.message
    throw error
  }
}
