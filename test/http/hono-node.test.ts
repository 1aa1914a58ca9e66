import {IncomingMessage} from 'node:http'
import type {AddressInfo} from 'node:net'
import {serve} from '@hono/node-server'
import {Hono} from 'hono'
import {validator} from 'hono/validator'
import {describe, expect, it} from 'vitest'
import {requestBodyText, requestHeader} from '../../src/http/fast.js'
import {cacheBodyText, cacheForm, formCached, nodeIncoming} from '../../src/http/hono-node.js'

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
