import {decodeJwt} from 'jose'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {revokeConsent, updateMember} from '../../../src/registry/service.js'
import type {RegisteredClient} from '../../../src/registry/service.js'
import {form, freshApp, type TestContext} from '../../helpers/app.js'
import {bearer, exchange, getCode, REDIRECT, setupClientAndMember} from './flow.js'

/*
 * Refresh tokens (RFC 6749 §6, RFC 9700 §4.14): offline_access on an OpenID request brings one,
 * every refresh rotates it, a spent one presented again ends its whole family, and the family dies
 * with revocation, the member's consent, deactivation, a password change, 14 idle days and 30
 * days in all. Times move on the manual clock.
 */

type Tokens = {access_token: string; refresh_token?: string; expires_in?: number | null; scope: string; id_token?: string}
type Refusal = {error: string; error_description: string}

let ctx: TestContext
let client: RegisteredClient
let memberId: number

beforeEach(async () => {
  ctx = await freshApp()
  // No --token-ttl: tokens without a refresh token would never expire.
  const setup = await setupClientAndMember(ctx, {token_ttl: null})
  client = setup.client
  memberId = setup.member.user_id
})
afterEach(async () => ctx.store.close())

const secret = () => ({client_id: client.client_id, client_secret: client.client_secret})
const DAY = 86400

async function signOn(scope = 'openid profile offline_access'): Promise<Tokens> {
  const code = await getCode(ctx, client.client_id, {scope})
  const res = await exchange(ctx, {grant_type: 'authorization_code', code, redirect_uri: REDIRECT, ...secret()})
  expect(res.status).toBe(200)
  return (await res.json()) as Tokens
}

async function refresh(token: string, extra: Record<string, string> = {}): Promise<{status: number; body: Tokens & Refusal}> {
  const res = await exchange(ctx, {grant_type: 'refresh_token', refresh_token: token, ...secret(), ...extra})
  return {status: res.status, body: (await res.json()) as Tokens & Refusal}
}

const tokenInfo = async (token: string) => (await ctx.app.request('/oauth/token/info', bearer(token))).status

