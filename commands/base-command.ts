import {existsSync, rmSync} from 'node:fs'
import {Command} from '@oclif/core/command'
import * as Flags from '@oclif/core/flags'
import type * as Interfaces from '@oclif/core/interfaces'
import {randomUUID} from 'node:crypto'
import {config, environment, environmentIfRead} from '../src/config.js'
import {AppError} from '../src/errors.js'
import {canonical} from '../src/lib/enums.js'
import {printable} from '../src/lib/printable.js'
import {jsonLogLine, LOG_FORMATS, type LogFormat} from '../src/lib/log.js'
import {jsonText} from './output/json.js'
import {catchInterrupt, INTERRUPTED_EXIT} from './output/interrupt.js'
import {systemClock, type Clock} from '../src/lib/clock.js'
import {openStore} from '../src/schema.js'
import {isPostgresUrl, sqliteFileOf, type Store} from '../src/store/db.js'
import {fileAccessProblem} from '../src/store/file-access.js'
import {storeFailure, storeRefusal} from '../src/store/failure.js'
import {printableUrl} from '../src/store/postgres/open.js'
import {sqliteCodeOf} from '../src/store/sqlite/handle.js'
import {mayWriteStore} from '../src/store/sqlite/open.js'

/**
 * A secret's flag, with its environment variable: a value given on the command line shows in
 * `ps` and the shell history, the variable or standard input (`--NAME-stdin`) do not. For
 * commands that create something (add-member, register-client) or only use the secret
 * (verify-partner, partner-serve); a command that changes a stored secret uses changedSecretFlag.
 */
export function secretFlag(description: string, env: string) {
  return Flags.string({description: `${description}; also from $${env} or standard input with the matching -stdin flag (a flag's value shows in ps)`, env})
}

/**
 * A secret an update-* command replaces. It does not take its variable on its own: one left
 * exported from an earlier add-member or register-client would otherwise replace a password
 * nobody asked to change. The operator names the source: the value, `--NAME-stdin`, or
 * `--NAME-from-env` (fromEnvFlag) for the variable.
 */
export function changedSecretFlag(description: string, flag: string, env: string) {
  return Flags.string({
    description: `${description}; or read it with --${flag}-stdin, or from $${env} with --${flag}-from-env (a flag's value shows in ps; the variable alone changes nothing)`,
  })
}

/** `--NAME-from-env`: take that secret from its variable, which update-* commands never read unasked. */
export function fromEnvFlag(flag: string, env: string) {
  return Flags.boolean({description: `set --${flag} to the value of $${env}`, default: false})
}

/** `--NAME-stdin`: read that secret from standard input (its first line). Only one such flag per run reads it. */
export function stdinFlag(flag: string, options: {exclusive?: string[]} = {}) {
  return Flags.boolean({
    description: `read --${flag} from standard input instead (e.g. printf %s "$PW" | medpanel … --${flag}-stdin)`,
    default: false,
    ...(options.exclusive ? {exclusive: options.exclusive} : {}),
  })
}

/**
 * Said on stderr (never in --json's stdout) when an operator accepted a plain http partner URL to
 * a host other than loopback with --allow-insecure-partner-url.
 */
export function insecurePartnerUrlWarning(url: string): void {
  process.stderr.write(
    `Warning: partner URL ${printable(url)} is plain http: the partner's Basic credentials and every push cross the network unencrypted. Use https unless this network is trusted.\n`,
  )
}

/**
 * A flag whose value is one of `choices`, in any letter case, handed to the command in its
 * canonical spelling: the same rule the HTTP interfaces follow (src/lib/enums.ts).
 */
export function choiceFlag<T extends string>(choices: readonly T[], options: {description: string; default?: T; env?: string}) {
  return Flags.string({
    description: `${options.description} (${choices.join(', ')}; any case)`,
    default: options.default,
    parse: parseChoice(choices),
    ...(options.env ? {env: options.env} : {}),
  })
}

/**
 * `--log-format` of the commands that run as services (serve, partner-serve): `text` keeps the
 * readable lines, `json` writes every log line as one JSON object (docs/operations.md, "Logs").
 */
export function logFormatFlag() {
  return choiceFlag(LOG_FORMATS, {
    description: 'how every log line is written: readable text, or json, one JSON object per line for a log collector',
    default: 'text',
    env: 'MEDPANEL_LOG_FORMAT',
  })
}

