import fc from 'fast-check'
import {sql} from 'kysely'
import {createHash} from 'node:crypto'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {seedDemo} from '../../src/demo.js'
import {DEMO_CLIENT_ID, DEMO_CLIENT_SECRET} from '../../src/demo.js'
import {form, freshApp, type TestContext} from '../helpers/app.js'
import {onPostgres} from '../helpers/store.js'
import {basicAuth} from '../helpers/http-basic.js'

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
    await seedDemo(ctx.store, 'http://localhost', ctx.clock.now())
    // The first read of the key set makes the ID-token signing keys: done here, so the fuzzed
    // requests below meet a store in which any row they change is a real change.
    expect((await ctx.app.request('/oauth/jwks')).status).toBe(200)
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
  // Up to what a 16 KiB body holds, past where a recursive JSON reader runs out of stack.
  const deep = fc.integer({min: 50, max: 8000}).map((n) => '['.repeat(n) + ']'.repeat(n))
  const repeatedKey = fc
    .tuple(fc.constantFrom('type', 'amount', 'member_details', 'x'), fc.jsonValue({maxDepth: 2}), fc.jsonValue({maxDepth: 2}))
    .map(([key, first, last]) => `{${JSON.stringify(key)}:${JSON.stringify(first)},"type":"PAYPAL",${JSON.stringify(key)}:${JSON.stringify(last)}}`)
  const json = fc.oneof(
    fc.jsonValue({maxDepth: 4}).map((v) => JSON.stringify(v)),
    deep,
    repeatedKey,
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
          if (who === 'basic') headers.authorization = basicAuth(DEMO_CLIENT_ID, DEMO_CLIENT_SECRET)
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
  })
})

interface BodyOperation {
  method: string
  path: string
  contentType: string
  example: Record<string, unknown>
  parameters: {name: string; in: string; example?: unknown; schema?: {example?: unknown}}[]
}

/**
 * Bodies that are well-formed but read two ways or nest deeply: a key repeated (the first copy
 * holding anything, the last the documented value, so a last-wins reader would accept it), and a
 * value replaced by up to 8,000 levels of arrays or objects, sent to every operation that takes a
 * body, with its documented parameters and a credential it accepts so the body is actually read.
 * Never a 5xx, never a stack trace in a body.
 */
