import {createHash} from 'node:crypto'

/**
 * The statements PostgreSQL keeps prepared on each connection: the texts prepared.ts compiles for
 * the hot paths, each under a name made from its text. A connection of the pool (open.ts) sends a
 * registered text as a named statement: parsed and planned on its first use on that connection,
 * then only bound and executed. Everything else goes unnamed, so the names stay a small, fixed set
 * (one per prepared query in the code), never one per ad-hoc statement.
 */
const names = new Map<string, string>()

/** Registers a hot statement's text; its name is the same in every process. */
export function registerStatement(text: string): void {
  if (!names.has(text)) names.set(text, `medpanel_${createHash('sha256').update(text).digest('hex').slice(0, 16)}`)
}

/** The name a statement text goes under, if it is a registered one. */
export function statementName(text: string): string | undefined {
  return names.get(text)
}

/** How many statement texts are registered. */
export function registeredStatements(): number {
  return names.size
}