/** choiceFlag for a list: repeat the flag or separate values with commas. */
export function choicesFlag<T extends string>(choices: readonly T[], options: {description: string}) {
  return Flags.string({description: `${options.description} (${choices.join(', ')}; any case)`, multiple: true, delimiter: ',', parse: parseChoice(choices)})
}

function parseChoice<T extends string>(choices: readonly T[]) {
  return async (input: string): Promise<string> => {
    const value = canonical(input, choices)
    if (value === undefined) throw new Error(`Expected one of ${choices.join(', ')} (any case), got "${input}"`)
    return value
  }
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

/** Where commands keep the store unless told otherwise. */
export const DEFAULT_STORE = './medpanel.db'
/** Where the demo keeps its own store (serve --demo, demo). */
export const DEMO_STORE = './medpanel-demo.db'

export type CommandFlags<T extends typeof Command> = Interfaces.InferredFlags<(typeof BaseCommand)['baseFlags'] & T['flags']>
export type CommandArgs<T extends typeof Command> = Interfaces.InferredArgs<T['args']>

/**
 * What every medpanel command shares: `--db` / `--database-url` / `--json`, a lazily opened and
 * migrated store, prompts only where a person can answer them, and failures printed as one
 * `Error:` line with exit code 1.
 */
export abstract class BaseCommand<T extends typeof Command> extends Command {
  static override enableJsonFlag = true

  /**
   * Flags a run cannot do without, which are asked for at a terminal: without one, a run missing
   * several of them names them all at once. --help marks them (src/cli/main.ts).
   */
  static asked: string[] = []

  /**
   * A command that only reads the store (list-*, show-*): on a SQLite store this user may not
   * write (the file or its directory), it opens the store read-only instead of failing to open
   * it or leaving read-only -wal and -shm files behind; a store that would need migrating is then
   * refused with the way to migrate it. On a writable store it opens (and migrates) as any other.
   */
  static readsOnly = false

  /**
   * The SQLite store this run is making (its file did not exist when the command opened it), with
   * the files it may add beside it that were not there either.
   */
  private newStore: {file: string; files: string[]; announced?: boolean} | undefined

  static override baseFlags = {
    db: Flags.string({
      description: 'SQLite store file [default: ./medpanel.db; the demo: ./medpanel-demo.db]',
      env: 'MEDPANEL_DB',
      helpGroup: 'STORE',
    }),
    'database-url': Flags.string({
      description: 'database URL instead of --db: postgres://user@host:port/db for PostgreSQL, or sqlite:PATH',
      env: 'MEDPANEL_DATABASE_URL',
      helpGroup: 'STORE',
    }),
    'pool-size': Flags.integer({
      description: 'PostgreSQL connections this process keeps open [default: 10]',
      env: 'MEDPANEL_POOL_SIZE',
      min: 1,
      max: 1000,
      helpGroup: 'STORE',
    }),
    'write-lanes': Flags.integer({
      description: `PostgreSQL withdrawal batches that run at once across every process on the database; give every process the same [default: ${config.store.postgresWriteLanes}]`,
      env: 'MEDPANEL_WRITE_LANES',
      min: 1,
      max: config.store.postgresWriteLanesMax,
      helpGroup: 'STORE',
    }),
  }

  protected flags!: CommandFlags<T>
  protected args!: CommandArgs<T>
  protected clock: Clock = systemClock
  private store: Store | undefined
  /** The SQLite file this run opens as its store, kept for messages about it when opening it failed too. */
  private sqliteFile: string | undefined
  private runRequestId: string | undefined

  override async init(): Promise<void> {
    await super.init()
    // Every setting the environment holds, read and checked before anything else: a bad one
    // stops the command here with one line naming the variable, never later mid-request.
    const {now} = environment()
    this.clock = now === undefined ? systemClock : heldClock(now)
    const ctor = this.ctor as typeof BaseCommand
    const {args, flags} = await this.parse({
      flags: ctor.flags,
      baseFlags: ctor.baseFlags,
      args: ctor.args,
      enableJsonFlag: ctor.enableJsonFlag,
      strict: ctor.strict,
    })
    this.flags = flags as CommandFlags<T>
    this.args = args as CommandArgs<T>
    if (!this.canPrompt()) {
      const given = flags as Record<string, unknown>
      const missing = this.askedNow().filter((name) => {
        const value = given[name] ?? (given[`${name}-stdin`] === true ? 'from stdin' : undefined)
        return value === undefined || value === '' || (Array.isArray(value) && value.length === 0)
      })
      if (missing.length > 0) {
        const list = missing.map((name) => `--${name}`).join(', ')
        throw new AppError('bad_request', `missing required flag${missing.length > 1 ? 's' : ''} ${list} (a terminal would be asked for ${missing.length > 1 ? 'them' : 'it'})`)
      }
    }
  }

  /** The asked-for flags this run needs (a command may need fewer, depending on other flags). */
  protected askedNow(): string[] {
    return (this.ctor as typeof BaseCommand).asked
  }

  /**
   * The store, opened and migrated on first use and closed when the command ends. `reader` also
   * opens the read-only connection plain reads use (serve).
   */
  protected async openStore(options: {reader?: boolean; inspect?: boolean; listenUrl?: string; replicaUrl?: string} = {}): Promise<Store> {
    if (!this.store) {
      const flags = this.flags as {db?: string; 'database-url'?: string; 'pool-size'?: number; 'write-lanes'?: number}
      // An empty value is a script whose variable was unset: refuse it rather than write a
      // store nobody will find again.
      if (flags['database-url'] === '') throw new AppError('bad_request', '--database-url (or MEDPANEL_DATABASE_URL) is empty; give a database URL')
      if (flags['database-url'] !== undefined && flags.db !== undefined) {
        throw new AppError('bad_request', 'give the store once: --db (or MEDPANEL_DB) or --database-url (or MEDPANEL_DATABASE_URL), not both')
      }
      const dbGiven = this.argv.some((arg) => arg === '--db' || arg.startsWith('--db='))
      if (flags['database-url'] === undefined && !dbGiven && process.env.MEDPANEL_DB === '') {
        throw new AppError('bad_request', 'MEDPANEL_DB is set but empty; give the store file, e.g. --db ./medpanel.db')
      }
      // The demo keeps to a file of its own, so its published credentials never land in a real store.
      const file = flags.db ?? (this.usesDemoStore() ? DEMO_STORE : DEFAULT_STORE)
      if (flags['database-url'] === undefined && file.trim() === '')
        throw new AppError('bad_request', '--db (or MEDPANEL_DB) is empty; give the store file, e.g. --db ./medpanel.db')
      // Settings of a PostgreSQL store given for a SQLite one would be ignored without a word:
      // refused instead, as serve's --listen-url and --replica-url are.
      const onPostgres = isPostgresUrl(flags['database-url'])
      for (const [flag, variable] of [
        ['pool-size', 'MEDPANEL_POOL_SIZE'],
        ['write-lanes', 'MEDPANEL_WRITE_LANES'],
      ] as const) {
        if (flags[flag] !== undefined && !onPostgres) {
          throw new AppError('bad_request', `--${flag} (or ${variable}) applies to a PostgreSQL store: give --database-url postgres://… too, or leave it out`)
        }
      }
      const where = flags['database-url'] ? {url: flags['database-url'], poolSize: flags['pool-size'], writeLanes: flags['write-lanes']} : {file}
      const sqliteFile = sqliteFileOf(where)
      this.sqliteFile = sqliteFile !== undefined && isStoreFile(sqliteFile) ? sqliteFile : undefined
      const readsOnly = (this.ctor as typeof BaseCommand).readsOnly || options.inspect === true
      if (sqliteFile !== undefined && isStoreFile(sqliteFile) && !existsSync(sqliteFile)) {
        const from = dbGiven ? 'given with --db' : flags.db !== undefined ? 'from MEDPANEL_DB' : 'the default; name one with --db or MEDPANEL_DB'
        // A store is never made by a command that only reads: a typo in --db, or a MEDPANEL_DB
        // left exported from elsewhere, must not answer "nothing here" from a store made just now.
        if (readsOnly) throw new AppError('not_found', `there is no store at ${sqliteFile} (${from}); nothing was created`)
        this.newStore = {file: sqliteFile, files: STORE_FILE_SUFFIXES.map((suffix) => `${sqliteFile}${suffix}`).filter((f) => !existsSync(f))}
      }
      const readonly = readsOnly && !options.inspect && sqliteFile !== undefined && readOnlyStore(sqliteFile)
      if (!readsOnly && this.sqliteFile !== undefined && existsSync(this.sqliteFile)) {
        // Asked before SQLite opens it: SQLite would open a store it may not write read-only, and
        // leave -wal and -shm files beside it before the first write failed.
        const denied = fileAccessProblem(this.sqliteFile, 'write', 'the store')
        if (denied) throw new AppError('unavailable', denied)
      }
      this.store = await openStore({...where, ...options, ...(readonly ? {readonly} : {})})
    }
    return this.store
  }

  /**
   * Says on stderr, once, that this run made a new store (see newStore). Commands say it when they
   * succeed (finally); serve says it once it is up, since it runs until it is stopped.
   */
  protected announceNewStore(): void {
    if (!this.newStore || this.newStore.announced) return
    this.newStore.announced = true
    const file = this.newStore.file
    process.stderr.write(this.logFormat() === 'json' ? `${jsonLogLine('info', 'created a new store', {store: file})}\n` : `created a new store at ${file}\n`)
  }

  /**
   * This run's request id, made on first use: a change a command queues for partners carries it
   * (X-Request-Id), as a change made over HTTP carries its request's.
   */
  protected requestId(): string {
    this.runRequestId ??= randomUUID()
    return this.runRequestId
  }

  /**
   * The --log-format of this run: json only for a command that has the flag and was given it (or
   * MEDPANEL_LOG_FORMAT). Read from the command line itself when parsing it failed, so a service
   * told to log JSON reports even a bad flag in JSON.
   */
  protected logFormat(): LogFormat {
    if (this.flags) return (this.flags as {'log-format'?: string})['log-format'] === 'json' ? 'json' : 'text'
    if (!(this.ctor as typeof BaseCommand).flags?.['log-format']) return 'text'
    const at = this.argv.findLastIndex((arg) => arg === '--log-format' || arg.startsWith('--log-format='))
    const given = at < 0 ? process.env.MEDPANEL_LOG_FORMAT : this.argv[at]!.includes('=') ? this.argv[at]!.split('=')[1] : this.argv[at + 1]
    return given?.toLowerCase() === 'json' ? 'json' : 'text'
  }

  /** Whether this run keeps to the demo's own store when no --db is given (serve --demo, demo). */
  protected usesDemoStore(): boolean {
    return false
  }

  /** True when a person can answer a prompt: stdin is a terminal and no --json was asked for. */
  protected canPrompt(): boolean {
    return Boolean(process.stdin.isTTY) && !this.jsonEnabled()
  }

  /** A value from its flag, else from a prompt on a TTY, else an error naming the flag. */
  protected async need(value: string | undefined, flag: string, message: string, validate?: (v: string) => true | string): Promise<string> {
    if (value !== undefined && value !== '') return value
    if (!this.canPrompt()) throw new AppError('bad_request', `missing required flag --${flag}`)
    const {input} = await import('@inquirer/prompts')
    return input({message, required: true, validate: validate ?? ((v) => (v.trim() ? true : 'required'))})
  }

  /**
   * A secret from its flag (or, for secretFlag, its variable), from standard input when
   * `fromStdin`, or from the variable `fromEnv.env` when `fromEnv.given` (changedSecretFlag).
   * Two sources named on one command line are refused; a secretFlag variable left in the
   * environment gives way to --NAME-stdin.
   */
  protected async secret(value: string | undefined, fromStdin: boolean, flag: string, fromEnv?: {env: string; given: boolean}): Promise<string | undefined> {
    const onCommandLine = value !== undefined && this.argv.some((arg) => arg === `--${flag}` || arg.startsWith(`--${flag}=`))
    const named = [onCommandLine && `--${flag}`, fromStdin && `--${flag}-stdin`, fromEnv?.given && `--${flag}-from-env`].filter(Boolean)
    if (named.length > 1) throw new AppError('bad_request', `give one of ${named.join(', ')}, not several`)
    if (fromEnv?.given) {
      const text = process.env[fromEnv.env]
      if (text === undefined || text === '') throw new AppError('bad_request', `--${flag}-from-env: $${fromEnv.env} is not set or empty`)
      return text
    }
    if (!fromStdin) return value
    if (process.stdin.isTTY) throw new AppError('bad_request', `--${flag}-stdin reads a pipe or a file, not the terminal; type the value at the prompt instead`)
    const chunks: Buffer[] = []
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
    const text = Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0] ?? ''
    if (text === '') throw new AppError('bad_request', `--${flag}-stdin: standard input was empty`)
    return text
  }

  /**
   * A long write in whole transactions with its progress (seed-posts, seed-pulses) that Ctrl-C
   * stops after the transaction in flight: `write` reports progress and asks `stopAsked` between
   * transactions. When it was stopped, what it kept stays (a store this run made included), stderr
   * says so with `kept(result)` and how to finish, and the exit code is 130.
   */
  protected async interruptibleWrite<R extends {interrupted: boolean}>(
    label: string,
    total: number,
    write: (progressed: (done: number) => void, stopAsked: () => boolean) => Promise<R>,
    kept: (result: R) => string,
  ): Promise<R> {
    // Listening before anything is printed: under Deno a signal listener starts a moment after it is added.
    const interrupt = catchInterrupt()
    const progress = await this.progress(label, total)
    const result = await write(
      (done) => progress.update(done),
      () => interrupt.requested,
    ).finally(() => {
      progress.stop()
      interrupt.release()
    })
    if (result.interrupted) {
      this.announceNewStore()
      process.stderr.write(`Interrupted: ${kept(result)}; run the same command again to finish.\n`)
      process.exitCode = INTERRUPTED_EXIT
    }
    return result
  }

  /**
   * Progress of a long step, on stderr only: a bar for a person at a terminal, otherwise a plain
   * line about every tenth of the way (scripts and logs), so stdout stays the one JSON document.
   */
  protected async progress(label: string, total: number): Promise<{update: (done: number) => void; stop: () => void}> {
    if (process.stderr.isTTY && !this.jsonEnabled()) {
      // cli-progress is CommonJS: its exports arrive as the default export of a dynamic import.
      const {SingleBar, Presets} = (await import('cli-progress')).default
      const bar = new SingleBar({stream: process.stderr, format: `${label} [{bar}] {value}/{total}`, hideCursor: true}, Presets.shades_classic)
      bar.start(total, 0)
      return {update: (done) => bar.update(done), stop: () => bar.stop()}
    }
    let shown = 0
    return {
      update: (done) => {
        if (done === total || done - shown >= Math.max(1, total / 10)) {
          shown = done
          process.stderr.write(`${label}: ${done}/${total}\n`)
        }
      },
      stop: () => undefined,
    }
  }

  /**
   * The --json document of every command. Money is decimal.js end to end, and is written as a JSON
   * number made from its exact text (178, 217.5), never a string and never through a float.
   */
  protected override logJson(json: unknown): void {
    process.stdout.write(jsonText(json))
  }

  /** Human output; silent under --json (the returned value is printed instead). */
  protected say(text: string): void {
    if (!this.jsonEnabled()) this.log(text)
  }

  protected override async catch(error: Error & {exitCode?: number; oclif?: {exit?: number}}): Promise<void> {
    // oclif's own exits (help, version) carry their code; pass them through untouched.
    if (error.oclif?.exit === 0) return
    // Ctrl-C at a prompt: the person asked to stop, which is no error. 130 is the shell's code for it.
    if (error.name === 'ExitPromptError') {
      this.parsed = true
      process.exitCode = 130
      return
    }
    // A failed parse still counts as parsed: oclif would otherwise add a second warning line.
    this.parsed = true
    const text = oneLine(error.message || String(error))
    const message =
      storeRefusal(error) ??
      storeProblem(error, this.storeName(), this.sqliteFile) ??
      (error instanceof AppError && error.status >= 500 && error.code === 'internal' ? 'internal error' : text || 'failed')
    // A service asked for JSON logs fails in a JSON line too, so its collector reads that one as well.
    process.stderr.write(this.logFormat() === 'json' ? `${jsonLogLine('error', printable(message))}\n` : `Error: ${printable(message)}\n`)
    if (environmentIfRead()?.debug) process.stderr.write(`${error.stack ?? ''}\n`)
    process.exitCode = 1
  }

  /** The store as the operator named it, for messages about the store itself (a URL without its password). */
  private storeName(): string {
    const flags = (this.flags ?? {}) as {db?: string; 'database-url'?: string}
    const url = flags['database-url']
    if (url !== undefined) return isPostgresUrl(url) ? printableUrl(url) : url
    return flags.db ?? (this.flags ? (this.usesDemoStore() ? DEMO_STORE : DEFAULT_STORE) : 'the store')
  }

  protected override async finally(error: Error | undefined): Promise<void> {
    await this.store?.close()
    this.store = undefined
    if (this.newStore && !this.newStore.announced) {
      // A store this run made is kept only when the run succeeded: one that failed (bad input, a
      // refusal, Ctrl-C) leaves the directory as it found it, so the next run starts clean.
      if (error || process.exitCode) for (const file of this.newStore.files) rmSync(file, {force: true})
      else this.announceNewStore()
    }
    await super.finally(error)
  }
}

