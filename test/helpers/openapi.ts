import type {TestContext} from './app.js'

/**
 * The operations of `documented` (`METHOD /path`, as the "Calling it" tables of the interface
 * docs list them) that the app's /openapi.json lacks: each interface's operations test expects none.
 */
export async function missingOperations(ctx: TestContext, documented: string[]): Promise<string[]> {
  const res = await ctx.app.request('/openapi.json')
  if (res.status !== 200) throw new Error(`/openapi.json answered ${res.status}`)
  const doc = (await res.json()) as {paths: Record<string, Record<string, unknown>>}
  const operations = Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`))
  return documented.filter((operation) => !operations.includes(operation))
}
