import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {seedPulses} from '../../../src/interfaces/pulse/seed.js'
import {updateClient, type RegisteredClient} from '../../../src/registry/service.js'
import {form, freshApp, type TestContext} from '../../helpers/app.js'
import {REDIRECT, bearer, setupClientAndMember, tokenFor as memberTokenFor} from '../signon/flow.js'
import {registerTestClient} from '../../helpers/clients.js'

/**
 * Operations whose whole purpose is to answer a member's own token (interface A). Every other
 * bearer operation in the document serves a client acting for itself and must refuse member tokens.
 */
const MEMBER_OPERATIONS = new Set(['/oauth/token/info', '/oauth/user/info', '/user/oauth/token/info', '/user/oauth/user/info', '/oauth/userinfo'])

interface OpenApiDocument {
  paths: Record<string, Record<string, {security?: Record<string, string[]>[]; parameters?: {name: string; in: string}[]}>>
}

describe('bearer routes read only what the token was granted', () => {
  let ctx: TestContext
  let owner: RegisteredClient
  let ownerPulse: string

  beforeEach(async () => {
    ctx = await freshApp()
    // One client that both signs members on and owns pulses: the case where a member token leaked.
    owner = (await setupClientAndMember(ctx, {grants: ['signon', 'pulses']})).client
    ownerPulse = (await seedPulses(ctx.db, {clientId: owner.client_id, count: 1, respondents: 4, seed: 3}, ctx.clock.now())).created[0]!.project_id
  })
  afterEach(async () => ctx.store.close())

  async function clientToken(client: {client_id: string; client_secret: string}): Promise<string> {
    const res = await ctx.app.request('/oauth/token', form({grant_type: 'client_credentials', client_id: client.client_id, client_secret: client.client_secret}))
    expect(res.status).toBe(200)
    return ((await res.json()) as {access_token: string}).access_token
  }

  async function bearerOperations(): Promise<{path: string; method: string}[]> {
    const doc = (await (await ctx.app.request('/openapi.json')).json()) as OpenApiDocument
    const found: {path: string; method: string}[] = []
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        if (operation.security?.some((scheme) => 'bearer' in scheme)) found.push({path, method})
      }
    }
    return found
  }

  /** A concrete URL for an operation: the owner's pulse wherever the path names a project. */
  const concrete = (path: string) => path.replace('{projectId}', ownerPulse)

  it('a member who consented to "profile" cannot read the client\'s pulse exports with that token', async () => {
    const memberToken = await memberTokenFor(ctx, owner)
    for (const path of [`/projects/${ownerPulse}/export`, '/clients/projectsInfo', '/clients/info']) {
      const res = await ctx.app.request(path, bearer(memberToken))
      expect(res.status, path).toBe(403)
      expect(res.headers.get('www-authenticate'), path).toMatch(/^Bearer .*error="insufficient_scope".*scope="pulses"/)
      const body = (await res.json()) as {error: string}
      expect(body.error).toBe('insufficient_scope')
      expect(JSON.stringify(body)).not.toContain(ownerPulse)
    }
    // The same member token still does what the member agreed to.
    expect((await ctx.app.request('/user/oauth/user/info', bearer(memberToken))).status).toBe(200)
  })

  it("every client bearer operation in /openapi.json refuses a member token, another client's token and a token without the grant", async () => {
    const operations = (await bearerOperations()).filter((op) => !MEMBER_OPERATIONS.has(op.path))
    // The walk must cover interface D at least; a document without it would make this test vacuous.
    expect(operations.map((op) => op.path).sort()).toEqual(expect.arrayContaining(['/clients/info', '/clients/projectsInfo', '/projects/{projectId}/export']))

    const rivalSecret = 'rival-client-secret-long-enough'
    const rival = await registerTestClient(ctx.store, {name: 'Rival', grants: ['pulses']}, ctx.clock.now(), {
      id: 'rival',
      secret: rivalSecret,
    })
    const lapsedSecret = 'lapsed-client-secret-long-enough'
    await registerTestClient(ctx.store, {name: 'Lapsed', grants: ['pulses'], redirect_uris: [REDIRECT]}, ctx.clock.now(), {id: 'lapsed', secret: lapsedSecret})
    const lapsedToken = await clientToken({client_id: 'lapsed', client_secret: lapsedSecret})
    await updateClient(ctx.store, 'lapsed', {grants: ['signon']}, ctx.clock.now())

    const callers = {
      'member token of the owning client': await memberTokenFor(ctx, owner),
      "another client's token": await clientToken({client_id: rival.client_id, client_secret: rivalSecret}),
      'client token without the pulses grant': lapsedToken,
    }
    for (const {path, method} of operations) {
      const url = concrete(path)
      // Positive control: the owner's own client token is accepted, so a refusal below means something.
      const own = await ctx.app.request(url, {method: method.toUpperCase(), ...bearer(await clientToken(owner))})
      expect(own.status, `${method} ${path} with the owner's client token`).toBe(200)
      expect(await own.text()).toContain(ownerPulse)

      for (const [who, token] of Object.entries(callers)) {
        const res = await ctx.app.request(url, {method: method.toUpperCase(), ...bearer(token)})
        const text = await res.text()
        // Refused outright, or (for a caller's own listing) answered without a trace of the owner's data.
        expect(res.status === 200 ? 'answered' : 'refused', `${method} ${path} as ${who}: ${res.status}`).toBe(
          who === "another client's token" && !path.includes('{') ? 'answered' : 'refused',
        )
        if (res.status === 200) {
          expect(text, `${method} ${path} as ${who}`).not.toContain(ownerPulse)
        } else {
          expect([401, 403, 404], `${method} ${path} as ${who}`).toContain(res.status)
          // A refusal is an OAuth error body and nothing of the pulse (a 404 may echo the asked-for id).
          expect(Object.keys(JSON.parse(text) as object).sort(), `${method} ${path} as ${who}`).toEqual(['error', 'error_description'])
        }
      }
    }
  })
})
