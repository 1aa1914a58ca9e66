import {AppError} from '../../src/errors.js'

/*
 * Secrets given to a command: from its flag (or, for secretFlag, its variable), from standard
 * input (`--NAME-stdin`), or from a variable the operator names (`--NAME-from-env`). A value on
 * the command line shows in `ps` and the shell history; the other two do not.
 */

/** Where a secret may come from besides its flag. */
export interface SecretSources {
  /** The command line as given, to tell a flag's value from its variable's. */
  argv: readonly string[]
  /** `--NAME-stdin` was given. */
  fromStdin: boolean
  /** changedSecretFlag's `--NAME-from-env`: the variable, and whether the flag was given. */
  fromEnv?: {env: string; given: boolean}
}

/**
 * The secret `flag` names, or undefined when none was given. Two sources named on one command
 * line are refused; a secretFlag variable left in the environment gives way to --NAME-stdin.
 */
export async function readSecret(value: string | undefined, flag: string, sources: SecretSources): Promise<string | undefined> {
  const {fromStdin, fromEnv} = sources
  const onCommandLine = value !== undefined && sources.argv.some((arg) => arg === `--${flag}` || arg.startsWith(`--${flag}=`))
  const named = [onCommandLine && `--${flag}`, fromStdin && `--${flag}-stdin`, fromEnv?.given && `--${flag}-from-env`].filter(Boolean)
  if (named.length > 1) throw new AppError('bad_request', `give one of ${named.join(', ')}, not several`)
  if (fromEnv?.given) {
    const text = process.env[fromEnv.env]
    if (text === undefined || text === '') throw new AppError('bad_request', `--${flag}-from-env: $${fromEnv.env} is not set or empty`)
    return text
  }
  return fromStdin ? firstStdinLine(flag) : value
}

/** The first line of standard input, which must be a pipe or a file and hold something. */
async function firstStdinLine(flag: string): Promise<string> {
  if (process.stdin.isTTY) throw new AppError('bad_request', `--${flag}-stdin reads a pipe or a file, not the terminal; type the value at the prompt instead`)
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  const text = Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0] ?? ''
  if (text === '') throw new AppError('bad_request', `--${flag}-stdin: standard input was empty`)
  return text
}
