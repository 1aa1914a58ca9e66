import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import type {RegisteredClient} from '../../../src/registry/service.js'
import {form, freshApp, type TestContext} from '../../helpers/app.js'
import {registerTestClient} from '../../helpers/clients.js'
import {exchange, getCode, REDIRECT, setupClientAndMember} from './flow.js'

/*
 * Introspection of refresh tokens, as node-oidc-provider and Keycloak answer it: a live one of
 * the calling client is active, with token_type refresh_token and the fields an access token has;
 * a spent, revoked, expired or other client's one is exactly {"active": false}.
 */

const DAY = 86400

let ctx: TestContext
let client: RegisteredClient
let memberId: number

beforeEach(async () => {
  ctx = await freshApp()
  const setup = await setupClientAndMember(ctx, {token_ttl: null})
  client = setup.client
  memberId = setup.member.user_id
})
afterEach(async () => ctx.store.close())

const secretOf = (c: RegisteredClient) => ({client_id: c.client_id, client_secret: c.client_secret})

async function offlineTokens(): Promise<{access_token: string; refresh_token: string}> {
  const code = await getCode(ctx, client.client_id, {scope: 'openid offline_access'})
  const res = await exchange(ctx, {grant_type: 'authorization_code', code, redirect_uri: REDIRECT, ...secretOf(client)})
  expect(res.status).toBe(200)
  return (await res.json()) as {access_token: string; refresh_token: string}
}

async function introspect(token: string, extra: Record<string, string> = {}, who: RegisteredClient = client): Promise<Record<string, unknown>> {
  const res = await ctx.app.request('/oauth/introspect', form({token, ...secretOf(who), ...extra}))
  expect(res.status).toBe(200)
  return (await res.json()) as Record<string, unknown>
}

describe('introspecting refresh tokens', () => {
  it('describes a live refresh token like an access token, as token_type refresh_token, whatever the hint', async () => {
    const issuedAt = Math.floor(ctx.clock.now().getTime() / 1000)
    const {refresh_token} = await offlineTokens()
    const expected = {
      active: true,
      token_type: 'refresh_token',
      scope: 'openid offline_access',
      client_id: client.client_id,
      sub: String(memberId),
      iat: issuedAt,
      // Unused for 14 days, a refresh token dies.
      exp: issuedAt + 14 * DAY,
    }
    expect(await introspect(refresh_token)).toEqual(expected)
    for (const hint of ['refresh_token', 'access_token', 'something_else']) expect(await introspect(refresh_token, {token_type_hint: hint}), hint).toEqual(expected)
  })

  it('a hint of refresh_token does not hide an access token', async () => {
    const {access_token} = await offlineTokens()
    expect(await introspect(access_token, {token_type_hint: 'refresh_token'})).toMatchObject({active: true, token_type: 'bearer', scope: 'openid offline_access'})
  })

  it('answers {"active": false} once it is spent by a refresh, and for its successor once revoked', async () => {
    const {refresh_token} = await offlineTokens()
    const refreshed = await exchange(ctx, {grant_type: 'refresh_token', refresh_token, ...secretOf(client)})
    expect(refreshed.status).toBe(200)
    const next = ((await refreshed.json()) as {access_token: string; refresh_token: string}).refresh_token
    expect(await introspect(refresh_token)).toEqual({active: false})
    expect(await introspect(next)).toMatchObject({active: true, token_type: 'refresh_token'})
    expect((await ctx.app.request('/oauth/revoke', form({token: next, ...secretOf(client)}))).status).toBe(200)
    expect(await introspect(next)).toEqual({active: false})
    expect(await introspect(next, {token_type_hint: 'refresh_token'})).toEqual({active: false})
  })

  it('answers {"active": false} once it expired, and to another client', async () => {
    const {refresh_token} = await offlineTokens()
    const other = await registerTestClient(ctx.store, {name: 'Other Co', url: 'https://other.example', redirect_uris: ['https://other.example/cb']}, ctx.clock.now())
    expect(await introspect(refresh_token, {token_type_hint: 'refresh_token'}, other)).toEqual({active: false})
    ctx.clock.advance(14 * DAY)
    expect(await introspect(refresh_token)).toEqual({active: false})
  })

  it('answers {"active": false} once the member is deactivated', async () => {
    const {refresh_token} = await offlineTokens()
    await ctx.db.updateTable('members').set({active: 0}).where('id', '=', memberId).execute()
    expect(await introspect(refresh_token)).toEqual({active: false})
  })
})
