import {existsSync} from 'node:fs'
import {createServer, type IncomingMessage, type Server, type ServerResponse} from 'node:http'
import type {AddressInfo} from 'node:net'
import {join} from 'node:path'
import {afterAll, afterEach, describe, expect, it} from 'vitest'
import {partnerConfig} from '../../../src/interfaces/partner/config.js'
import {listDeliveries} from '../../../src/interfaces/partner/outbox.js'
import {pushProject} from '../../../src/interfaces/partner/service.js'
import {httpTransport, RefusedTarget, type Resolver} from '../../../src/http/outbound.js'
import {verifyPartner} from '../../../src/interfaces/partner/verify.js'
import {DeliveryWorker} from '../../../src/interfaces/partner/worker.js'
import {ManualClock} from '../../../src/lib/clock.js'
import {refusedAddress} from '../../../src/lib/partner-address.js'
import {registerClient} from '../../../src/registry/service.js'
import {openStore} from '../../../src/schema.js'
import type {Store} from '../../../src/store/db.js'
import {cli, cliJson, partnerRegistration, tempDir} from '../../helpers/cli.js'
import {onPostgres, openMemoryStore, storeFlags} from '../../helpers/store.js'
import {projectInput} from './helpers.js'

const MiB = 1024 * 1024

/** A local partner; `handler` answers, and every request it sees is counted. */
async function localPartner(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{server: Server; url: string; port: number; requests: IncomingMessage[]}> {
  const requests: IncomingMessage[] = []
  const server = createServer((req, res) => {
    requests.push(req)
    handler(req, res)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {server, url: `http://127.0.0.1:${port}`, port, requests}
}

/**
 * Answers `status` with a body of `total` bytes, written as fast as the connection takes it. For
 * each answer, `seen.written` holds the bytes written until its socket closed (the reader stopped
 * reading), largest answer first.
 */
function hugeAnswer(status: number, total: number, seen: {written: number; closedEarly: boolean}) {
  return (req: IncomingMessage, res: ServerResponse) => {
    req.resume()
    const chunk = Buffer.alloc(64 * 1024, 'x')
    res.writeHead(status, {'content-type': 'text/plain', 'content-length': String(total)})
    let closed = false
    let written = 0
    res.on('close', () => {
      closed = true
      seen.written = Math.max(seen.written, written)
      if (written < total) seen.closedEarly = true
    })
    const pump = () => {
      while (!closed && written < total) {
        written += chunk.length
        if (!res.write(chunk)) return void res.once('drain', pump)
      }
      if (!closed) res.end()
    }
    pump()
  }
}

const servers: Server[] = []
afterAll(() => {
  for (const server of servers) server.close()
})

describe('which addresses a partner URL may name', () => {
  it('refuses link-local, unspecified and their IPv6 spellings; keeps loopback and private networks', () => {
    for (const bad of [
      '169.254.169.254',
      '169.254.0.1',
      '0.0.0.0',
      '0.1.2.3',
      '::',
      '[::]',
      'fe80::1',
      'febf::1',
      '[fe80::1%eth0]',
      '::ffff:169.254.169.254',
      '::ffff:a9fe:a9fe',
      '[::ffff:0.0.0.0]',
      '64:ff9b::a9fe:a9fe',
      'fd00:ec2::254',
      // SIIT, mapped with zeros after ffff, 6to4, Teredo (server; client inverted), local NAT64.
      '::ffff:0:a9fe:a9fe',
      '[::ffff:0:0:a9fe:a9fe]',
      '::ffff:0:169.254.169.254',
      '2002:a9fe:a9fe::',
      '2001:0:a9fe:a9fe::1',
      '2001:0:4136:e378:8000:63bf:5601:5601',
      '64:ff9b:1:a9fe:a9:fe00::',
      '64:ff9b:1::a9fe:a9fe',
    ]) {
      expect(refusedAddress(bad), bad).toBeDefined()
    }
    for (const good of [
      '127.0.0.1',
      '::1',
      '[::1]',
      '10.0.0.7',
      '192.168.1.2',
      '203.0.113.9',
      '2001:db8::1',
      '::ffff:127.0.0.1',
      'fec0::1',
      'partner.example',
      '2002:c633:6401::1',
      '2001:0:c633:6401::1',
      '64:ff9b::c633:6401',
    ]) {
      expect(refusedAddress(good), good).toBeUndefined()
    }
  })
})

describe('registering a partner URL', () => {
  const db = () => ['--db', join(tempDir(), 'urls.db')]
  /** The clients a store holds; none when a refused command left no SQLite store behind at all. */
  const clientsOf = (store: string[]) => (!onPostgres && !existsSync(store[1]!) ? [] : cliJson<unknown[]>(['list-clients', ...store]))
  const register = (store: string[], url: string, ...extra: string[]) => cli([...partnerRegistration(store, url), '--partner-username', 'u', '--partner-password', 'p', ...extra])

  // The override flag lifts only the plain-http rule, never these: each is refused with it given.
  const refused: [string, RegExp, string][] = [
    ['http://169.254.169.254/latest/meta-data', /link-local/, 'the metadata service'],
    ['https://169.254.169.254', /link-local/, 'the metadata service over https'],
    // The URL parser reads these as 169.254.169.254 too.
    ['http://2852039166/', /link-local/, 'the metadata service as one decimal number'],
    ['http://0xa9.0xfe.0xa9.0xfe/', /link-local/, 'the metadata service in hexadecimal'],
    ['http://[fe80::1]:8080', /link-local/, 'an IPv6 link-local address'],
    ['http://[::ffff:169.254.169.254]', /link-local.*IPv6/, 'the metadata service mapped into IPv6'],
    ['https://[::ffff:0:a9fe:a9fe]/', /link-local.*IPv6/, 'the metadata service translated (SIIT)'],
    ['https://[::ffff:0:0:a9fe:a9fe]/', /link-local.*IPv6/, 'the metadata service mapped with zeros after ffff'],
    ['https://[2002:a9fe:a9fe::]/', /link-local.*IPv6/, 'the metadata service behind 6to4'],
    ['http://0.0.0.0:8080', /unspecified/, 'the unspecified IPv4 address'],
    ['http://[::]:8080', /unspecified/, 'the unspecified IPv6 address'],
    ['https://user:hunter2pw@partner.example', /must not carry credentials/, 'a user and password in the URL'],
    ['https://user@partner.example', /must not carry credentials/, 'a user name in the URL'],
  ]
  for (const [url, why, what] of refused) {
    it(`refuses ${what} (${url}) even with --allow-insecure-partner-url: one Error line, exit 1, nothing stored`, () => {
      const store = db()
      const run = register(store, url, '--allow-insecure-partner-url')
      expect(run.status, url).toBe(1)
      expect(run.stderr, url).toMatch(/^Error: partner_url: must/)
      expect(run.stderr, url).toMatch(why)
      expect(run.stderr.trim().split('\n'), url).toHaveLength(1)
      expect(run.stderr + run.stdout, url).not.toContain('hunter2pw')
      expect(clientsOf(store)).toEqual([])
    })
  }

  it('refuses plain http to a host other than loopback unless the operator allows it, then warns on stderr only', () => {
    const store = db()
    const refused = register(store, 'http://partner.example:8080')
    expect(refused.status).toBe(1)
    expect(refused.stderr).toMatch(/^Error: partner_url: must use https: plain http sends the Basic credentials unencrypted.*--allow-insecure-partner-url/)
    expect(refused.stderr.trim().split('\n')).toHaveLength(1)
    expect(clientsOf(store)).toEqual([])

    const allowed = register(store, 'http://partner.example:8080', '--allow-insecure-partner-url', '--json')
    expect(allowed.status).toBe(0)
    expect(JSON.parse(allowed.stdout).partner_url).toBe('http://partner.example:8080')
    expect(allowed.stderr).toMatch(/^Warning: partner URL http:\/\/partner\.example:8080 is plain http/)

    // Loopback needs no flag and gets no warning; https never does.
    for (const url of ['http://127.0.0.1:9', 'http://localhost:9', 'http://[::1]:9', 'https://partner.example']) {
      const run = register(store, url, '--json')
      expect(run.status, url).toBe(0)
      expect(run.stderr, url).not.toMatch(/Warning/)
    }
  })

  it('update-client refuses a link-local, unspecified or credentialed URL even with --allow-insecure-partner-url, changing nothing', () => {
    const store = db()
    const client = JSON.parse(register(store, 'http://partner.example', '--allow-insecure-partner-url', '--json').stdout)
    for (const url of ['http://169.254.169.254', 'http://[fe80::a]', 'http://[::ffff:169.254.1.1]', 'http://0.0.0.0', 'https://a:b@partner.example']) {
      const run = cli(['update-client', client.client_id, ...store, '--partner-url', url, '--allow-insecure-partner-url'])
      expect(run.status, url).toBe(1)
      expect(run.stderr, url).toMatch(/^Error: partner_url: must/)
      expect(run.stderr.trim().split('\n'), url).toHaveLength(1)
    }
    expect(cliJson(['show-client', client.client_id, ...store]).partner_url).toBe('http://partner.example')
  })

  it('update-client refuses plain http to another host without the flag, leaves an allowed URL alone when another field changes, and warns when the flag moves it', () => {
    const store = db()
    const client = JSON.parse(register(store, 'http://partner.example', '--allow-insecure-partner-url', '--json').stdout)
    const insecure = cli(['update-client', client.client_id, ...store, '--partner-url', 'http://other.example'])
    expect(insecure.status).toBe(1)
    expect(insecure.stderr).toMatch(/must use https/)
    expect(cliJson(['show-client', client.client_id, ...store]).partner_url).toBe('http://partner.example')

    const renamed = cli(['update-client', client.client_id, ...store, '--name', 'Renamed', '--json'])
    expect(renamed.status, renamed.stderr).toBe(0)
    expect(JSON.parse(renamed.stdout)).toMatchObject({name: 'Renamed', partner_url: 'http://partner.example'})

    const moved = cli(['update-client', client.client_id, ...store, '--partner-url', 'http://other.example', '--allow-insecure-partner-url', '--json'])
    expect(moved.status, moved.stderr).toBe(0)
    expect(moved.stderr).toMatch(/^Warning: partner URL http:\/\/other\.example is plain http/)
    expect(JSON.parse(moved.stdout).partner_url).toBe('http://other.example')
  })
})

describe('at delivery time', () => {
  const clock = new ManualClock('2026-01-15T12:00:00.000Z')
  let store: Store
  afterEach(async () => store?.close())

  async function partnerClient(partnerUrl: string): Promise<string> {
    const client = await registerClient(
      store,
      {
        name: 'P',
        url: 'https://p.example',
        logo_url: 'https://p.example/l.png',
        grants: ['partner'],
        partner_url: partnerUrl,
        partner_username: 'medpanel',
        partner_password: 'pw',
        allow_insecure_partner_url: true,
      },
      clock.now(),
    )
    return client.client_id
  }

  it('resolves the name, refuses a link-local answer (DNS rebinding) and sends nothing; the attempt is retried like any failure', async () => {
    const partner = await localPartner((_req, res) => res.end('{}'))
    servers.push(partner.server)
    store = await openMemoryStore()
    // Registered while the name pointed at the partner; now it points at the metadata service.
    let answer = '127.0.0.1'
    const resolve: Resolver = async () => [{address: answer, family: 4}]
    const transport = httpTransport({resolve})
    const clientId = await partnerClient(`http://rebind.test:${partner.port}`)
    answer = '169.254.169.254'
    await pushProject(store.db, projectInput(), {partners: [clientId]}, clock.now())
    const result = await new DeliveryWorker({db: store.db, keys: store.keys, clock, transport}).drain({now: true})
    expect(result).toEqual({attempted: 1, delivered: 0, failedAttempts: 1})
    const [row] = await listDeliveries(store.db, {})
    expect(row).toMatchObject({status: 'pending', attempts: 1})
    expect(row!.last_error).toBe('refused: rebind.test resolves to 169.254.169.254, a link-local address (169.254.0.0/16, where cloud metadata services answer); nothing was sent')
    expect(partner.requests).toHaveLength(0)

    // A name with any bad address among several is refused whole.
    const mixed = httpTransport({
      resolve: async () => [
        {address: '127.0.0.1', family: 4},
        {address: 'fe80::1', family: 6},
      ],
    })
    await expect(mixed.send({method: 'GET', url: `http://two.test:${partner.port}/`, headers: {}}, 2_000)).rejects.toThrow(RefusedTarget)
    expect(partner.requests).toHaveLength(0)

    // Once the name points somewhere sound again, the retry goes through.
    answer = '127.0.0.1'
    clock.advance(10)
    expect(await new DeliveryWorker({db: store.db, keys: store.keys, clock, transport}).drain({now: true})).toMatchObject({delivered: 1})
    expect(partner.requests).toHaveLength(1)
  })

  it('connects to the address it checked, not to a second lookup of the name', async () => {
    const partner = await localPartner((req, res) => res.end(JSON.stringify({host: req.headers.host})))
    servers.push(partner.server)
    let lookups = 0
    // The name does not exist anywhere: only the checked address, handed to the connection, reaches the partner.
    const transport = httpTransport({
      resolve: async () => {
        lookups++
        return [{address: '127.0.0.1', family: 4}]
      },
    })
    const answer = await transport.send({method: 'GET', url: `http://partner.invalid:${partner.port}/v1/x`, headers: {}}, 5_000)
    expect(answer.status).toBe(200)
    expect(JSON.parse(answer.body)).toEqual({host: `partner.invalid:${partner.port}`})
    expect(lookups).toBe(1)
  })

  /**
   * A store whose one partner client has `url` as its partner URL, written straight into the row
   * as a release before these checks could have stored it; answers the CLI's store flags.
   */
  async function partnerStoredAs(url: string): Promise<string[]> {
    const flags = storeFlags(join(tempDir(), 'legacy.db'))
    const client = cliJson([...partnerRegistration(flags, 'http://127.0.0.1:9'), '--partner-username', 'u', '--partner-password', 'p'])
    const legacy = await openStore(flags[0] === '--db' ? {file: flags[1]!} : {url: flags[1]!})
    await legacy.db.updateTable('clients').set({partner_url: url}).where('id', '=', client.client_id).execute()
    await legacy.close()
    return flags
  }

  it('refuses a link-local literal stored before this check existed, and says why in list-deliveries', async () => {
    const flags = await partnerStoredAs('http://169.254.169.254')
    const push = cli(['push-project', ...flags, '--project-id', 'P-META', '--name', 'X', '--duration', '5', '--status', 'active', '--type', 'custom', '--wait', '--json'])
    // --wait exits 1 when something was not delivered.
    expect(push.status).toBe(1)
    const [row] = cliJson<{status: string; last_error: string}[]>(['list-deliveries', ...flags])
    expect(row).toMatchObject({status: 'pending'})
    expect(row!.last_error).toMatch(/^refused: 169\.254\.169\.254, a link-local address .*; nothing was sent$/)
  })

  it('never prints credentials a partner URL stored by an earlier release carries', async () => {
    const flags = await partnerStoredAs('https://user:hunter2@partner.example/api')
    const [client] = cliJson<{client_id: string}[]>(['list-clients', ...flags])
    const shown = cli(['show-client', ...flags, client!.client_id, '--json'])
    expect(shown.stdout).not.toContain('hunter2')
    expect(JSON.parse(shown.stdout).partner_url).toBe('https://***@partner.example/api')
    expect(cli(['list-clients', ...flags]).stdout).not.toContain('hunter2')
  })
})

describe("reading a partner's answer", () => {
  const clock = new ManualClock('2026-01-15T12:00:00.000Z')
  const total = 64 * MiB
  let store: Store
  afterEach(async () => store?.close())

  async function deliverTo(url: string) {
    store = await openMemoryStore()
    const client = await registerClient(
      store,
      {
        name: 'P',
        url: 'https://p.example',
        logo_url: 'https://p.example/l.png',
        grants: ['partner'],
        partner_url: url,
        partner_username: 'medpanel',
        partner_password: 'pw',
      },
      clock.now(),
    )
    await pushProject(store.db, projectInput(), {partners: [client.client_id]}, clock.now())
    const result = await new DeliveryWorker({db: store.db, keys: store.keys, clock, transport: httpTransport()}).drain({now: true})
    return {result, rows: await listDeliveries(store.db, {})}
  }

  it('reads at most 64 KiB of a huge 200 answer, closes the connection on the rest, and counts the delivery as made', async () => {
    const seen = {written: 0, closedEarly: false}
    const partner = await localPartner(hugeAnswer(200, total, seen))
    servers.push(partner.server)
    const {result, rows} = await deliverTo(partner.url)
    expect(result).toEqual({attempted: 1, delivered: 1, failedAttempts: 0})
    expect(rows[0]).toMatchObject({status: 'delivered', last_status: 200})
    await until(() => seen.closedEarly)
    // What the socket buffers hold on both sides comes on top of the 64 KiB read; far from 64 MiB.
    expect(seen.written).toBeLessThan(16 * MiB)
    expect(partnerConfig.responseBodyLimitBytes).toBe(64 * 1024)
  })

  it('reads at most 64 KiB of a huge error answer; the attempt fails with the start of its text', async () => {
    const seen = {written: 0, closedEarly: false}
    const partner = await localPartner(hugeAnswer(503, total, seen))
    servers.push(partner.server)
    const {result, rows} = await deliverTo(partner.url)
    expect(result).toEqual({attempted: 1, delivered: 0, failedAttempts: 1})
    expect(rows[0]).toMatchObject({status: 'pending', last_status: 503})
    expect(rows[0]!.last_error).toMatch(/^HTTP 503: x{200}$/)
    await until(() => seen.closedEarly)
    expect(seen.written).toBeLessThan(16 * MiB)
  })

  it('verify-partner fails a check whose answer passes its 4 MiB bound, without reading the rest', async () => {
    const seen = {written: 0, closedEarly: false}
    const huge = hugeAnswer(200, total, seen)
    // The project's GET answers 64 MiB; everything else answers an empty 200.
    const partner = await localPartner((req, res) => {
      if (req.method === 'GET' && req.url === '/v1/projects/verify-huge') return huge(req, res)
      req.resume()
      req.on('end', () => res.end())
    })
    servers.push(partner.server)
    const report = await verifyPartner({url: partner.url, username: 'u', password: 'p', projectId: 'verify-huge', timeoutMs: 5_000})
    const get = report.checks.find((c) => c.name === 'project GET returns the PUT')
    expect(get).toMatchObject({ok: false})
    expect(get!.detail).toMatch(/^GET \/v1\/projects\/verify-huge answered more than 4 MiB; not read further$/)
    await until(() => seen.closedEarly)
    expect(seen.written).toBeLessThan(16 * MiB)
  })
})

async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('the partner never saw its connection closed')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}
