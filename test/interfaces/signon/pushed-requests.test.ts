import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {type RegisteredClient, updateClient} from '../../../src/registry/service.js'
import {form, freshApp, type TestContext} from '../../helpers/app.js'
import {authorizeParams, authorizeUrl, CookieJar, decide, exchange, REDIRECT, setupClientAndMember, signIn} from './flow.js'
import {clientBasic} from '../../helpers/http-basic.js'
import {registerTestClient} from '../../helpers/clients.js'

/*
 * Pushed authorization requests (RFC 9126): the client pushes its parameters to /oauth/par with
 * its credentials, the browser carries only client_id and the one-time request_uri.
 */

let ctx: TestContext
let client: RegisteredClient

beforeEach(async () => {
  ctx = await freshApp()
  client = (await setupClientAndMember(ctx)).client
})
afterEach(async () => ctx.store.close())

const basic = (c: RegisteredClient) => clientBasic(c)

async function push(fields: Record<string, string>, who: RegisteredClient = client): Promise<Response> {
  return ctx.app.request('/oauth/par', form(fields, {authorization: basic(who)}))
}

async function pushed(extra: Record<string, string> = {}): Promise<string> {
  const res = await push(authorizeParams(client.client_id, extra))
  expect(res.status, await res.clone().text()).toBe(201)
  const body = (await res.json()) as {request_uri: string; expires_in: number}
  expect(body.expires_in).toBe(60)
  expect(body.request_uri).toMatch(/^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]{43}$/)
  return body.request_uri
}

