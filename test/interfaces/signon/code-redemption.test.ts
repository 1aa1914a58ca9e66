import {createHash} from 'node:crypto'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {updateClient, type RegisteredClient} from '../../../src/registry/service.js'
import {freshApp, type TestContext} from '../../helpers/app.js'
import {REDIRECT, bearer, exchange, getCode, setupClientAndMember} from './flow.js'
import {registerTestClient} from '../../helpers/clients.js'

const verifier = `edge-${'k'.repeat(40)}-verifier`
const challenge = createHash('sha256').update(verifier).digest('base64url')

/**
 * The edges of the authorization_code grant a silent bug would open: the last instant a code is
 * good, a client that lost its sign-on grant after the code was issued, what the token answer
 * says about its own lifetime, and the error each refusal names.
 */
describe('authorization code exchange, at its edges', () => {
  let ctx: TestContext
  let client: RegisteredClient
  const grant = (code: string, extra: Record<string, string> = {}) => ({
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT,
    client_id: client.client_id,
    client_secret: client.client_secret,
    ...extra,
  })
  beforeEach(async () => {
    ctx = await freshApp()
    client = (await setupClientAndMember(ctx)).client
  })
  afterEach(async () => ctx.store.close())

  async function refusal(res: Response, status: number): Promise<{error: string; error_description: string}> {
    expect(res.status).toBe(status)
    return (await res.json()) as {error: string; error_description: string}
  }

  it('a code is good until the last millisecond of its ten minutes, and dead at exactly ten minutes', async () => {
    const early = await getCode(ctx, client.client_id)
    ctx.clock.advance(600 - 0.001)
    expect((await exchange(ctx, grant(early))).status).toBe(200)

    const late = await getCode(ctx, client.client_id)
    ctx.clock.advance(600)
    const body = await refusal(await exchange(ctx, grant(late)), 400)
    expect(body).toEqual({error: 'invalid_grant', error_description: 'authorization code has expired'})
  })

  it('the token answer says when it was made and how long it lives, and it lives that long', async () => {
    ctx.clock.advance(0.75)
    const made = ctx.clock.now().getTime()
    const res = await exchange(ctx, grant(await getCode(ctx, client.client_id)))
    const body = (await res.json()) as {access_token: string; expires_in: number; created_at: number}
    expect(body.created_at).toBe(Math.floor(made / 1000))
    expect(body.expires_in).toBe(3600)
    ctx.clock.advance(3599)
    expect((await ctx.app.request('/user/oauth/token/info', bearer(body.access_token))).status).toBe(200)
    ctx.clock.advance(1)
    expect((await ctx.app.request('/user/oauth/token/info', bearer(body.access_token))).status).toBe(401)
  })

  it('a client that lost its sign-on grant since the code was issued cannot exchange it', async () => {
    const code = await getCode(ctx, client.client_id)
    await updateClient(ctx.store, client.client_id, {grants: ['balance']}, ctx.clock.now())
    const body = await refusal(await exchange(ctx, grant(code)), 400)
    expect(body).toEqual({error: 'unauthorized_client', error_description: 'this client may not use the authorization_code grant'})
    // Given the grant back, the code still works: the refusal did not consume it.
    await updateClient(ctx.store, client.client_id, {grants: ['signon']}, ctx.clock.now())
    expect((await exchange(ctx, grant(code))).status).toBe(200)
  })

  it('names each refusal of a code precisely, so a client developer can tell them apart', async () => {
    const other = await registerTestClient(ctx.store, {name: 'Other', redirect_uris: [REDIRECT]}, ctx.clock.now())
    const reason = async (fields: Record<string, string>) => (await refusal(await exchange(ctx, fields), 400)).error_description

    expect(await reason(grant('no-such-code'))).toBe('authorization code is invalid or was issued to another client')
    const code = await getCode(ctx, client.client_id)
    expect(await reason({...grant(code), client_id: other.client_id, client_secret: other.client_secret})).toBe('authorization code is invalid or was issued to another client')
    expect(await reason(grant(code, {redirect_uri: `${REDIRECT}x`}))).toBe('redirect_uri does not match the one used to obtain the code')
    expect(await reason(grant(code, {code_verifier: verifier}))).toBe('code_verifier sent for a code that was issued without a code_challenge')

    const superseded = await getCode(ctx, client.client_id)
    await getCode(ctx, client.client_id)
    expect(await reason(grant(superseded))).toBe('authorization code was replaced by a newer one or revoked')

    const pkce = await getCode(ctx, client.client_id, {code_challenge: challenge, code_challenge_method: 'S256'})
    expect(await reason(grant(pkce))).toBe('code_verifier is required for this code')
    expect(await reason(grant(pkce, {code_verifier: `${verifier}2`}))).toBe('code_verifier does not match the code_challenge')
    expect((await exchange(ctx, grant(pkce, {code_verifier: verifier}))).status).toBe(200)
    expect(await reason(grant(pkce, {code_verifier: verifier}))).toBe('authorization code has already been used; tokens issued from it are now revoked')
  })

  it('a malformed code_verifier is invalid_request before the client is even checked', async () => {
    const code = await getCode(ctx, client.client_id, {code_challenge: challenge, code_challenge_method: 'S256'})
    const body = await refusal(await exchange(ctx, grant(code, {code_verifier: 'too-short', client_secret: 'wrong'})), 400)
    expect(body).toEqual({error: 'invalid_request', error_description: 'code_verifier must be 43 to 128 unreserved characters'})
    // The bad request did not use the code up.
    expect((await exchange(ctx, grant(code, {code_verifier: verifier}))).status).toBe(200)
  })

  it("a replayed code revokes only the tokens it issued, not the member's other tokens with the client", async () => {
    const first = await getCode(ctx, client.client_id)
    const firstToken = ((await (await exchange(ctx, grant(first))).json()) as {access_token: string}).access_token
    const second = await getCode(ctx, client.client_id)
    const secondToken = ((await (await exchange(ctx, grant(second))).json()) as {access_token: string}).access_token
    expect((await exchange(ctx, grant(first))).status).toBe(400)
    expect((await ctx.app.request('/user/oauth/token/info', bearer(firstToken))).status).toBe(401)
    expect((await ctx.app.request('/user/oauth/token/info', bearer(secondToken))).status).toBe(200)
  })
})
