import {createHash} from 'node:crypto'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {allow, checkAuthorizeRequest} from '../../../src/interfaces/signon/authorize.js'
import {updateMember, type RegisteredClient} from '../../../src/registry/service.js'
import {freshApp, type TestContext} from '../../helpers/app.js'
import {REDIRECT, authorizeParams, authorizeUrl, exchange, getCode, setupClientAndMember, signIn} from './flow.js'
import {registerTestClient} from '../../helpers/clients.js'

const verifier = `authorize-edge-${'q'.repeat(40)}`
const challenge = createHash('sha256').update(verifier).digest('base64url')

/**
 * The authorize request's edges where a silent bug would weaken sign-on: PKCE given by halves,
 * scope lists with repeats and spaces, a client without the sign-on grant, and prompt=none for a
 * client or a scope the member never allowed.
 */
describe('authorize request, at its edges', () => {
  let ctx: TestContext
  let client: RegisteredClient
  let memberId: number
  beforeEach(async () => {
    ctx = await freshApp()
    const setup = await setupClientAndMember(ctx)
    client = setup.client
    memberId = setup.member.user_id
  })
  afterEach(async () => ctx.store.close())

  /** The redirect back to the client for an authorize request that fails after the client is proven. */
  async function redirectedError(params: Record<string, string>, headers: Record<string, string> = {}): Promise<URLSearchParams> {
    const res = await ctx.app.request(authorizeUrl(params), {headers})
    expect(res.status).toBe(302)
    const location = new URL(res.headers.get('location')!)
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT)
    expect(location.searchParams.get('code')).toBeNull()
    return location.searchParams
  }

  async function tokenScope(code: string, c: RegisteredClient = client): Promise<string> {
    const res = await exchange(ctx, {grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: c.client_id, client_secret: c.client_secret})
    expect(res.status).toBe(200)
    return ((await res.json()) as {scope: string}).scope
  }

  it.each([
    ['a challenge without its method', {code_challenge: challenge}],
    ['the S256 method without a challenge', {code_challenge_method: 'S256'}],
    ['the S256 method with an empty challenge', {code_challenge: '', code_challenge_method: 'S256'}],
  ])('refuses PKCE given by halves, %s, rather than issue a code without it', async (_, pkce) => {
    const error = await redirectedError(authorizeParams(client.client_id, pkce))
    expect(error.get('error')).toBe('invalid_request')
    expect(error.get('error_description')).toMatch(/code_challenge/)
    expect(error.get('state')).toBe('st-123')
  })

  it('binds the code to the challenge given with S256: no verifier, no token', async () => {
    const code = await getCode(ctx, client.client_id, {code_challenge: challenge, code_challenge_method: 'S256'})
    const fields = {grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: client.client_id, client_secret: client.client_secret}
    expect((await exchange(ctx, fields)).status).toBe(400)
    expect((await exchange(ctx, {...fields, code_verifier: verifier})).status).toBe(200)
  })

  it('reads the scope list by spaces: repeats count once, extra spaces are no scope, none asked means profile', async () => {
    expect(await tokenScope(await getCode(ctx, client.client_id, {scope: 'profile profile'}))).toBe('profile')
    expect(await tokenScope(await getCode(ctx, client.client_id, {scope: ' profile  '}))).toBe('profile')
    expect(await tokenScope(await getCode(ctx, client.client_id))).toBe('profile')
  })

  it('names the unknown scopes, and only those, in the error', async () => {
    const error = await redirectedError(authorizeParams(client.client_id, {scope: 'profile admin pulses'}))
    expect(error.get('error')).toBe('invalid_scope')
    expect(error.get('error_description')).toBe('unknown scope: admin pulses')
  })

  it('sends a client without the sign-on grant back with unauthorized_client, its state and a reason', async () => {
    const pulses = await registerTestClient(ctx.store, {name: 'Pulse Co', redirect_uris: [REDIRECT], grants: ['pulses']}, ctx.clock.now())
    const error = await redirectedError(authorizeParams(pulses.client_id))
    expect(error.get('error')).toBe('unauthorized_client')
    expect(error.get('error_description')).toBe('this client may not use the authorization code flow')
    expect(error.get('state')).toBe('st-123')
  })

  it('prompt=none gives no code to a client the member never allowed, whoever else they allowed', async () => {
    const other = await registerTestClient(ctx.store, {name: 'Other', redirect_uris: [REDIRECT]}, ctx.clock.now())
    const oidc = (clientId: string, extra: Record<string, string> = {}) => authorizeParams(clientId, {scope: 'openid profile', nonce: 'n-1', ...extra})
    // The member allowed the first client, and holds a live token with it.
    await tokenScope(await getCode(ctx, client.client_id, {scope: 'openid profile', nonce: 'n-1'}))
    const {jar} = await signIn(ctx, oidc(client.client_id))
    const error = await redirectedError(oidc(other.client_id, {prompt: 'none'}), jar.header())
    expect(error.get('error')).toBe('consent_required')
    // The client that was allowed gets its code without a page.
    const silent = await ctx.app.request(authorizeUrl(oidc(client.client_id, {prompt: 'none'})), {headers: jar.header()})
    expect(new URL(silent.headers.get('location')!).searchParams.get('code')).toBeTruthy()
  })

  it('prompt=none gives no code for a scope beyond what the member allowed', async () => {
    await tokenScope(await getCode(ctx, client.client_id, {scope: 'openid profile', nonce: 'n-1'}))
    const params = authorizeParams(client.client_id, {scope: 'openid profile email', nonce: 'n-2'})
    const {jar} = await signIn(ctx, params)
    const error = await redirectedError({...params, prompt: 'none'}, jar.header())
    expect(error.get('error')).toBe('consent_required')
  })

  it('allow refuses a member deactivated after the consent page was shown, and issues no code', async () => {
    const checked = await checkAuthorizeRequest(ctx.db, {client_id: client.client_id, redirect_uri: REDIRECT, response_type: 'code'}, ctx.clock.now())
    await updateMember(ctx.db, memberId, {active: false}, ctx.clock.now())
    await expect(allow(ctx.db, checked, memberId, ctx.clock.now())).rejects.toMatchObject({code: 'access_denied', status: 403, message: 'this membership is not active'})
    expect(await ctx.db.selectFrom('authorization_codes').select('code_hash').execute()).toEqual([])
  })
})
