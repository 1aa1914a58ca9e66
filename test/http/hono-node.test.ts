import {IncomingMessage} from 'node:http'
import type {AddressInfo} from 'node:net'
import {serve} from '@hono/node-server'
import {Hono} from 'hono'
import {validator} from 'hono/validator'
import {describe, expect, it} from 'vitest'
import {z} from 'zod'
import {checkedForm, requestBodyText, requestHeader, urlEncodedForm} from '../../src/http/fast.js'
import {basicCredentialsOf, cacheBodyText, cacheForm, formCached, nodeIncoming} from '../../src/http/hono-node.js'

// What src/http/hono-node.ts relies on in Hono and @hono/node-server, beyond their documented API.
// When an upgrade changes either, these fail here rather than as slow or broken requests later.

const tooLarge = () => new Error('too large')

describe("Hono's body cache", () => {
  it("is what the form validator reads: a cached form wins over the request's own body", async () => {
    const app = new Hono()
    app.post(
      '/',
      async (c, next) => {
        cacheForm(c, new URLSearchParams('from=cache'))
        expect(formCached(c)).toBe(true)
        await next()
      },
      validator('form', (value) => value),
      (c) => c.json(c.req.valid('form')),
    )
    const res = await app.request('/', {method: 'POST', body: 'from=body', headers: {'content-type': 'application/x-www-form-urlencoded'}})
    expect(await res.json()).toEqual({from: 'cache'})
  })

  it('is what text(), json() and the JSON validator read once a body is cached as text', async () => {
    const app = new Hono()
    app.post(
      '/',
      async (c, next) => {
        expect(formCached(c)).toBe(false)
        cacheBodyText(c, '{"from":"cache"}')
        await next()
      },
      validator('json', (value) => value),
      async (c) => c.json({validated: c.req.valid('json'), text: await c.req.text(), json: await c.req.json()}),
    )
    const res = await app.request('/', {method: 'POST', body: '{"from":"body"}', headers: {'content-type': 'application/json'}})
    expect(await res.json()).toEqual({validated: {from: 'cache'}, text: '{"from":"cache"}', json: {from: 'cache'}})
  })
})

describe('@hono/node-server', () => {
  it("hands the app Node's IncomingMessage as c.env.incoming, whose body requestBodyText reads and Hono then sees", async () => {
    const app = new Hono()
    app.post('/', async (c) => {
      const incoming = nodeIncoming(c)
      const body = await requestBodyText(c, 1024, tooLarge)
      return c.json({
        node: incoming instanceof IncomingMessage,
        peer: incoming?.socket.remoteAddress,
        header: requestHeader(c, 'x-probe'),
        body,
        // Read from Node's stream, the body is left where Hono's readers find it.
        again: await c.req.json(),
      })
    })
    const server = serve({fetch: app.fetch, hostname: '127.0.0.1', port: 0})
    await new Promise<void>((resolve) => server.once('listening', () => resolve()))
    try {
      const {port} = server.address() as AddressInfo
      const res = await fetch(`http://127.0.0.1:${port}/`, {method: 'POST', body: '{"n":1}', headers: {'content-type': 'application/json', 'x-probe': 'yes'}})
      expect(await res.json()).toEqual({node: true, peer: '127.0.0.1', header: 'yes', body: '{"n":1}', again: {n: 1}})
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('gives in-process requests no Node request, so they take the standard path', async () => {
    const app = new Hono()
    app.post('/', async (c) => c.json({node: nodeIncoming(c) === undefined ? 'none' : 'some', body: await requestBodyText(c, 1024, tooLarge)}))
    const res = await app.request('/', {method: 'POST', body: 'plain'})
    expect(await res.json()).toEqual({node: 'none', body: 'plain'})
  })
})

describe("Hono's Basic parser", () => {
  it('reads the credentials from the one header it is handed, and refuses what is not Basic', () => {
    const header = `Basic ${Buffer.from('client:s3cret:with colon').toString('base64')}`
    expect(basicCredentialsOf(header)).toEqual({username: 'client', password: 's3cret:with colon'})
    expect(basicCredentialsOf(`basic ${Buffer.from('a:b').toString('base64')}`)).toEqual({username: 'a', password: 'b'})
    for (const refused of [undefined, '', 'Bearer abc', 'Basic %%%', `Basic ${Buffer.from('no colon').toString('base64')}`]) {
      expect(basicCredentialsOf(refused)).toBeUndefined()
    }
  })
})

describe('checkedForm', () => {
  // checkedForm builds a form as Hono's form validator does; if an upgrade builds it otherwise,
  // the two answers below part.
  const anything = z.record(z.string(), z.union([z.string(), z.array(z.string())]))
  const bodies = ['a=1&b=2', 'a=1&a=2&a=3', 'x[]=1&x[]=2&y=3', 'k=%E2%9C%93+ok', 'empty=&=nameless']
  it("builds the form as Hono's validator does, and leaves other media types to it", async () => {
    const app = new Hono()
    app.post(
      '/',
      urlEncodedForm(1024, tooLarge),
      async (c, next) => {
        c.set('checked' as never, (checkedForm(c, anything) ?? 'handed over') as never)
        await next()
      },
      validator('form', (value) => value),
      (c) => c.json({checked: c.get('checked' as never), hono: c.req.valid('form')}),
    )
    for (const body of bodies) {
      const res = await app.request('/', {method: 'POST', body, headers: {'content-type': 'application/x-www-form-urlencoded; charset=utf-8'}})
      const {checked, hono} = (await res.json()) as {checked: unknown; hono: unknown}
      expect(checked, body).toEqual(hono)
    }
    // A media type the route's own validators do not take as a form (a space before the ';').
    const res = await app.request('/', {method: 'POST', body: 'a=1', headers: {'content-type': 'application/x-www-form-urlencoded ;charset=utf-8'}})
    expect(((await res.json()) as {checked: unknown}).checked).toBe('handed over')
  })

  it('hands over a form its schema refuses', async () => {
    const app = new Hono()
    const one = z.object({token: z.string()})
    app.post('/', urlEncodedForm(1024, tooLarge), (c) => c.json({checked: checkedForm(c, one) ?? 'handed over'}))
    const post = async (body: string) =>
      ((await (await app.request('/', {method: 'POST', body, headers: {'content-type': 'application/x-www-form-urlencoded'}})).json()) as {checked: unknown}).checked
    expect(await post('token=t')).toEqual({token: 't'})
    expect(await post('token=t&token=u')).toBe('handed over')
    expect(await post('other=t')).toBe('handed over')
  })
})
