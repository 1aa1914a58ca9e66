import {Hono} from 'hono'
import {describe, expect, it} from 'vitest'
import type {HttpEnv} from '../../src/http/env.js'
import {jsonResponse, responseHeader, textResponse} from '../../src/http/fast.js'

// The one way to answer JSON and to set a response header (src/http/fast.ts): a header set
// before the answer reaches it however it is made, the answer's own headers win in any case, and
// a header set after the answer is made lands on it.

function app(withId: boolean) {
  const hono = new Hono<HttpEnv>()
  hono.use(async (c, next) => {
    if (withId) c.set('requestId', 'req-1')
    responseHeader(c, 'Vary', 'Origin')
    responseHeader(c, 'Cache-Control', 'public, max-age=60')
    await next()
    responseHeader(c, 'X-After', 'yes')
  })
  hono.get('/json', (c) => jsonResponse(c, {ok: true}, 200))
  hono.get('/own', (c) => jsonResponse(c, {ok: true}, 201, {'cache-control': 'no-store'}))
  hono.get('/text', (c) => textResponse(c, 'plain', 200, {'content-type': 'text/plain'}))
  hono.get('/html', (c) => c.html('<p>page</p>'))
  return hono
}

describe('jsonResponse and responseHeader', () => {
  it('carry the headers set before the answer, the request id, and one set after it', async () => {
    const res = await app(true).request('/json')
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ok: true})
    expect(res.headers.get('content-type')).toBe('application/json')
    expect(res.headers.get('vary')).toBe('Origin')
    expect(res.headers.get('cache-control')).toBe('public, max-age=60')
    expect(res.headers.get('x-request-id')).toBe('req-1')
    expect(res.headers.get('x-after')).toBe('yes')
  })

  it("let the answer's own header win over one set before, whatever its case, without joining the two", async () => {
    const res = await app(true).request('/own')
    expect(res.status).toBe(201)
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(res.headers.get('vary')).toBe('Origin')
  })

  it('carry the headers set before into text answers and into answers Hono makes', async () => {
    for (const path of ['/text', '/html']) {
      const res = await app(true).request(path)
      expect(res.headers.get('vary'), path).toBe('Origin')
      expect(res.headers.get('x-after'), path).toBe('yes')
    }
  })

  it('send no request id where the app gives none, rather than the word "undefined"', async () => {
    const res = await app(false).request('/json')
    expect(res.headers.has('x-request-id')).toBe(false)
    expect(res.headers.get('vary')).toBe('Origin')
  })
})
