import {createReadStream} from 'node:fs'
import {access, readFile} from 'node:fs/promises'
import {AppError} from '../src/errors.js'

/*
 * Input files named by a flag (--file, --details): read and parsed in one place, so every command
 * refuses a bad one in the same words, one `Error:` line naming the flag, the file and what is
 * wrong with it.
 */

/** How an error names the input: the flag, then the file ("-" is standard input). */
function inputName(flag: string, file: string): string {
  return `--${flag}: ${file === '-' ? 'standard input' : file}`
}

/** The text of the file given with `--flag`; "-" reads standard input where `stdin` allows it. */
export async function readInputText(flag: string, file: string, options: {stdin?: boolean} = {}): Promise<string> {
  try {
    if (file === '-' && options.stdin) return await readStdin()
    return await readFile(file, 'utf8')
  } catch (error) {
    throw new AppError('bad_request', `${inputName(flag, file)} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`)
  }
}

/** The JSON document in the file given with `--flag`. */
export async function readInputJson(flag: string, file: string, options: {stdin?: boolean} = {}): Promise<unknown> {
  const text = await readInputText(flag, file, options)
  try {
    return JSON.parse(text)
  } catch (error) {
    throw new AppError('bad_request', `${inputName(flag, file)} is not valid JSON (${(error as Error).message})`)
  }
}

/** The JSON object in the file given with `--flag`; any other JSON value is refused. */
export async function readInputObject(flag: string, file: string): Promise<Record<string, unknown>> {
  const parsed = await readInputJson(flag, file)
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new AppError('bad_request', `${inputName(flag, file)} must hold a JSON object`)
  return parsed as Record<string, unknown>
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

/**
 * The file given with `--flag` as a stream of text chunks that can be read again from the start
 * (a two-pass load reads it twice); standard input, which cannot, is read whole first. A file that
 * cannot be read is refused here, before any pass.
 */
export async function openInputChunks(flag: string, file: string): Promise<() => AsyncIterable<string>> {
  if (file === '-') {
    const text = await readInputText(flag, file, {stdin: true})
    return async function* () {
      for (let i = 0; i < text.length; i += 1 << 20) yield text.slice(i, i + (1 << 20))
    }
  }
  try {
    await access(file)
  } catch (error) {
    throw new AppError('bad_request', `${inputName(flag, file)} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`)
  }
  return () => createReadStream(file, {encoding: 'utf8', highWaterMark: 1 << 20}) as AsyncIterable<string>
}

/** A SyntaxError met while reading the file given with `--flag`, in the words readInputJson uses. */
export function notJson(flag: string, file: string, error: unknown): unknown {
  return error instanceof SyntaxError ? new AppError('bad_request', `${inputName(flag, file)} is not valid JSON (${error.message})`) : error
}
