import {Hono} from 'hono'
import {describe, expect, it} from 'vitest'
import {readBasicCredentials} from '../../src/http/basic-auth.js'

// readBasicCredentials remembers each header it parsed: the second read of a header must give
// what the first gave, in either mode, and nothing a caller does to an answer may change the next.
describe('readBasicCredentials', () => {
  const app = new Hono()
  app.get('/:mode', (c) => {
    const formEncoded = c.req.param('mode') === 'form'
    const credentials = readBasicCredentials(c, {formEncoded})
    if (credentials) {
      try {
        ;(credentials as {username: string}).username = 'changed'
      } catch {
        // Frozen: what the next read gets stays as parsed.
      }
    }
    return c.json(credentials ?? null)
  })
  const read = async (mode: 'form' | 'raw', header?: string) => (await app.request(`/${mode}`, {headers: header === undefined ? {} : {authorization: header}})).json()
  const basic = (pair: string) => `Basic ${Buffer.from(pair).toString('base64')}`

  it('gives the same answer every time, form-decoded only when asked, in whichever order the modes come', async () => {
    const header = basic('my%20client:s%2Bcr+t:with:colons')
    for (let i = 0; i < 3; i++) {
      expect(await read('form', header)).toEqual({username: 'my client', password: 's+cr t:with:colons'})
      expect(await read('raw', header)).toEqual({username: 'my%20client', password: 's%2Bcr+t:with:colons'})
    }
    const long = basic(`long:${'x'.repeat(600)}`)
    for (let i = 0; i < 2; i++) expect(await read('raw', long)).toEqual({username: 'long', password: 'x'.repeat(600)})
    const other = basic('second:client%41')
    expect(await read('raw', other)).toEqual({username: 'second', password: 'client%41'})
    expect(await read('form', other)).toEqual({username: 'second', password: 'clientA'})
  })

  it('keeps a value that is not form-encoded after all as sent, and refuses what is not Basic each time', async () => {
    expect(await read('form', basic('id:100%'))).toEqual({username: 'id', password: '100%'})
    for (let i = 0; i < 2; i++) {
      for (const header of ['Basic !!!', 'Bearer abc', basic('no-colon'), 'Basic']) {
        expect(await read('raw', header)).toBeNull()
        expect(await read('form', header)).toBeNull()
      }
      expect(await read('raw')).toBeNull()
    }
  })
})
