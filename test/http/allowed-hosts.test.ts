import {Hono} from 'hono'
import {describe, expect, it} from 'vitest'
import {allowedHostEntries, defaultAllowedHosts, hostCheck, listensOnEveryAddress, parseHostEntry} from '../../src/http/allowed-hosts.js'
import {freshApp} from '../helpers/app.js'

/** A bare app behind the Host check that answers 200 "ok" on every path. */
function checked(entries: string[]) {
  const app = new Hono()
  app.use(hostCheck(entries))
  app.all('*', (c) => c.text('ok'))
  return async (url: string) => (await app.request(url)).status
}

describe('the Host check', () => {
  it('lets a name with a port through on that port only, and a name without one on any port', async () => {
    const status = checked(['api.example:8080', 'panel.example.com'])
    expect(await status('http://api.example:8080/x')).toBe(200)
    expect(await status('http://API.Example:8080/x')).toBe(200)
    expect(await status('http://api.example:8081/x')).toBe(421)
    expect(await status('http://api.example/x')).toBe(421)
    expect(await status('http://panel.example.com/x')).toBe(200)
    expect(await status('http://panel.example.com:9999/x')).toBe(200)
    expect(await status('https://panel.example.com/x')).toBe(200)
    expect(await status('http://panel.example.com./x')).toBe(200)
    expect(await status('http://evil.example/x')).toBe(421)
    expect(await status('http://www.panel.example.com/x')).toBe(421)
    expect(await status('http://panel.example.com.evil.example/x')).toBe(421)
  })

  it('treats a Host without a port as port 80 (https: 443) for a name given with a port', async () => {
    const status = checked(['plain.example:80', 'secure.example:443'])
    expect(await status('http://plain.example/')).toBe(200)
    expect(await status('http://plain.example:80/')).toBe(200)
    expect(await status('https://secure.example/')).toBe(200)
    expect(await status('http://secure.example/')).toBe(421)
  })

  it('with a leading dot, allows the domain itself and every name under it, and nothing that merely ends the same', async () => {
    const status = checked(['.example.com'])
    for (const host of ['example.com', 'a.example.com', 'a.b.example.com:8443']) expect(await status(`http://${host}/`), host).toBe(200)
    for (const host of ['badexample.com', 'example.com.evil', 'example.org']) expect(await status(`http://${host}/`), host).toBe(421)
  })

  it('spells IPv6 and IPv4 addresses the way URLs do', async () => {
    const status = checked(['[0:0:0:0:0:0:0:1]:8080', '10.0.0.5:8080'])
    expect(await status('http://[::1]:8080/')).toBe(200)
    expect(await status('http://[::2]:8080/')).toBe(421)
    expect(await status('http://10.0.0.5:8080/')).toBe(200)
    expect(await status('http://10.0.0.6:8080/')).toBe(421)
  })

  it('exempts the probes (/livez, /readyz, /healthz) only', async () => {
    const status = checked(['panel.example.com'])
    for (const probe of ['/livez', '/readyz', '/healthz']) {
      expect(await status(`http://10.0.0.7${probe}`), probe).toBe(200)
      expect(await status(`http://10.0.0.7${probe}/`), probe).toBe(421)
      expect(await status(`http://10.0.0.7${probe}x`), probe).toBe(421)
    }
    expect(await status('http://10.0.0.7/metrics')).toBe(421)
  })

  it('is not there for an app given no list (in-process apps answer any host, as before)', async () => {
    const ctx = await freshApp()
    try {
      expect((await ctx.app.request('http://evil.example/openapi.json')).status).toBe(200)
      // The same app given a list refuses it.
      const {createApp} = await import('../../src/app.js')
      const guarded = createApp({store: ctx.store, clock: ctx.clock, log: () => {}, allowedHosts: ['panel.example.com']})
      expect((await guarded.request('http://evil.example/openapi.json')).status).toBe(421)
    } finally {
      await ctx.store.close()
    }
  })
})

describe('what serve allows by default', () => {
  it('the listening address, and on loopback or every address the loopback names on that port, and the base URL host', () => {
    expect(defaultAllowedHosts('http://127.0.0.1:8080', undefined)).toEqual(['127.0.0.1:8080', 'localhost:8080', '[::1]:8080'])
    expect(defaultAllowedHosts('http://[::1]:8080', 'https://panel.example.com', ['panel.internal'])).toEqual([
      '[::1]:8080',
      'localhost:8080',
      '127.0.0.1:8080',
      'panel.example.com',
      'panel.internal',
    ])
    expect(defaultAllowedHosts('http://10.0.0.5:80', 'http://panel.example.com:8080')).toEqual(['10.0.0.5:80', 'panel.example.com:8080'])
    expect(defaultAllowedHosts('http://0.0.0.0:8080', 'https://panel.example.com')).toEqual(['localhost:8080', '127.0.0.1:8080', '[::1]:8080', 'panel.example.com'])
    expect(defaultAllowedHosts('http://[::]:8080', 'https://panel.example.com')).toEqual(['localhost:8080', '127.0.0.1:8080', '[::1]:8080', 'panel.example.com'])
  })

  it('knows an every-address --host in its spellings', () => {
    for (const host of ['0.0.0.0', '::', '[::]', '0:0:0:0:0:0:0:0']) expect(listensOnEveryAddress(host), host).toBe(true)
    for (const host of ['127.0.0.1', '::1', 'localhost', '10.0.0.5', 'panel.internal']) expect(listensOnEveryAddress(host), host).toBe(false)
  })

  it('takes --allowed-host values repeated, comma- or space-separated, and refuses what is no host name', () => {
    expect(allowedHostEntries(undefined)).toEqual([])
    expect(allowedHostEntries(['a.example, b.example', '.c.example'])).toEqual(['a.example', 'b.example', '.c.example'])
    expect(allowedHostEntries('a.example b.example:81')).toEqual(['a.example', 'b.example:81'])
    for (const bad of ['a.example/x', 'user@a.example', '::1', 'a.example:0', 'a.example:65536', '.[::1]', '*.example.com', 'a..example']) {
      expect(() => parseHostEntry(bad), bad).toThrow(/^--allowed-host takes a host name/)
    }
  })
})