/** What SQLite and medpanel may create beside a store file: its journals and its key file. */
const STORE_FILE_SUFFIXES = ['', '-wal', '-shm', '-journal', '.key']

/** A store on disk, as opposed to an in-memory one or a `file:` URI SQLite resolves itself. */
function isStoreFile(file: string): boolean {
  return file !== '' && file !== ':memory:' && !file.startsWith('file:')
}

/** A SQLite store file that exists and that this user may not write (or not create files beside). */
function readOnlyStore(file: string): boolean {
  if (!isStoreFile(file) || !existsSync(file)) return false
  return !mayWriteStore(file)
}

/**
 * A store failure in an operator's words, naming the store; undefined for any other error. `file`
 * (a SQLite store's) is looked at when SQLite could not write or open a file: its permissions, or
 * its directory's, name the cause SQLite's words leave out.
 */
function storeProblem(error: unknown, store: string, file?: string): string | undefined {
  const failure = storeFailure(error)
  if (failure === undefined) return undefined
  const code = sqliteCodeOf(error)
  const denied =
    file !== undefined && (code === 'SQLITE_READONLY' || code === 'SQLITE_CANTOPEN' || code === 'SQLITE_IOERR') ? fileAccessProblem(file, 'write', 'the store') : undefined
  if (denied) return denied
  if (code === 'SQLITE_FULL') return `the store ${store} is full (no space left on its disk, or at its size limit); the write that failed was not saved`
  if (code === 'SQLITE_READONLY') return `the store ${store} is read-only for this user; this command needs to write to it (read commands such as list-* and show-* work)`
  if (code === 'SQLITE_NOTADB') return `cannot open ${store}: file is not a database`
  if (failure === 'busy') return `the store ${store} is busy (another process holds its write lock); try again`
  if (failure === 'lost')
    return `the connection to the store ${store} broke (${oneLine((error as Error).message)}); what this command was writing may or may not have been saved: look before running it again`
  return `the store ${store} cannot be used: ${oneLine((error as Error).message)}`
}

