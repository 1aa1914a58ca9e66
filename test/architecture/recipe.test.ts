import {createRoute, OpenAPIHono, z} from '@hono/zod-openapi'
import type {Kysely, Migration} from 'kysely'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {createApp, SERVED_INTERFACES} from '../../src/app.js'
import type {RouteDeps, ServedInterface} from '../../src/deps.js'
import {errorShape, renderMessage} from '../../src/http/error-shape.js'
import {methodNotAllowed} from '../../src/http/method-not-allowed.js'
import {schemaHook} from '../../src/http/validation.js'
import {ManualClock} from '../../src/lib/clock.js'
import {composeMigrations, SERVICE_SCHEMA} from '../../src/schema.js'
import {openStore, type Store} from '../../src/store/db.js'

/*
 * docs/architecture.md's recipe for adding an interface, followed in a test: a throwaway interface
 * ("widgets") with its own table and migration, composed with the service's schema as src/schema.ts
 * composes the real ones, and its routes described and handed to the app as src/app.ts mounts the
 * real ones. It must be served beside the others: its route, its 405, its place in /openapi.json
 * and in the access log, and every existing interface still answering.
 */

interface WidgetTables {
  widgets: {id: number; name: string}
}

const widgetsMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('widgets')
      .addColumn('id', 'integer', (column) => column.primaryKey())
      .addColumn('name', 'text', (column) => column.notNull())
      .execute()
    await db.insertInto('widgets').values({id: 7, name: 'sprocket'}).execute()
  },
}

const widgetRoute = createRoute({
  method: 'get',
  path: '/widgets/{id}',
  request: {params: z.object({id: z.coerce.number().int().positive()})},
  responses: {
    200: {description: 'The widget', content: {'application/json': {schema: z.object({id: z.number(), name: z.string()})}}},
    404: {description: 'No such widget', content: {'application/json': {schema: z.object({message: z.string()})}}},
  },
})

const widgetsInterface: ServedInterface = {
  label: 'W',
  title: 'widgets (W)',
  prefixes: ['/widgets'],
  routes(deps: RouteDeps) {
    const db = deps.db as unknown as Kysely<WidgetTables>
    const app = new OpenAPIHono({defaultHook: schemaHook()})
    app.use('/widgets/*', errorShape(renderMessage))
    app.openapi(widgetRoute, async (c) => {
      const widget = await db.selectFrom('widgets').selectAll().where('id', '=', c.req.valid('param').id).executeTakeFirst()
      if (!widget) return c.json({message: 'no such widget'}, 404)
      return c.json(widget, 200)
    })
    app.all('/widgets/:id', methodNotAllowed('GET'))
    return app
  },
}

describe('the recipe for adding an interface', () => {
  let store: Store
  let app: ReturnType<typeof createApp>
  const logs: string[] = []

  beforeAll(async () => {
    const migrations = composeMigrations(SERVICE_SCHEMA.migrations, {'2099010100_widgets': widgetsMigration})
    store = await openStore({file: ':memory:'}, {...SERVICE_SCHEMA, migrations})
    app = createApp({store, clock: new ManualClock(), log: (line) => logs.push(line), logFormat: 'json', metrics: false}, [...SERVED_INTERFACES, widgetsInterface])
  })

  afterAll(async () => {
    await store?.close()
  })

  it('serves the new interface from its own table, its refusals in its own shape', async () => {
    const found = await app.request('/widgets/7')
    expect(found.status).toBe(200)
    expect(await found.json()).toEqual({id: 7, name: 'sprocket'})

    const missing = await app.request('/widgets/8')
    expect(missing.status).toBe(404)
    expect(await missing.json()).toEqual({message: 'no such widget'})

    const wrongMethod = await app.request('/widgets/7', {method: 'DELETE'})
    expect(wrongMethod.status).toBe(405)
    expect(wrongMethod.headers.get('allow')).toBe('GET, HEAD')
    expect(await wrongMethod.json()).toEqual({message: 'DELETE is not supported here; use GET'})

    const invalid = await app.request('/widgets/none')
    expect(invalid.status).toBe(400)
  })

  it('counts its requests as its own in the access log', async () => {
    logs.length = 0
    await app.request('/widgets/7')
    await app.request('/widgets/no/such/path')
    const interfaces = logs.map((line) => (JSON.parse(line) as {interface: string | null}).interface)
    expect(interfaces).toEqual(['W', 'W'])
  })

  it('publishes it in the OpenAPI document, named in its description', async () => {
    const doc = (await (await app.request('/openapi.json')).json()) as {info: {description: string}; paths: Record<string, unknown>}
    expect(Object.keys(doc.paths)).toContain('/widgets/{id}')
    expect(doc.info.description.split('\n')[0]).toBe('Sign-on (A, OAuth 2 and OpenID Connect), balances (C), pulse export (D), conversation search (E) and widgets (W).')
  })

  it('leaves every existing interface answering as before', async () => {
    expect((await app.request('/healthz')).status).toBe(200)
    expect((await app.request('/balance/countries')).status).toBe(401)
    expect((await app.request('/user/oauth/token/info')).status).toBe(401)
    expect((await app.request('/clients/info')).status).toBe(401)
    expect((await app.request('/conversations/summary')).status).toBe(401)
    expect((await app.request('/.well-known/openid-configuration')).status).toBe(200)
  })

  it('leaves the service as shipped untouched: the same description, no widgets', async () => {
    const shipped = createApp({store, clock: new ManualClock(), log: () => {}, metrics: false})
    const doc = (await (await shipped.request('/openapi.json')).json()) as {info: {description: string}; paths: Record<string, unknown>}
    expect(doc.info.description.split('\n')[0]).toBe('Sign-on (A, OAuth 2 and OpenID Connect), balances (C), pulse export (D) and conversation search (E).')
    expect(Object.keys(doc.paths)).not.toContain('/widgets/{id}')
    expect((await shipped.request('/widgets/7')).status).toBe(404)
  })
})
