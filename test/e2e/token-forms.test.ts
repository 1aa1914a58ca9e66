import {request} from 'node:http'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cliJson, type RunningCli, startCli, tempDir} from '../helpers/cli.js'
import {basicAuth} from '../helpers/http-basic.js'

/*
 * The token endpoints' forms on a real server: on Node, serve reads an URL-encoded body straight
 * from the socket and parses it itself (http/fast.ts, urlEncodedForm), where app.request goes
 * through Fetch. What a client sees must not differ: the same fields, the same decoding, the same
 * limit on the body with and without a Content-Length.
 */
describe('the token endpoints read their forms on a real server', () => {
  let server: RunningCli
  let token: string
  const db = join(tempDir(), 'forms.db')
  const basic = basicAuth('demo-client', 'demo-client-secret')
  const post = (path: string, body: string, headers: Record<string, string> = {authorization: basic}) =>
    fetch(`${server.url}${path}`, {method: 'POST', headers: {'content-type': 'application/x-www-form-urlencoded', ...headers}, body})

  beforeAll(async () => {
    server = await startCli(['serve', '--demo', '--no-worker', '--port', '0', '--db', db])
    token = cliJson<{access_token: string}>(['issue-token', '--db', db, '--member', '1', '--client', 'demo-client']).access_token
  })
  afterAll(() => server?.stop('SIGTERM'))

  it('introspects with Basic credentials or with them in the form, percent- and plus-encoded alike', async () => {
    const byHeader = (await (await post('/oauth/introspect', `token=${token}`)).json()) as Record<string, unknown>
    expect(byHeader).toMatchObject({active: true, client_id: 'demo-client', token_type: 'bearer', sub: '1'})
    const inForm = await post('/oauth/introspect', `token=${encodeURIComponent(token)}&client_id=demo-client&client_secret=demo%2Dclient%2Dsecret`, {})
    expect(await inForm.json()).toEqual(byHeader)
    expect(inForm.headers.get('cache-control')).toBe('no-store')
    expect(inForm.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    // A plus is a space in a form: this token does not exist.
    expect(await (await post('/oauth/introspect', `token=${token}+`)).json()).toEqual({active: false})
    // The same field twice is no token at all.
    const twice = await post('/oauth/introspect', `token=${token}&token=${token}`)
    expect(twice.status).toBe(400)
    expect(((await twice.json()) as {error: string}).error).toBe('invalid_request')
    // The media type in any case and with parameters is a form all the same.
    for (const type of ['application/x-www-form-urlencoded; charset=utf-8', 'Application/X-WWW-Form-Urlencoded']) {
      expect(await (await post('/oauth/introspect', `token=${token}`, {authorization: basic, 'content-type': type})).json()).toEqual(byHeader)
    }
    // A Basic header that does not decode is refused with its challenge, as on every token endpoint.
    const garbled = await post('/oauth/introspect', `token=${token}`, {authorization: 'Basic %%%'})
    expect(garbled.status).toBe(401)
    expect(garbled.headers.get('www-authenticate')).toMatch(/^Basic /)
    expect(((await garbled.json()) as {error: string}).error).toBe('invalid_client')
  })

  it('issues and revokes through the same forms', async () => {
    const issued = await post('/oauth/token', 'grant_type=client_credentials')
    expect(issued.status).toBe(200)
    const {access_token: own} = (await issued.json()) as {access_token: string}
    expect((await post('/oauth/revoke', `token=${own}`)).status).toBe(200)
    expect(await (await post('/oauth/introspect', `token=${own}`)).json()).toEqual({active: false})
  })

  it('refuses a body over the limit, with or without a Content-Length, in OAuth shape', async () => {
    const big = `token=${'x'.repeat(20_000)}`
    const sized = await post('/oauth/introspect', big)
    expect(sized.status).toBe(413)
    expect(await sized.json()).toMatchObject({error_description: 'the request body is too large'})
    // Chunked, so no Content-Length announces the size: the read stops at the limit.
    const chunked = await new Promise<{status: number; body: string}>((resolve, reject) => {
      const url = new URL('/oauth/introspect', server.url)
      const req = request(url, {method: 'POST', headers: {authorization: basic, 'content-type': 'application/x-www-form-urlencoded', 'transfer-encoding': 'chunked'}}, (res) => {
        let body = ''
        res.on('data', (chunk) => (body += chunk))
        res.on('end', () => resolve({status: res.statusCode!, body}))
      })
      req.on('error', reject)
      for (let i = 0; i < 20; i++) req.write('x'.repeat(1_000))
      req.end()
    })
    expect(chunked.status).toBe(413)
    expect(JSON.parse(chunked.body)).toMatchObject({error_description: 'the request body is too large'})
    // The server still answers afterwards.
    expect((await post('/oauth/introspect', `token=${token}`)).status).toBe(200)
  })
})
