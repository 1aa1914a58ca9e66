import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {freshApp, type TestContext} from '../../helpers/app.js'
import {revokeConsent, updateClient, updateMember, type RegisteredClient} from '../../../src/registry/service.js'
import {bearer, setupClientAndMember, tokenFor} from './flow.js'
import {registerTestClient} from '../../helpers/clients.js'

/**
 * Every row of the spec's access-token life table, through the same service calls the operator
 * commands make. Each kills the token for token info and member info alike.
 */
describe('token death', () => {
  let ctx: TestContext
  let client: RegisteredClient
  let token: string
  beforeEach(async () => {
    ctx = await freshApp()
    client = (await setupClientAndMember(ctx)).client
    token = await tokenFor(ctx, client)
    // Served once before each trigger, so a remembered lookup must not outlive the change.
    expect((await ctx.app.request('/user/oauth/token/info', bearer(token))).status).toBe(200)
  })
  afterEach(async () => ctx.store.close())

  async function expectDead(reason: RegExp) {
    const info = await ctx.app.request('/user/oauth/token/info', bearer(token))
    expect(info.status).toBe(401)
    expect(((await info.json()) as {error_description: string}).error_description).toMatch(reason)
    const member = await ctx.app.request('/user/oauth/user/info', bearer(token))
    expect(member.status).toBe(401)
    expect(((await member.json()) as {error: string}).error).toBe('invalid_token')
  }

  it('the member changes password', async () => {
    const result = await updateMember(ctx.db, 1, {password: 'another long password'}, ctx.clock.now())
    expect(result.revoked_tokens).toBe(1)
    await expectDead(/revoked/)
  })

  it('the member is marked inactive (and reactivation does not revive the token)', async () => {
    await updateMember(ctx.db, 1, {active: false}, ctx.clock.now())
    await expectDead(/revoked/)
    await updateMember(ctx.db, 1, {active: true}, ctx.clock.now())
    await expectDead(/revoked/)
  })

  it('the client account expires', async () => {
    const result = await updateClient(ctx.store, client.client_id, {expire: true}, ctx.clock.now())
    expect(result.revoked_tokens).toBe(1)
    await expectDead(/revoked/)
  })

  it("the client's token lifetime is altered", async () => {
    const result = await updateClient(ctx.store, client.client_id, {token_ttl: 7200}, ctx.clock.now())
    expect(result.revoked_tokens).toBe(1)
    await expectDead(/revoked/)
    // New tokens carry the new lifetime.
    token = await tokenFor(ctx, client)
    const info = (await (await ctx.app.request('/user/oauth/token/info', bearer(token))).json()) as {expires_in_seconds: number}
    expect(info.expires_in_seconds).toBe(7200)
  })

  it('setting the same lifetime again is not an alteration', async () => {
    const result = await updateClient(ctx.store, client.client_id, {token_ttl: 3600}, ctx.clock.now())
    expect(result.revoked_tokens).toBe(0)
    expect((await ctx.app.request('/user/oauth/token/info', bearer(token))).status).toBe(200)
  })

  it("the member revokes the client's access, and only that client's", async () => {
    const other = await registerTestClient(ctx.store, {name: 'Other', redirect_uris: ['https://client.example/callback']}, ctx.clock.now())
    const otherToken = await tokenFor(ctx, other)
    const result = await revokeConsent(ctx.db, 1, client.client_id, ctx.clock.now())
    expect(result.revoked_tokens).toBe(1)
    await expectDead(/revoked/)
    expect((await ctx.app.request('/user/oauth/token/info', bearer(otherToken))).status).toBe(200)
  })

  it('the token lifetime runs out', async () => {
    ctx.clock.advance(3600)
    await expectDead(/expired/)
  })
})
