import {XMLParser} from 'fast-xml-parser'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {dataAnswer, summaryAnswer} from '../../../src/interfaces/conversations/answer-schema.js'
import {importPosts} from '../../../src/interfaces/conversations/import.js'
import {freshApp, type TestContext} from '../../helpers/app.js'
import {CORPUS} from './fixtures.js'
import {clientWithKey, JSON_TYPE, query, XML_TYPE} from './helpers.js'

/*
 * /openapi.json describes interface E's 200 answers in both formats, so that generated clients
 * get real types; and what it describes is what the routes send.
 */

interface Schema {
  $ref?: string
  type?: string | string[]
  properties?: Record<string, Schema>
  required?: string[]
  items?: Schema
  xml?: {name?: string; wrapped?: boolean}
}
interface Document {
  paths: Record<string, {get: {responses: Record<string, {content?: Record<string, {schema?: Schema}>}>}}>
  components: {schemas: Record<string, Schema>}
}

const WINDOW = {start: '2025-01-01T00:00:00Z', end: '2025-12-31T23:59:59Z'}
const METHODS = {summary: summaryAnswer, data: dataAnswer} as const

let ctx: TestContext
let apiKey: string
let doc: Document

beforeAll(async () => {
  ctx = await freshApp()
  apiKey = (await clientWithKey(ctx, {data_calls: 50})).key.api_key
  await importPosts(ctx.db, {conversations: CORPUS})
  doc = (await (await ctx.app.request('/openapi.json')).json()) as Document
})
afterAll(() => ctx.store.close())

async function call(method: string, terms: string[], accept: string): Promise<string> {
  const res = await ctx.app.request(`/conversations/${method}?${query(terms, WINDOW.start, WINDOW.end)}`, {headers: {Accept: accept, 'X-Service-Conversation-API-Key': apiKey}})
  expect(res.status).toBe(200)
  return res.text()
}

const resolve = (schema: Schema): Schema => (schema.$ref ? doc.components.schemas[schema.$ref.replace('#/components/schemas/', '')]! : schema)

function documented(method: string, type: string): Schema {
  const schema = doc.paths[`/conversations/${method}`]?.get.responses['200']?.content?.[type]?.schema
  expect(schema, `${method} ${type}`).toBeDefined()
  return resolve(schema!)
}

// Calls whose answers between them hold every kind of value: iConsults solved and not, posts
// with and without comments, several matched terms, and no match at all.
const SEARCHES = [['chest pain', 'metformin'], ['Pain'], ['no such word anywhere']]

describe('the 200 answers of interface E in /openapi.json', () => {
  it.each(Object.keys(METHODS))('%s: documents a JSON and an XML schema, neither empty', (method) => {
    for (const type of [JSON_TYPE, XML_TYPE]) {
      const schema = documented(method, type)
      expect(schema.type).toBe('object')
      expect(Object.keys(schema.properties ?? {})).toEqual(
        type === JSON_TYPE
          ? ['id', 'data_calls_remaining', 'query', 'summary', ...(method === 'data' ? ['conversations'] : [])]
          : ['id', 'data-calls-remaining', 'query', 'summary', ...(method === 'data' ? ['conversations'] : [])],
      )
    }
    expect(documented(method, XML_TYPE).xml?.name).toBe('call')
  })

  it.each(Object.entries(METHODS))('%s: a real JSON answer is valid under the schema the document is made from, with nothing undocumented', async (method, schema) => {
    for (const terms of SEARCHES) {
      const body = JSON.parse(await call(method, terms, JSON_TYPE)) as unknown
      const parsed = schema.safeParse(body)
      expect(parsed.error).toBeUndefined()
      // zod drops keys it does not know: equal means every field of the answer is documented.
      expect(parsed.data).toEqual(body)
    }
  })

  it('the answers the schemas are checked against include what the schemas must allow', async () => {
    const data = JSON.parse(await call('data', SEARCHES[0]!, JSON_TYPE)) as {conversations: {post: {solved_at: string | null}}[]}
    expect(data.conversations.map((c) => c.post.solved_at)).toEqual(['2025-03-02T11:00:00Z', null])
    expect(JSON.parse(await call('data', SEARCHES[2]!, JSON_TYPE))).toMatchObject({conversations: []})
  })

  it.each(Object.keys(METHODS))('%s: a real XML answer has exactly the elements the XML schema names, with text of the documented types', async (method) => {
    const schema = documented(method, XML_TYPE)
    for (const terms of SEARCHES) {
      const parsed = parser.parse(await call(method, terms, XML_TYPE)) as Record<string, unknown>
      expect(Object.keys(parsed)).toEqual([schema.xml!.name])
      const problems: string[] = []
      checkXml(schema, parsed[schema.xml!.name!], schema.xml!.name!, problems)
      expect(problems).toEqual([])
    }
  })

  it('the XML check finds an element the schema does not name, and one it requires that is missing', () => {
    const schema = documented('summary', XML_TYPE)
    const problems: string[] = []
    checkXml(
      schema,
      {id: 'x', 'data-calls-remaining': 'many', extra: '1', query: {start: '2025-01-01T00:00:00Z', end: '2025-01-02T00:00:00Z', 'query-terms': ''}},
      'call',
      problems,
    )
    expect(problems).toEqual(['call/summary: missing', 'call/data-calls-remaining: "many" is not integer text', 'call/extra: not in the schema'])
  })
})