/**
 * oclif spreads one parse error over several lines ("Missing 1 required arg:", "id  client_id",
 * "See more help with --help", a "Note: …" paragraph); fold it into one line that keeps the facts.
 */
export function oneLine(message: string): string {
  const lines = message.split('\n').map((line) => line.trim())
  const note = lines.findIndex((line) => /^Note:/.test(line))
  const kept = (note === -1 ? lines : lines.slice(0, note)).filter((line) => line && !/^See more help/.test(line))
  const [first = '', ...rest] = kept
  const head = /^Parsing --\S+$/.test(first) ? `${first}:` : first
  const details = rest.map((line) => {
    const [name, description] = line.split(/\s{2,}/, 2)
    return description ? `${name} (${description})` : line
  })
  return [head, details.join(', ')]
    .filter(Boolean)
    .join(' ')
    .replace(/^The following error occurred:\s*/, '')
    .replace(/^Error:\s*/, '')
}

/**
 * The time every command reads when MEDPANEL_NOW=2026-01-01T00:00:00Z holds it at that instant, so
 * a script that seeds data (register-client --client-id, seed-pulses --seed, seed-posts --seed)
 * gets the same rows, timestamps included, on every run. Meant for test data: tokens and codes
 * do not age while it is set.
 */
function heldClock(instant: Date): Clock {
  return {now: () => new Date(instant.getTime())}
}
