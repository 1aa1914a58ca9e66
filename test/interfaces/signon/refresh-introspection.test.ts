import {afterEach, beforeEach, expect, it} from 'vitest'
import type {RegisteredClient} from '../../../src/registry/service.js'
import {form, freshApp, type TestContext} from '../../helpers/app.js'
import {exchange, getCode, REDIRECT, setupClientAndMember} from './flow.js'

/* Introspection answers what docs/signon.md says of refresh tokens: the refreshed access token like any other, the refresh token inactive. */

let ctx: TestContext
let client: RegisteredClient

beforeEach(async () => {
  ctx = await freshApp()
  client = (await setupClientAndMember(ctx, {token_ttl: null})).client
})
afterEach(async () => ctx.store.close())

it('describes the refreshed access token, and answers the refresh token itself as inactive', async () => {
  const secret = {client_id: client.client_id, client_secret: client.client_secret}
  const code = await getCode(ctx, client.client_id, {scope: 'openid offline_access'})
  const first = (await (await exchange(ctx, {grant_type: 'authorization_code', code, redirect_uri: REDIRECT, ...secret})).json()) as {refresh_token: string}
  const refreshed = (await (await exchange(ctx, {grant_type: 'refresh_token', refresh_token: first.refresh_token, ...secret})).json()) as {
    access_token: string
    refresh_token: string
  }
  const describe = async (token: string) => (await ctx.app.request('/oauth/introspect', form({token, ...secret}))).json()
  expect(await describe(refreshed.access_token)).toMatchObject({active: true, scope: 'openid offline_access', exp: expect.any(Number)})
  expect(await describe(refreshed.refresh_token)).toEqual({active: false})
})
