import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {freshApp, type TestContext} from '../../helpers/app.js'
import type {RegisteredClient} from '../../../src/registry/service.js'
import {bearer, setupClientAndMember, tokenFor} from './flow.js'

const TOKEN_INFO = ['/user/oauth/token/info', '/oauth/token/info']
const MEMBER_INFO = ['/user/oauth/user/info', '/oauth/user/info']

describe('token info and member info', () => {
  let ctx: TestContext
  let client: RegisteredClient
  let token: string
  beforeEach(async () => {
    ctx = await freshApp()
    client = (await setupClientAndMember(ctx)).client
    token = await tokenFor(ctx, client)
  })
  afterEach(async () => ctx.store.close())

  it.each(TOKEN_INFO)('%s answers Doorkeeper-style token info, uncached', async (path) => {
    const res = await ctx.app.request(path, bearer(token))
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(await res.json()).toEqual({
      resource_owner_id: 1,
      scopes: ['profile'],
      expires_in_seconds: 3600,
      application: {uid: client.client_id},
      created_at: Math.floor(ctx.clock.now().getTime() / 1000),
    })
  })

  it('expires_in_seconds counts down and the token dies at its lifetime', async () => {
    ctx.clock.advance(600)
    const info = (await (await ctx.app.request(TOKEN_INFO[0]!, bearer(token))).json()) as {expires_in_seconds: number}
    expect(info.expires_in_seconds).toBe(3000)
    ctx.clock.advance(3000)
    const dead = await ctx.app.request(TOKEN_INFO[0]!, bearer(token))
    expect(dead.status).toBe(401)
    expect(await dead.json()).toEqual({error: 'invalid_request', error_description: 'The access token expired'})
  })

  it.each(MEMBER_INFO)("%s answers the member's name, country and specialty", async (path) => {
    const res = await ctx.app.request(path, bearer(token))
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({first_name: 'Ana', last_name: 'Ruiz', country_of_practice: 'US', primary_specialty: 'Oncology'})
  })

  it.each(TOKEN_INFO)('%s: unknown, missing or malformed tokens get 401 invalid_request with a Bearer challenge', async (path) => {
    for (const init of [bearer('nope'), {}, {headers: {authorization: 'Basic abc'}}, {headers: {authorization: `Bearer ${token} extra`}}]) {
      const res = await ctx.app.request(path, init)
      expect(res.status).toBe(401)
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="medpanel"/)
      expect(((await res.json()) as {error: string}).error).toBe('invalid_request')
    }
  })

  it.each(MEMBER_INFO)('%s: a bad token gets 401 with error=invalid_token in the header and the body', async (path) => {
    const res = await ctx.app.request(path, bearer('nope'))
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toMatch(/error="invalid_token", error_description="The access token is invalid"/)
    expect(await res.json()).toEqual({error: 'invalid_token', error_description: 'The access token is invalid'})
  })

  it('refuses a token sent anywhere but the Authorization header', async () => {
    for (const path of [...TOKEN_INFO, ...MEMBER_INFO]) {
      const res = await ctx.app.request(`${path}?access_token=${token}`)
      expect(res.status).toBe(401)
      expect(((await res.json()) as {error_description: string}).error_description).toMatch(/Authorization header/)
    }
  })

  it('answers 405 to other methods', async () => {
    const res = await ctx.app.request(TOKEN_INFO[0]!, {method: 'POST', headers: {authorization: `Bearer ${token}`}})
    expect(res.status).toBe(405)
  })
})