describe('documented request bodies with repeated keys and deep nesting', () => {
  let ctx: TestContext
  let operations: BodyOperation[]
  let bearer: string

  beforeAll(async () => {
    ctx = await freshApp({demo: true})
    await seedDemo(ctx.store, 'http://localhost', ctx.clock.now())
    type Op = {parameters?: BodyOperation['parameters']; requestBody?: {content: Record<string, {example?: Record<string, unknown>}>}}
    const doc = (await (await ctx.app.request('/openapi.json')).json()) as {paths: Record<string, Record<string, Op>>}
    operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).flatMap(([method, op]) =>
        Object.entries(op.requestBody?.content ?? {}).flatMap(([contentType, media]) =>
          media.example ? [{method: method.toUpperCase(), path, contentType, example: media.example, parameters: op.parameters ?? []}] : [],
        ),
      ),
    )
    expect(operations.some((op) => op.contentType === 'application/json')).toBe(true)
    const issued = await ctx.app.request('/oauth/token', form({grant_type: 'client_credentials', client_id: DEMO_CLIENT_ID, client_secret: DEMO_CLIENT_SECRET}))
    bearer = ((await issued.json()) as {access_token: string}).access_token
  })
  afterAll(async () => ctx.store.close())

  const filler = fc.oneof(fc.jsonValue({maxDepth: 2}), fc.string(), fc.integer())
  const nesting = fc.record({
    levels: fc.oneof(fc.integer({min: 1, max: 40}), fc.integer({min: 1000, max: 8000})),
    kind: fc.constantFrom('array', 'object'),
  })
  // As deep as still fits the 16 KiB body limit: 2 bytes a level for arrays, 6 for objects.
  const deep = ({levels, kind}: {levels: number; kind: string}) =>
    kind === 'array' ? '['.repeat(levels) + ']'.repeat(levels) : `${'{"a":'.repeat(Math.min(levels, 2500))}1${'}'.repeat(Math.min(levels, 2500))}`
  /** What to do to an example: repeat one key, nest one value deep (either, both or neither). */
  const mutation = fc.record({
    duplicate: fc.option(fc.record({pick: fc.nat(), first: filler, inside: fc.boolean()})),
    nest: fc.option(fc.record({pick: fc.nat(), inside: fc.boolean(), nesting})),
  })

  type Mutation = typeof mutation extends fc.Arbitrary<infer T> ? T : never

  function objectText(entries: [string, string][]): string {
    return `{${entries.map(([key, text]) => `${JSON.stringify(key)}:${text}`).join(',')}}`
  }

  function jsonBody(example: Record<string, unknown>, m: Mutation): string {
    const top: [string, string][] = Object.entries(example).map(([key, value]) => [key, JSON.stringify(value)])
    // "Inside" is the first object-valued field (member_details); without one, the top level.
    const innerAt = Object.values(example).findIndex((v) => v !== null && typeof v === 'object' && !Array.isArray(v))
    const inner: [string, string][] = innerAt < 0 ? [] : Object.entries(example[top[innerAt]![0]] as object).map(([k, v]) => [k, JSON.stringify(v)])
    const target = (inside: boolean) => (inside && inner.length > 0 ? inner : top)
    if (m.nest) {
      const entries = target(m.nest.inside)
      const at = m.nest.pick % entries.length
      entries[at] = [entries[at]![0], deep(m.nest.nesting)]
    }
    if (m.duplicate) {
      const entries = target(m.duplicate.inside)
      const [[key, text]] = entries.splice(m.duplicate.pick % entries.length, 1) as [[string, string]]
      // Anything first, the documented value last: a reader that keeps the last copy sees a valid body.
      entries.unshift([key, JSON.stringify(m.duplicate.first)])
      entries.push([key, text])
    }
    if (innerAt >= 0) top[innerAt] = [top[innerAt]![0], objectText(inner)]
    return objectText(top)
  }

  function formBody(example: Record<string, unknown>, m: Mutation): URLSearchParams {
    const entries: [string, string][] = Object.entries(example).map(([key, value]) => [key, String(value)])
    if (m.nest) {
      const at = m.nest.pick % entries.length
      // Bracketed names are how form parsers spell nesting (a[b][c]=…); 7 bytes a level encoded.
      entries.push([`${entries[at]![0]}${'[a]'.repeat(Math.min(m.nest.nesting.levels, 1500))}`, 'x'])
    }
    if (m.duplicate) {
      const [key] = entries[m.duplicate.pick % entries.length]!
      entries.unshift([key, JSON.stringify(m.duplicate.first)])
    }
    return new URLSearchParams(entries)
  }

  it('answers below 500 with no stack in the body', async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat(), mutation, async (pick, m) => {
        const op = operations[pick % operations.length]!
        const value = (name: string) => {
          const parameter = op.parameters.find((p) => p.name === name)
          return parameter?.example ?? parameter?.schema?.example
        }
        const path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(String(value(name) ?? 'x')))
        const headers: Record<string, string> = {origin: 'http://localhost', 'content-type': op.contentType}
        if (path.startsWith('/balance/')) headers.authorization = basicAuth(DEMO_CLIENT_ID, DEMO_CLIENT_SECRET)
        else if (!path.startsWith('/oauth/')) headers.authorization = `Bearer ${bearer}`
        const body = op.contentType === 'application/json' ? jsonBody(op.example, m) : formBody(op.example, m)
        const res = await ctx.app.request(path, {method: op.method, headers, body})
        const text = await res.text()
        expect(res.status, `${op.method} ${path} ${String(body).slice(0, 300)}`).toBeLessThan(500)
        expect(text).not.toMatch(/\bat .+\.(ts|js|tsx):\d+|SQLITE_|sqlite|syntax error|no such (table|column)/i)
      }),
      {numRuns: 300},
    )
    expect(ctx.logs.filter((line) => line.startsWith('error'))).toEqual([])
  })
})
