import {afterAll, beforeAll, describe, expect, it, vi} from 'vitest'
import type {GrantFlow} from '../../src/interfaces/signon/flows/index.js'
import {freshApp, form, type TestContext} from '../helpers/app.js'
import {basicAuth} from '../helpers/http-basic.js'
import {bearer, exchange, setupClientAndMember} from '../interfaces/signon/flow.js'
import type {RegisteredClient} from '../../src/registry/service.js'

/*
 * docs/architecture.md's recipe for adding a grant type to the token endpoint, followed in a test:
 * a throwaway grant is one module exporting a GrantFlow (step 1, here in this file) and its name
 * in the list of flows/index.ts (step 2, here by mocking that list). Nothing else changes, and
 * the endpoint must take it, discovery list it, the metrics count its tokens under its name,
 * and the shipped grants work as before.
 */

const ECHO_GRANT = vi.hoisted(() => 'urn:example:params:oauth:grant-type:echo')

/**
 * Step 1: the grant. It hands the authenticated client a pulses token when the form asks for that
 * scope. (Made in vi.hoisted, and reaching its imports on call, because the mock below is hoisted
 * above this file's imports.)
 */
const {echoGrant, seenFields} = vi.hoisted(() => {
  /** The form fields each exchange was handed. */
  const seen: string[][] = []
  const grant: GrantFlow<'scope'> = {
    grantType: ECHO_GRANT,
    parameters: ['scope'],
    async exchange({db, form: fields, authenticate, dpopJkt, now}) {
      seen.push(Object.keys(fields))
      const {AppError} = await import('../../src/errors.js')
      const {mintToken} = await import('../../src/interfaces/signon/tokens.js')
      if (fields.scope !== 'pulses') throw new AppError('invalid_scope', 'the echo grant gives only the pulses scope')
      return mintToken(db, await authenticate(), null, 'pulses', null, now, {dpopJkt})
    },
  }
  return {echoGrant: grant, seenFields: seen}
})

// Step 2: its name in the list (flows/index.ts), the one line the recipe adds.
vi.mock('../../src/interfaces/signon/flows/index.js', async (importOriginal) => {
  const shipped = await importOriginal<typeof import('../../src/interfaces/signon/flows/index.js')>()
  return {...shipped, GRANTS: [...shipped.GRANTS, echoGrant]}
})

const issued = async (ctx: TestContext, grantType: string): Promise<number> => {
  const text = await (await ctx.app.request('/metrics')).text()
  const line = text.split('\n').find((l) => l.startsWith(`medpanel_signon_tokens_issued_total{grant_type="${grantType}"}`))
  return line === undefined ? Number.NaN : Number(line.split(' ').at(-1))
}

describe('the recipe for adding a grant type to the token endpoint', () => {
  let ctx: TestContext
  let client: RegisteredClient

  beforeAll(async () => {
    ctx = await freshApp()
    client = (await setupClientAndMember(ctx, {grants: ['signon', 'pulses']})).client
  })
  afterAll(async () => {
    await ctx.store.close()
  })

  it('is listed by discovery beside the shipped grants', async () => {
    const metadata = (await (await ctx.app.request('/.well-known/openid-configuration')).json()) as {grant_types_supported: string[]}
    expect(metadata.grant_types_supported).toEqual(['authorization_code', 'refresh_token', 'client_credentials', ECHO_GRANT])
  })

  it('answers a token for its grant_type, counted under its name, which introspection and the bearer routes take', async () => {
    expect(await issued(ctx, ECHO_GRANT)).toBe(0)
    const res = await exchange(ctx, {grant_type: ECHO_GRANT, scope: 'pulses'}, {authorization: basicAuth(client.client_id, client.client_secret)})
    expect(res.status).toBe(200)
    const body = (await res.json()) as {access_token: string; token_type: string; scope: string}
    expect(body).toMatchObject({token_type: 'bearer', scope: 'pulses'})
    expect(await issued(ctx, ECHO_GRANT)).toBe(1)
    const info = await ctx.app.request('/oauth/introspect', form({token: body.access_token}, {authorization: basicAuth(client.client_id, client.client_secret)}))
    expect(await info.json()).toMatchObject({active: true, client_id: client.client_id, scope: 'pulses'})
    expect((await ctx.app.request('/clients/info', bearer(body.access_token))).status).toBe(200)
  })

  it("refuses with the grant's own error, and with invalid_client for a wrong secret, counting nothing", async () => {
    const refused = await exchange(ctx, {grant_type: ECHO_GRANT, scope: 'openid'}, {authorization: basicAuth(client.client_id, client.client_secret)})
    expect(refused.status).toBe(400)
    expect(await refused.json()).toMatchObject({error: 'invalid_scope'})
    const wrong = await exchange(ctx, {grant_type: ECHO_GRANT, scope: 'pulses'}, {authorization: basicAuth(client.client_id, 'not-the-secret')})
    expect(wrong.status).toBe(401)
    expect(await wrong.json()).toMatchObject({error: 'invalid_client'})
    expect(await issued(ctx, ECHO_GRANT)).toBe(1)
  })

  it('hands the grant the form fields it declared and no other', async () => {
    seenFields.length = 0
    const extra = {grant_type: ECHO_GRANT, scope: 'pulses', code: 'not-its-field', resource: 'https://api.example/', client_id: client.client_id}
    expect((await exchange(ctx, extra, {authorization: basicAuth(client.client_id, client.client_secret)})).status).toBe(200)
    expect(seenFields).toEqual([['scope']])
  })

  it('leaves the shipped grants as they were', async () => {
    const before = await issued(ctx, 'client_credentials')
    const res = await exchange(ctx, {grant_type: 'client_credentials'}, {authorization: basicAuth(client.client_id, client.client_secret)})
    expect(res.status).toBe(200)
    expect(await issued(ctx, 'client_credentials')).toBe(before + 1)
    const unknown = await exchange(ctx, {grant_type: 'urn:example:unknown'}, {authorization: basicAuth(client.client_id, client.client_secret)})
    expect(await unknown.json()).toMatchObject({error: 'unsupported_grant_type'})
  })
})
