import fc from 'fast-check'
import {sql} from 'kysely'
import {createHash} from 'node:crypto'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {seedDemo} from '../../src/demo.js'
import {DEMO_CLIENT_ID, DEMO_CLIENT_SECRET} from '../../src/demo.js'
import {form, freshApp, type TestContext} from '../helpers/app.js'
import {onPostgres} from '../helpers/store.js'

/** A URL cannot carry a lone surrogate (a client sends U+FFFD instead); bodies still do. */
const wellFormed = (text: string) => text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd')

interface Operation {
  method: string
  path: string
  parameters: {name: string; in: string}[]
}

/** Every stored row, hashed per table: what a refused request must leave exactly as it was. */
async function fingerprint(ctx: TestContext): Promise<Record<string, string>> {
  const tables = (
    onPostgres
      ? await sql<{name: string}>`select table_name as name from information_schema.tables where table_schema = current_schema() order by name`.execute(ctx.db)
      : await sql<{name: string}>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and sql not like 'create virtual%' order by name`.execute(ctx.db)
  ).rows
  const result: Record<string, string> = {}
  for (const {name} of tables) {
    const names = onPostgres
      ? await sql<{name: string}>`select column_name as name from information_schema.columns where table_schema = current_schema() and table_name = ${name}`.execute(ctx.db)
      : await sql<{name: string}>`select name from pragma_table_info(${name})`.execute(ctx.db)
    // Every value as text: node:sqlite refuses to read a 64-bit integer (the search keys) as a number.
    const columns = names.rows.map((c) => sql`cast(${sql.ref(c.name)} as text)`)
    const rows = (await sql`select ${sql.join(columns)} from ${sql.table(name)}`.execute(ctx.db)).rows.map((row) => JSON.stringify(Object.values(row as object)))
    result[name] = createHash('sha256').update(rows.sort().join('\n')).digest('hex')
  }
  return result
}

/**
 * Malformed requests to every operation the app documents: wrong types, NUL, lone surrogates,
 * deep nesting, huge strings, wrong content types, odd headers, with and without real
 * credentials. Never a 5xx, never a stack trace or SQL in a body, and no stored row changes.
 */
describe('every documented operation, fuzzed', () => {
  let ctx: TestContext
  let operations: Operation[]
  let bearer: string
  const apiKey = 'mpk_demo_conversations_key'

  beforeAll(async () => {
    ctx = await freshApp({demo: true})
    await seedDemo(ctx.db, 'http://localhost', ctx.clock.now())
    const doc = (await (await ctx.app.request('/openapi.json')).json()) as {paths: Record<string, Record<string, {parameters?: {name: string; in: string}[]}>>}
    operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({method: method.toUpperCase(), path, parameters: op.parameters ?? []})),
    )
    const issued = await ctx.app.request('/oauth/token', form({grant_type: 'client_credentials', client_id: DEMO_CLIENT_ID, client_secret: DEMO_CLIENT_SECRET}))
    bearer = ((await issued.json()) as {access_token: string}).access_token
  })
  afterAll(async () => ctx.store.close())

  const nasty = fc.oneof(
    fc.string(),
    fc.string({unit: 'grapheme', maxLength: 40}),
    fc.constantFrom(
      '',
      '\u0000',
      'a\u0000b',
      '\ud800',
      '\udfff x',
      '..',
      '%',
      '%00',
      '%zz',
      '-1',
      '1e309',
      'NaN',
      'null',
      '[]',
      '{}',
      'user_id',
      'npi',
      '../../etc',
      "' or 1=1 --",
      '"',
      '<x>',
      '\u001b[2J',
    ),
    fc.string({minLength: 5000, maxLength: 9000}),
    fc.integer().map(String),
  )
  const deep = fc.integer({min: 50, max: 3000}).map((n) => '['.repeat(n) + ']'.repeat(n))
  const json = fc.oneof(
    fc.jsonValue({maxDepth: 4}).map((v) => JSON.stringify(v)),
    deep,
    fc.record({type: nasty, amount: fc.oneof(nasty, fc.double().map(String)), member_details: fc.oneof(fc.dictionary(nasty, nasty), nasty)}).map((v) => JSON.stringify(v)),
    nasty,
  )
  const contentType = fc.constantFrom(
    'application/json',
    'application/x-www-form-urlencoded',
    'text/plain',
    'multipart/form-data; boundary=zz',
    'application/xml',
    '',
    'application/json; charset=utf-16',
  )
  const credentials = fc.constantFrom('none', 'basic', 'bearer', 'key', 'garbage')
  const accept = fc.constantFrom(undefined, '*/*', 'application/vnd.service-v1+xml', 'application/vnd.service-v1+json', 'text/html', '\u0000')

  it('answers malformed requests below 500, in a body with no stack or SQL, and changes nothing', async () => {
    const before = await fingerprint(ctx)
    await fc.assert(
      fc.asyncProperty(
        fc.nat(),
        fc.dictionary(fc.constantFrom('terms[]', 'terms', 'start', 'end', 'client_id', 'redirect_uri', 'response_type', 'state', 'x'), nasty, {maxKeys: 5}),
        fc.array(nasty, {minLength: 3, maxLength: 3}),
        json,
        contentType,
        credentials,
        accept,
        fc.boolean(),
        async (pick, query, segments, body, type, who, acceptHeader, wrongMethod) => {
          const op = operations[pick % operations.length]!
          let i = 0
          const path = op.path.replace(/\{[^}]+\}/g, () => encodeURIComponent(wellFormed(segments[i++ % segments.length]!)))
          const headers: Record<string, string> = {origin: 'http://localhost'}
          if (type) headers['content-type'] = type
          if (acceptHeader !== undefined) headers.accept = acceptHeader
          if (who === 'basic') headers.authorization = `Basic ${Buffer.from(`${DEMO_CLIENT_ID}:${DEMO_CLIENT_SECRET}`).toString('base64')}`
          if (who === 'bearer') headers.authorization = `Bearer ${bearer}`
          if (who === 'key') headers['x-service-conversation-api-key'] = apiKey
          if (who === 'garbage') headers.authorization = `Bearer ${segments[0]!.slice(0, 600)}`
          const method = wrongMethod ? 'PATCH' : op.method
          const init: RequestInit = {method, headers}
          if (method !== 'GET' && method !== 'HEAD') init.body = body
          const url = `${path}?${new URLSearchParams(Object.entries(query))}`
          let res: Response
          try {
            res = await ctx.app.request(url, init)
          } catch (error) {
            // Header values a fetch client would refuse to send (NUL) never reach a server.
            if (/header|ByteString|invalid/i.test(String(error))) return
            throw error
          }
          const text = await res.text()
          expect(res.status, `${method} ${url}`).toBeLessThan(500)
          expect(text).not.toMatch(/\bat .+\.(ts|js|tsx):\d+|SQLITE_|sqlite|syntax error|no such (table|column)/i)
        },
      ),
      {numRuns: 600},
    )
    expect(await fingerprint(ctx)).toEqual(before)
    expect(ctx.logs.filter((line) => line.startsWith('error'))).toEqual([])
  }, 120_000)
})
