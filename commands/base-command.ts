import {Command} from '@oclif/core/command'
import type * as Interfaces from '@oclif/core/interfaces'
import {randomUUID} from 'node:crypto'
import {environment, environmentIfRead} from '../src/config.js'
import type {LogFormat} from '../src/lib/log.js'
import {jsonText} from './output/json.js'
import {systemClock, type Clock} from '../src/lib/clock.js'
import type {Store} from '../src/store/db.js'
import type {AuditNote} from '../src/operator/audit.js'
import type {StoreParts} from '../src/store/database.js'
import {CommandStore, type OpenOptions, type StoreFlags, storeFlags, storeName} from './support/store.js'
import {failureLine} from './support/messages.js'
import {canPrompt, need, requireAsked} from './support/prompts.js'
import {readSecret} from './support/secrets.js'
import {interruptibleWrite} from './support/progress.js'

// The helpers commands import with BaseCommand, from where they now live.
export {DEFAULT_STORE, DEMO_STORE} from './support/store.js'
export {changedSecretFlag, choiceFlag, choicesFlag, fromEnvFlag, logFormatFlag, secretFlag, stdinFlag} from './support/flags.js'
export {answerCheck} from './support/prompts.js'
export {insecurePartnerUrlWarning, oneLine} from './support/messages.js'

export type CommandFlags<T extends typeof Command> = Interfaces.InferredFlags<(typeof BaseCommand)['baseFlags'] & T['flags']>
export type CommandArgs<T extends typeof Command> = Interfaces.InferredArgs<T['args']>

/**
 * What every medpanel command shares: `--db` / `--database-url` / `--json`, a lazily opened and
 * migrated store, prompts only where a person can answer them, and failures printed as one
 * `Error:` line with exit code 1. Each concern's rules live in commands/support/ (store, secrets,
 * prompts, progress, messages); this class holds the run's state and hands it to them.
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

  static override baseFlags = storeFlags

  protected flags!: CommandFlags<T>
  protected args!: CommandArgs<T>
  protected clock: Clock = systemClock
  private readonly store = new CommandStore()
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
    if (!this.canPrompt()) requireAsked(this.askedNow(), flags as Record<string, unknown>)
  }

  /** The asked-for flags this run needs (a command may need fewer, depending on other flags). */
  protected askedNow(): string[] {
    return (this.ctor as typeof BaseCommand).asked
  }

  /**
   * The store, opened and migrated on first use and closed when the command ends. `reader` also
   * opens the read-only connection plain reads use (serve).
   */
  protected openStore(options: OpenOptions = {}): Promise<Store> {
    const run = {argv: this.argv, readsOnly: (this.ctor as typeof BaseCommand).readsOnly, demo: this.usesDemoStore()}
    return this.store.open(this.flags as StoreFlags, run, options)
  }

  /**
   * Runs an operator's change and records it in the audit trail, both in one write transaction on
   * this run's store (src/operator/audit.ts): the change and its record commit together, and a
   * change that fails records nothing. `change` must use the store it is handed, never
   * openStore()'s connection, which the transaction holds; `note` names the target and the fields
   * set, with SECRET_CHANGED in place of any secret.
   */
  protected async audited<R>(change: (store: StoreParts) => Promise<R>, note: (result: R) => AuditNote): Promise<R> {
    const store = await this.openStore()
    const audit = await import('../src/operator/audit.js')
    return audit.audited(store, () => this.auditRun(audit.osUser()), change, note)
  }

  /**
   * Records a change made in several transactions of its own (a seed, a restore, the demo) once
   * it is made, in a transaction of its own: on `store` when given (serve's), else this run's.
   */
  protected async recordAudit(note: AuditNote, store?: StoreParts): Promise<void> {
    const target = store ?? (await this.openStore())
    const audit = await import('../src/operator/audit.js')
    await audit.audited(
      target,
      () => this.auditRun(audit.osUser()),
      async () => undefined,
      () => note,
    )
  }

  /** Who runs this command and when, for its record in the audit trail. */
  private auditRun(osUser: string): {command: string; os_user: string; at: Date} {
    return {command: this.id ?? (this.ctor as typeof BaseCommand).name, os_user: osUser, at: this.clock.now()}
  }

  /**
   * Says on stderr, once, that this run made a new store. Commands say it when they succeed
   * (finally); serve says it once it is up, since it runs until it is stopped.
   */
  protected announceNewStore(): void {
    this.store.announce(this.logFormat())
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
    return canPrompt(this.jsonEnabled())
  }

  /** A value from its flag, else from a prompt on a TTY, else an error naming the flag. */
  protected need(value: string | undefined, flag: string, message: string, validate?: (v: string) => true | string): Promise<string> {
    return need(value, flag, message, this.canPrompt(), validate)
  }

  /** A secret from its flag, its -stdin flag or (changedSecretFlag) its -from-env flag: see support/secrets.ts. */
  protected secret(value: string | undefined, fromStdin: boolean, flag: string, fromEnv?: {env: string; given: boolean}): Promise<string | undefined> {
    return readSecret(value, flag, {argv: this.argv, fromStdin, ...(fromEnv ? {fromEnv} : {})})
  }

  /**
   * A long write in whole transactions with its progress that Ctrl-C stops after the transaction
   * in flight (support/progress.ts); what it kept, a store this run made included, stays.
   */
  protected interruptibleWrite<R extends {interrupted: boolean}>(
    label: string,
    total: number,
    write: (progressed: (done: number) => void, stopAsked: () => boolean) => Promise<R>,
    kept: (result: R) => string,
  ): Promise<R> {
    return interruptibleWrite({label, total, write, kept}, !this.jsonEnabled(), () => this.announceNewStore())
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
    // A failed parse still counts as parsed: oclif would otherwise add a second warning line.
    this.parsed = true
    // Ctrl-C at a prompt: the person asked to stop, which is no error. 130 is the shell's code for it.
    if (error.name === 'ExitPromptError') {
      process.exitCode = 130
      return
    }
    const name = () => storeName(this.flags as StoreFlags | undefined, this.flags ? this.usesDemoStore() : false)
    // A service asked for JSON logs fails in a JSON line too, so its collector reads that one as well.
    process.stderr.write(`${failureLine(error, (failure) => this.store.problem(failure, name), this.logFormat())}\n`)
    if (environmentIfRead()?.debug) process.stderr.write(`${error.stack ?? ''}\n`)
    process.exitCode = 1
  }

  protected override async finally(error: Error | undefined): Promise<void> {
    await this.store.close(Boolean(error || process.exitCode), this.logFormat())
    await super.finally(error)
  }
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
