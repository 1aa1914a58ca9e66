import {AppError} from '../../src/errors.js'
import {jsonLogLine, type LogFormat} from '../../src/lib/log.js'
import {printable} from '../../src/lib/printable.js'
import {storeRefusal} from '../../src/store/failure.js'

/*
 * What a command says on stderr when it fails or warns: one line, `Error: …` (a JSON line for a
 * service told to log JSON), never a stack unless MEDPANEL_DEBUG asks for it.
 */

/**
 * The one line a failed run prints: a store's refusal or failure in the operator's words
 * (`storeProblem`, which knows the store's name and file), an unexpected error as "internal
 * error" (its details go only to the debug stack), anything else as its own message folded.
 */
export function failureLine(error: Error, storeProblem: (error: unknown) => string | undefined, format: LogFormat): string {
  const text = oneLine(error.message || String(error))
  const message =
    storeRefusal(error) ?? storeProblem(error) ?? (error instanceof AppError && error.status >= 500 && error.code === 'internal' ? 'internal error' : text || 'failed')
  return format === 'json' ? jsonLogLine('error', printable(message)) : `Error: ${printable(message)}`
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
 * Said on stderr (never in --json's stdout) when an operator accepted a plain http partner URL to
 * a host other than loopback with --allow-insecure-partner-url.
 */
export function insecurePartnerUrlWarning(url: string): void {
  process.stderr.write(
    `Warning: partner URL ${printable(url)} is plain http: the partner's Basic credentials and every push cross the network unencrypted. Use https unless this network is trusted.\n`,
  )
}
