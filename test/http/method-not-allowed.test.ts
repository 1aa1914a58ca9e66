import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {registerClient} from '../../src/registry/service.js'
import {freshApp, type TestContext} from '../helpers/app.js'
import {clientBasic} from '../helpers/http-basic.js'

interface Document {
  info: {description: string}
  paths: Record<string, Record<string, unknown>>
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete']

let ctx: TestContext
let doc: Document
/** The credentials C (Basic) and D (a client's Bearer token) check before they look at the method. */
let credentials: {basic: string; bearer: string}
beforeAll(async () => {
  ctx = await freshApp()
  doc = (await (await ctx.app.request('/openapi.json')).json()) as Document
  const client = {name: 'All', url: 'https://all.example', logo_url: 'https://all.example/l.png', redirect_uris: ['https://all.example/cb']}
  const registered = await registerClient(ctx.store, {...client, grants: ['signon', 'balance', 'pulses', 'conversations']}, ctx.clock.now())
  const basic = clientBasic(registered)
  const issued = await ctx.app.request('/oauth/token', {
    method: 'POST',
    headers: {authorization: basic, 'content-type': 'application/x-www-form-urlencoded'},
    body: 'grant_type=client_credentials&scope=pulses',
  })
  credentials = {basic, bearer: `Bearer ${((await issued.json()) as {access_token: string}).access_token}`}
})
afterAll(() => ctx.store.close())

describe('methods a path does not serve', () => {
  it('are documented once, for every path', () => {
    expect(doc.info.description).toMatch(/405 Method Not Allowed, with an `Allow` header/)
  })

  it('answer 405 with an Allow header naming exactly the methods the document lists, on every path', async () => {
    const paths = Object.entries(doc.paths).filter(([path]) => !path.startsWith('/partner'))
    expect(paths.length).toBeGreaterThan(20)
    const failures: string[] = []
    for (const [path, operations] of paths) {
      const listed = METHODS.filter((method) => method in operations).map((method) => method.toUpperCase())
      const expected = listed.includes('GET') ? [...listed, 'HEAD'] : listed
      const url = path.replace(/\{[^}]+\}/g, 'x')
      for (const method of METHODS.map((m) => m.toUpperCase()).filter((m) => !listed.includes(m))) {
        let res = await ctx.app.request(url, {method})
        // Interfaces that authenticate every request say so first: with credentials, the 405.
        if (res.status === 401) res = await ctx.app.request(url, {method, headers: {authorization: url.startsWith('/balance') ? credentials.basic : credentials.bearer}})
        if (res.status !== 405) {
          failures.push(`${method} ${path} ${res.status}`)
          continue
        }
        expect(res.headers.get('allow')?.split(', ').sort(), `Allow of ${method} ${path}`).toEqual(expected.sort())
      }
    }
    expect(failures).toEqual([])
  })
})
