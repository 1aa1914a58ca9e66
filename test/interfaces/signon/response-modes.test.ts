import {createHash} from 'node:crypto'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import type {RegisteredClient} from '../../../src/registry/service.js'
import {form, freshApp, type TestContext} from '../../helpers/app.js'
import {clientBasic} from '../../helpers/http-basic.js'
import {authorizeParams, authorizeUrl, type CookieJar, exchange, ORIGIN, REDIRECT, setupClientAndMember, signIn} from './flow.js'

/*
 * Response modes: query (the default, a redirect) and form_post (OAuth 2.0 Form Post Response
 * Mode: a page whose form the browser posts to the redirect URI). express-openid-connect asks for
 * form_post by default.
 */

const ISSUER = 'http://localhost'

let ctx: TestContext
let client: RegisteredClient

beforeEach(async () => {
  ctx = await freshApp()
  client = (await setupClientAndMember(ctx)).client
})
afterEach(async () => ctx.store.close())

/** What a form_post page sends, as a browser would read it: the form's target, its fields, and the page's policy. */
async function formPost(res: Response): Promise<{action: string; fields: Record<string, string>; html: string; policy: string}> {
  expect(res.status).toBe(200)
  expect(res.headers.get('location')).toBeNull()
  expect(res.headers.get('content-type')).toMatch(/^text\/html/)
  expect(res.headers.get('cache-control')).toBe('no-store')
  const html = await res.text()
  const forms = [...html.matchAll(/<form method="post" action="([^"]*)">/g)]
  expect(forms).toHaveLength(1)
  const fields = Object.fromEntries([...html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)"\/?>/g)].map((m) => [m[1]!, m[2]!.replaceAll('&amp;', '&')]))
  return {action: forms[0]![1]!.replaceAll('&amp;', '&'), fields, html, policy: res.headers.get('content-security-policy') ?? ''}
}

/** Signs in on the authorize page and presses a button: the answer as the browser gets it. */
async function press(params: Record<string, string>, decision: 'allow' | 'deny'): Promise<{res: Response; jar: CookieJar}> {
  const {jar, csrf} = await signIn(ctx, params)
  const res = jar.take(await ctx.app.request('/oauth/authorize', form({...params, csrf_token: csrf, decision}, {...jar.header(), origin: ORIGIN})))
  return {res, jar}
}

const redeem = (code: string) => exchange(ctx, {grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: client.client_id, client_secret: client.client_secret})

describe('response_mode', () => {
  it('discovery names the two modes', async () => {
    const metadata = (await (await ctx.app.request('/.well-known/openid-configuration')).json()) as {response_modes_supported: string[]}
    expect(metadata.response_modes_supported).toEqual(['query', 'form_post'])
  })

  it('form_post: Allow answers a page that posts code, state and iss to the redirect URI by itself, and by a button without script', async () => {
    const {res, jar} = await press(authorizeParams(client.client_id, {response_mode: 'form_post', scope: 'openid profile'}), 'allow')
    const answer = await formPost(res)
    expect(answer.action).toBe(REDIRECT)
    expect(Object.keys(answer.fields).sort()).toEqual(['code', 'iss', 'state'])
    expect(answer.fields).toMatchObject({state: 'st-123', iss: ISSUER})
    expect(answer.html).toMatch(/<button[^>]*type="submit"[^>]*>\s*Continue\s*<\/button>/)
    // The policy runs exactly the page's one script, by its hash, and lets the form post to the client.
    const scripts = [...answer.html.matchAll(/<script>([^<]*)<\/script>/g)].map((m) => m[1]!)
    expect(scripts).toHaveLength(1)
    expect(scripts[0]).toContain('submit()')
    const hash = createHash('sha256').update(scripts[0]!).digest('base64')
    expect(answer.policy).toContain(`script-src 'sha256-${hash}'`)
    expect(answer.policy).not.toMatch(/script-src[^;]*unsafe-inline/)
    expect(answer.policy).toMatch(/form-action 'self' https:\/\/client\.example(;|$)/)
    expect(answer.policy).toContain("default-src 'none'")
    const token = await redeem(answer.fields.code!)
    expect(token.status).toBe(200)
    // Remembered consent answers at once, in the same mode.
    const again = await formPost(
      await ctx.app.request(authorizeUrl(authorizeParams(client.client_id, {response_mode: 'form_post', scope: 'openid profile'})), {headers: jar.header()}),
    )
    expect(again.fields.code).toMatch(/^[A-Za-z0-9_-]{43}$/)
  })

  it('form_post: Deny, a refused scope and prompt=none post the error with its state and iss', async () => {
    const denied = await formPost((await press(authorizeParams(client.client_id, {response_mode: 'form_post'}), 'deny')).res)
    expect(denied.action).toBe(REDIRECT)
    expect(denied.fields).toMatchObject({error: 'access_denied', state: 'st-123', iss: ISSUER})
    const badScope = await formPost(await ctx.app.request(authorizeUrl(authorizeParams(client.client_id, {response_mode: 'form_post', scope: 'profile everything'}))))
    expect(badScope.fields).toMatchObject({error: 'invalid_scope', error_description: 'unknown scope: everything', state: 'st-123', iss: ISSUER})
    const silent = await formPost(await ctx.app.request(authorizeUrl(authorizeParams(client.client_id, {response_mode: 'form_post', scope: 'openid', prompt: 'none'}))))
    expect(silent.fields).toMatchObject({error: 'login_required', state: 'st-123', iss: ISSUER})
  })

  it("keeps the redirect URI's own query in the form's target, and the answer's fields out of it", async () => {
    const withQuery = 'https://client.example/callback?tenant=a&x=1'
    await ctx.db
      .updateTable('clients')
      .set({redirect_uris: JSON.stringify([REDIRECT, withQuery]) as never})
      .where('id', '=', client.client_id)
      .execute()
    const answer = await formPost((await press(authorizeParams(client.client_id, {response_mode: 'form_post', redirect_uri: withQuery}), 'allow')).res)
    expect(answer.action).toBe(withQuery)
    expect(Object.keys(answer.fields).sort()).toEqual(['code', 'iss', 'state'])
  })

  it('query, asked for by name, is the redirect as before', async () => {
    const {res} = await press(authorizeParams(client.client_id, {response_mode: 'query'}), 'allow')
    expect(res.status).toBe(302)
    const location = new URL(res.headers.get('location')!)
    expect(location.origin + location.pathname).toBe(REDIRECT)
    expect(location.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(location.searchParams.get('iss')).toBe(ISSUER)
  })

  it.each(['fragment', 'jwt', 'query.jwt', 'form_post ', 'FORM_POST', ''])('refuses response_mode=%j on the redirect, in the query, with invalid_request', async (mode) => {
    const res = await ctx.app.request(authorizeUrl(authorizeParams(client.client_id, {response_mode: mode})))
    expect(res.status).toBe(302)
    const location = new URL(res.headers.get('location')!)
    expect(location.origin + location.pathname).toBe(REDIRECT)
    expect(location.hash).toBe('')
    expect(location.searchParams.get('error')).toBe('invalid_request')
    expect(location.searchParams.get('error_description')).toMatch(/response_mode/)
    expect(location.searchParams.get('state')).toBe('st-123')
    expect(location.searchParams.get('code')).toBeNull()
  })

  it('an unknown client or redirect URI stays an error page, whatever the mode asked', async () => {
    const res = await ctx.app.request(authorizeUrl(authorizeParams(client.client_id, {response_mode: 'form_post', redirect_uri: 'https://evil.example/cb'})))
    expect(res.status).toBe(400)
    const html = await res.text()
    expect(html).not.toContain('evil.example')
    expect(html).not.toContain('<script')
  })

  it('a pushed request carries its response_mode; a mode medpanel lacks is refused at the push', async () => {
    const pushedRes = await ctx.app.request(
      '/oauth/par',
      form(authorizeParams(client.client_id, {response_mode: 'form_post', state: 'pushed'}), {authorization: clientBasic(client)}),
    )
    expect(pushedRes.status).toBe(201)
    const {request_uri} = (await pushedRes.json()) as {request_uri: string}
    const answer = await formPost((await press({client_id: client.client_id, request_uri}, 'allow')).res)
    expect(answer.action).toBe(REDIRECT)
    expect(answer.fields).toMatchObject({state: 'pushed', iss: ISSUER})
    expect((await redeem(answer.fields.code!)).status).toBe(200)
    const refused = await ctx.app.request('/oauth/par', form(authorizeParams(client.client_id, {response_mode: 'fragment'}), {authorization: clientBasic(client)}))
    expect(refused.status).toBe(400)
    expect(await refused.json()).toMatchObject({error: 'invalid_request'})
  })
})
