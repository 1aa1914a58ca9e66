import {afterEach, beforeEach, expect, it} from 'vitest'
import type {RegisteredClient} from '../../../src/registry/service.js'
import {form, freshApp, type TestContext} from '../../helpers/app.js'
import {authorizeParams, authorizeUrl, CookieJar, csrfOf, ORIGIN, PASSWORD, setupClientAndMember} from './flow.js'

/* The consent page's form token changes at sign-in: one seen or planted before it opens nothing after. */

let ctx: TestContext
let client: RegisteredClient

beforeEach(async () => {
  ctx = await freshApp()
  client = (await setupClientAndMember(ctx)).client
})
afterEach(async () => ctx.store.close())

it('rotates the CSRF cookie at sign-in, and the form token from before it is refused', async () => {
  const params = authorizeParams(client.client_id)
  const jar = new CookieJar()
  const before = csrfOf(await jar.take(await ctx.app.request(authorizeUrl(params))).text())
  const res = jar.take(
    await ctx.app.request('/oauth/session', form({...params, csrf_token: before, email: 'ana@clinic.example', password: PASSWORD}, {...jar.header(), origin: ORIGIN})),
  )
  expect(res.status).toBe(303)
  expect(res.headers.getSetCookie().some((line) => line.startsWith('mp_csrf='))).toBe(true)
  const page = jar.take(await ctx.app.request(authorizeUrl(params), {headers: jar.header()}))
  const after = csrfOf(await page.text())
  expect(after).not.toBe(before)
  const stale = await ctx.app.request('/oauth/authorize', form({...params, csrf_token: before, decision: 'allow'}, {...jar.header(), origin: ORIGIN}))
  expect(stale.status).toBe(403)
  const fresh = await ctx.app.request('/oauth/authorize', form({...params, csrf_token: after, decision: 'allow'}, {...jar.header(), origin: ORIGIN}))
  expect(fresh.status).toBe(302)
})