describe('pushed authorization requests', () => {
  it('carries the pushed parameters to a code, with only client_id and request_uri in the browser', async () => {
    const requestUri = await pushed({state: 'pushed-state', scope: 'profile'})
    const params = {client_id: client.client_id, request_uri: requestUri}
    const {jar} = await signIn(ctx, params)
    // The consent page's form carries the request_uri, not the pushed parameters.
    const page = await (await ctx.app.request(authorizeUrl(params), {headers: jar.header()})).text()
    expect(page).toContain(`name="request_uri" value="${requestUri}"`)
    expect(page).not.toContain('pushed-state')
    const location = await decide(ctx, params)
    expect(location.origin + location.pathname).toBe(REDIRECT)
    expect(location.searchParams.get('state')).toBe('pushed-state')
    const code = location.searchParams.get('code')!
    const token = await exchange(ctx, {grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: client.client_id, client_secret: client.client_secret})
    expect(token.status).toBe(200)
  })

  it('ignores every other parameter beside the request_uri: the pushed ones are the request', async () => {
    const requestUri = await pushed({state: 'the-real-state'})
    const location = await decide(ctx, {client_id: client.client_id, request_uri: requestUri, redirect_uri: 'https://evil.example/cb', state: 'forged', scope: 'profile email'})
    expect(location.origin).toBe('https://client.example')
    expect(location.searchParams.get('state')).toBe('the-real-state')
  })

  it('answers a request_uri once: used again, it is refused on the page', async () => {
    const requestUri = await pushed()
    const params = {client_id: client.client_id, request_uri: requestUri}
    await decide(ctx, params)
    const again = await ctx.app.request(authorizeUrl(params))
    expect(again.status).toBe(400)
    expect(await again.text()).toContain('answered already')
  })

  it('a denial spends it too', async () => {
    const requestUri = await pushed()
    const params = {client_id: client.client_id, request_uri: requestUri}
    const location = await decide(ctx, params, 'deny')
    expect(location.searchParams.get('error')).toBe('access_denied')
    expect((await ctx.app.request(authorizeUrl(params))).status).toBe(400)
  })

  it('must be opened within a minute; once opened it lasts while the member signs in', async () => {
    const late = await pushed()
    ctx.clock.advance(61)
    const res = await ctx.app.request(authorizeUrl({client_id: client.client_id, request_uri: late}))
    expect(res.status).toBe(400)
    expect(await res.text()).toContain('expired before it was opened')
    const opened = await pushed()
    const params = {client_id: client.client_id, request_uri: opened}
    expect((await ctx.app.request(authorizeUrl(params))).status).toBe(200)
    ctx.clock.advance(300)
    expect((await decide(ctx, params)).searchParams.get('code')).toBeTruthy()
  })

  it('is refused for another client, or a request_uri this server never gave', async () => {
    const requestUri = await pushed()
    const other = await registerTestClient(ctx.store, {name: 'Other', redirect_uris: [REDIRECT]}, ctx.clock.now())
    expect((await ctx.app.request(authorizeUrl({client_id: other.client_id, request_uri: requestUri}))).status).toBe(400)
    const made = await ctx.app.request(authorizeUrl({client_id: client.client_id, request_uri: 'urn:ietf:params:oauth:request_uri:made-up'}))
    expect(made.status).toBe(400)
    expect(await made.text()).toContain('not a pushed authorization request of this client')
    // A request object by reference (not PAR) is refused to the client, as before.
    const byReference = await ctx.app.request(authorizeUrl(authorizeParams(client.client_id, {request_uri: 'https://client.example/request.jwt'})))
    expect(new URL(byReference.headers.get('location')!).searchParams.get('error')).toBe('request_uri_not_supported')
  })

  it('a prompt=login pushed request asks for a sign-in once, then goes on', async () => {
    const requestUri = await pushed({prompt: 'login', scope: 'openid', nonce: 'n-1'})
    const params = {client_id: client.client_id, request_uri: requestUri}
    const {res, jar} = await signIn(ctx, params)
    expect(res.status).toBe(303)
    const next = await ctx.app.request(res.headers.get('location')!, {headers: jar.header()})
    // The consent page (200 with Allow), not the sign-in form again.
    expect(next.status).toBe(200)
    expect(await next.text()).toContain('value="allow"')
  })

  it('refuses at the push what the authorize page would refuse, as JSON to the client', async () => {
    const badRedirect = await push(authorizeParams(client.client_id, {redirect_uri: 'https://evil.example/cb'}))
    expect(badRedirect.status).toBe(400)
    expect(await badRedirect.json()).toMatchObject({error: 'invalid_request'})
    const badScope = await push(authorizeParams(client.client_id, {scope: 'everything'}))
    expect(badScope.status).toBe(400)
    expect(await badScope.json()).toMatchObject({error: 'invalid_scope'})
    const nested = await push(authorizeParams(client.client_id, {request_uri: 'urn:ietf:params:oauth:request_uri:x'}))
    expect(nested.status).toBe(400)
    const anonymous = await ctx.app.request('/oauth/par', form(authorizeParams(client.client_id)))
    expect(anonymous.status).toBe(401)
    expect(await anonymous.json()).toMatchObject({error: 'invalid_client'})
    expect(await ctx.db.selectFrom('pushed_requests').select('id_hash').execute()).toEqual([])
  })

  it('a client registered to require it gets no code through the browser alone', async () => {
    await updateClient(ctx.store, client.client_id, {require_pushed_authorization_requests: true}, ctx.clock.now())
    const front = await new CookieJar().take(await ctx.app.request(authorizeUrl(authorizeParams(client.client_id))))
    expect(front.status).toBe(302)
    const location = new URL(front.headers.get('location')!)
    expect(location.searchParams.get('error')).toBe('invalid_request')
    expect(location.searchParams.get('error_description')).toMatch(/must push its authorization requests/)
    const requestUri = await pushed()
    expect((await decide(ctx, {client_id: client.client_id, request_uri: requestUri})).searchParams.get('code')).toBeTruthy()
  })

  it('discovery names the endpoint', async () => {
    const metadata = (await (await ctx.app.request('/.well-known/oauth-authorization-server')).json()) as Record<string, unknown>
    expect(metadata.pushed_authorization_request_endpoint).toBe('http://localhost/oauth/par')
    expect(metadata.require_pushed_authorization_requests).toBe(false)
  })
})