describe('offline_access', () => {
  it('brings a refresh token, and an access token that expires in an hour by default', async () => {
    const tokens = await signOn()
    expect(tokens.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(tokens.expires_in).toBe(3600)
    expect(tokens.scope).toBe('openid profile offline_access')
    ctx.clock.advance(3601)
    expect(await tokenInfo(tokens.access_token)).toBe(401)
  })

  it("follows the client's agreed lifetime when it has one", async () => {
    await ctx.db.updateTable('clients').set({token_ttl: 600}).execute()
    expect((await signOn()).expires_in).toBe(600)
  })

  it('without it, nothing changes: no refresh token, and a token that never expires', async () => {
    const tokens = await signOn('openid profile')
    expect(tokens).not.toHaveProperty('refresh_token')
    expect(tokens).not.toHaveProperty('expires_in')
    ctx.clock.advance(365 * DAY)
    expect(await tokenInfo(tokens.access_token)).toBe(200)
  })

  it('is refused on a plain OAuth request, as any unknown scope always was', async () => {
    const res = await ctx.app.request(
      `/oauth/authorize?${new URLSearchParams({client_id: client.client_id, redirect_uri: REDIRECT, response_type: 'code', scope: 'profile offline_access'})}`,
    )
    expect(res.status).toBe(302)
    expect(new URL(res.headers.get('location')!).searchParams.get('error')).toBe('invalid_scope')
  })
})

describe('a refresh', () => {
  it('answers a new access token, a new refresh token and a new ID token for the same member', async () => {
    const first = await signOn()
    ctx.clock.advance(60)
    const {status, body} = await refresh(first.refresh_token!)
    expect(status).toBe(200)
    expect(body.access_token).not.toBe(first.access_token)
    expect(body.refresh_token).not.toBe(first.refresh_token)
    expect(body.expires_in).toBe(3600)
    expect(body.scope).toBe('openid profile offline_access')
    const claims = decodeJwt(body.id_token!)
    expect(claims.sub).toBe(String(memberId))
    expect(claims).not.toHaveProperty('nonce')
    expect(claims.auth_time).toBe(decodeJwt(first.id_token!).auth_time)
    // The new access token is a token like any other.
    expect(await tokenInfo(body.access_token)).toBe(200)
    const introspected = await ctx.app.request('/oauth/introspect', form({token: body.access_token, ...secret()}))
    expect(await introspected.json()).toMatchObject({active: true, sub: String(memberId), scope: 'openid profile offline_access'})
    // The old access token lives on until it expires: a refresh does not revoke it.
    expect(await tokenInfo(first.access_token)).toBe(200)
  })

  it('may ask for fewer scopes, never more', async () => {
    const first = await signOn()
    const narrower = await refresh(first.refresh_token!, {scope: 'openid'})
    expect(narrower.status).toBe(200)
    expect(narrower.body.scope).toBe('openid')
    // The next refresh token still holds the whole grant.
    const again = await refresh(narrower.body.refresh_token!)
    expect(again.body.scope).toBe('openid profile offline_access')
    const wider = await refresh(again.body.refresh_token!, {scope: 'openid email'})
    expect(wider.status).toBe(400)
    expect(wider.body.error).toBe('invalid_scope')
  })

  it('a refused scope spends nothing: the same refresh token then refreshes, and the grant lives on', async () => {
    const first = await signOn()
    const bogus = await refresh(first.refresh_token!, {scope: 'openid bogus'})
    expect(bogus.status).toBe(400)
    expect(bogus.body).toEqual({error: 'invalid_scope', error_description: 'scope goes beyond what the member allowed: bogus'})
    expect((await refresh(first.refresh_token!, {scope: 'openid email'})).body.error).toBe('invalid_scope')
    // The client's retry with the same token is no replay: a new pair, and the first access token still works.
    const retry = await refresh(first.refresh_token!)
    expect(retry.status).toBe(200)
    expect(retry.body.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(retry.body.refresh_token).not.toBe(first.refresh_token)
    expect(retry.body.scope).toBe('openid profile offline_access')
    expect(await tokenInfo(first.access_token)).toBe(200)
    expect(await tokenInfo(retry.body.access_token)).toBe(200)
    // Spent by that refresh, the first one is a replay now, as always.
    expect((await refresh(first.refresh_token!)).body.error).toBe('invalid_grant')
  })

  it('refuses an unknown refresh token, and a request without one', async () => {
    const first = await signOn()
    const res = await exchange(ctx, {grant_type: 'refresh_token', ...secret()})
    expect(res.status).toBe(400)
    expect(((await res.json()) as Refusal).error_description).toBe('refresh_token is required')
    const unknown = await refresh(first.refresh_token!.endsWith('A') ? `${first.refresh_token!.slice(0, -1)}B` : `${first.refresh_token!.slice(0, -1)}A`)
    expect(unknown.body.error).toBe('invalid_grant')
  })
})

describe('the family of a refresh token', () => {
  it('ends when a spent refresh token is presented again: every access and refresh token of it', async () => {
    const first = await signOn()
    const second = (await refresh(first.refresh_token!)).body
    const third = (await refresh(second.refresh_token!)).body
    const replay = await refresh(first.refresh_token!)
    expect(replay.status).toBe(400)
    expect(replay.body).toEqual({error: 'invalid_grant', error_description: 'refresh token was already used; every token of its authorization is now revoked'})
    for (const token of [first.access_token, second.access_token, third.access_token]) expect(await tokenInfo(token)).toBe(401)
    expect((await refresh(third.refresh_token!)).body.error).toBe('invalid_grant')
  })

  it('leaves the families of other sign-ins alone', async () => {
    const one = await signOn()
    const two = await signOn()
    await refresh(one.refresh_token!)
    await refresh(one.refresh_token!)
    expect(await tokenInfo(two.access_token)).toBe(200)
    expect((await refresh(two.refresh_token!)).status).toBe(200)
  })

  it('ends when the refresh token is revoked, with or without a hint', async () => {
    for (const hint of [undefined, 'refresh_token', 'access_token']) {
      const tokens = await signOn()
      const res = await ctx.app.request('/oauth/revoke', form({token: tokens.refresh_token!, ...secret(), ...(hint ? {token_type_hint: hint} : {})}))
      expect(res.status).toBe(200)
      expect(await tokenInfo(tokens.access_token)).toBe(401)
      expect((await refresh(tokens.refresh_token!)).body.error).toBe('invalid_grant')
    }
  })

  it('keeps the refresh token when only its access token is revoked', async () => {
    const tokens = await signOn()
    await ctx.app.request('/oauth/revoke', form({token: tokens.access_token, ...secret()}))
    expect(await tokenInfo(tokens.access_token)).toBe(401)
    expect((await refresh(tokens.refresh_token!)).status).toBe(200)
  })

  it('dies with the consent the member takes back', async () => {
    const tokens = await signOn()
    await revokeConsent(ctx.db, memberId, client.client_id, ctx.clock.now())
    expect((await refresh(tokens.refresh_token!)).body.error).toBe('invalid_grant')
  })

  for (const [what, change] of [
    ['a deactivation', {active: false}],
    ['a password change', {password: 'a new password 123'}],
  ] as const) {
    it(`dies with ${what}`, async () => {
      const tokens = await signOn()
      await updateMember(ctx.db, memberId, change, ctx.clock.now())
      const res = await refresh(tokens.refresh_token!)
      expect(res.status).toBe(400)
      expect(res.body.error).toBe('invalid_grant')
    })
  }

  it('dies after 14 days unused', async () => {
    const tokens = await signOn()
    ctx.clock.advance(14 * DAY - 1)
    const kept = await refresh(tokens.refresh_token!)
    expect(kept.status).toBe(200)
    ctx.clock.advance(14 * DAY)
    const idle = await refresh(kept.body.refresh_token!)
    expect(idle.body).toEqual({error: 'invalid_grant', error_description: 'refresh token has expired'})
  })

  it('ends 30 days after the member allowed it, however often it was refreshed', async () => {
    let token = (await signOn()).refresh_token!
    for (let day = 10; day < 30; day += 10) {
      ctx.clock.advance(10 * DAY)
      const res = await refresh(token)
      expect(res.status, `day ${day}`).toBe(200)
      token = res.body.refresh_token!
    }
    ctx.clock.advance(10 * DAY)
    expect((await refresh(token)).body.error_description).toBe('refresh token has expired')
  })

  it('is stored hashed: the token itself is nowhere in the store', async () => {
    const tokens = await signOn()
    const rows = await ctx.db.selectFrom('refresh_tokens').selectAll().execute()
    expect(rows).toHaveLength(1)
    expect(JSON.stringify(rows)).not.toContain(tokens.refresh_token)
  })
})