const parser = new XMLParser({parseTagValue: false, ignoreDeclaration: true, cdataPropName: '#cdata', trimValues: false})

const TEXT: Record<string, RegExp> = {integer: /^-?\d+$/, number: /^-?\d+(\.\d+)?$/, boolean: /^(true|false)$/, string: /^/}

/**
 * Walks an XML answer (as fast-xml-parser reads it) along an OpenAPI schema with `xml` names:
 * objects are elements holding their properties' elements, wrapped arrays a wrapper element
 * holding one `items.xml.name` element per entry, anything else element text of its type.
 */
function checkXml(schema: Schema, node: unknown, path: string, problems: string[]): void {
  const resolved = resolve(schema)
  const elementName = (name: string, property: Schema) => resolve(property).xml?.name ?? name
  if (resolved.type === 'array') {
    if (!resolved.xml?.wrapped) problems.push(`${path}: a list the schema does not wrap`)
    if (node === '') return // an empty list is an empty wrapper element
    const item = resolved.items!
    for (const [name, value] of Object.entries(node as Record<string, unknown>)) {
      if (name !== elementName(name, item)) problems.push(`${path}/${name}: not in the schema`)
      else for (const entry of [value].flat()) checkXml(item, entry, `${path}/${name}`, problems)
    }
    return
  }
  if (resolved.type === 'object') {
    if (typeof node !== 'object' || node === null) return void problems.push(`${path}: text where the schema has elements`)
    const byElement = new Map(Object.entries(resolved.properties ?? {}).map(([name, property]) => [elementName(name, property), property]))
    for (const name of resolved.required ?? []) {
      const element = elementName(name, resolved.properties![name]!)
      if (!(element in node)) problems.push(`${path}/${element}: missing`)
    }
    for (const [name, value] of Object.entries(node)) {
      const property = byElement.get(name)
      if (!property) problems.push(`${path}/${name}: not in the schema`)
      else if (Array.isArray(value)) problems.push(`${path}/${name}: repeated, where the schema has one`)
      else checkXml(property, value, `${path}/${name}`, problems)
    }
    return
  }
  const cdata = typeof node === 'object' && node !== null && '#cdata' in node ? (node as {'#cdata': unknown})['#cdata'] : undefined
  const text = cdata === undefined ? node : [cdata].flat().join('')
  const type = String(resolved.type)
  if (typeof text !== 'string') problems.push(`${path}: elements where the schema has ${type} text`)
  else if (!(TEXT[type] ?? /^/).test(text)) problems.push(`${path}: ${JSON.stringify(text)} is not ${type} text`)
}
