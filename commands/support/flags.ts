import * as Flags from '@oclif/core/flags'
import {canonical} from '../../src/lib/enums.js'
import {LOG_FORMATS} from '../../src/lib/log.js'

/*
 * Flag factories the commands share: secrets with their variable and -stdin companions, choices
 * in any letter case, and the services' --log-format.
 */

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
