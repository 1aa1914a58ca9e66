import {createHash, randomBytes} from 'node:crypto'
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cli, startCli, tempDir, type RunningCli} from '../helpers/cli.js'
import {consentInBrowser} from '../helpers/consent.js'
import {onPostgres} from '../helpers/store.js'
import {basicAuth, clientBasic} from '../helpers/http-basic.js'

/**
 * What serve, the reference partner and the CLI log, in both --log-format values, after a whole
 * working day: sign-on through the consent form, token and member info, a withdrawal, a push to a
 * partner and a search. No secret any of it used may appear in any line, every JSON line must
 * parse, and one push's request id must be found from the CLI to serve's worker to the partner.
 */
describe.each(['json', 'text'] as const)('logs in the %s format', (format) => {
  // One working day on one serve and one partner, a part of it a test, in order; the last two
  // tests stop both and read everything they and the commands wrote.
  const dir = tempDir('medpanel-logs-')
  const db = ['--db', join(dir, 'medpanel.db')]
  const secrets: Record<string, string> = {
    'member password': `member-pw-${randomBytes(6).toString('hex')}`,
    'partner password': `partner-pw-${randomBytes(6).toString('hex')}`,
    'signing secret': `signing-secret-${randomBytes(8).toString('hex')}`,
  }
  /** Every CLI run's output, kept as files as an operator's job runner keeps them; `hands` names the secrets that command exists to print. */
  const outputs: {file: string; hands: string[]}[] = []
  const run = (args: string[], hands: string[] = []) => {
    const result = cli(args)
    const file = join(dir, `cli-${outputs.length}-${args[0]}.out`)
    writeFileSync(file, `${result.stdout}\n${result.stderr}`)
    outputs.push({file, hands})
    expect(result.status, `${args.join(' ')}: ${result.stderr}`).toBe(0)
    return result
  }
  const runJson = (args: string[], hands: string[] = []) => JSON.parse(run([...args, '--json'], hands).stdout)

  const logFlags = ['--log-format', format]
  let partner: RunningCli
  let server: RunningCli
  let client: {client_id: string; client_secret: string}
  let member: {user_id: number}
  /** The request ids of the two pushes: one printed by --json, one on the human output's stderr. */
  let pushedId: string
  let humanId: string
  let serveLines: string[]
  let partnerLines: string[]

  beforeAll(async () => {
    partner = await startCli(['partner-serve', '--port', '0', '--username', 'medpanel', '--password', secrets['partner password']!, '--db', join(dir, 'partner.db'), ...logFlags])
    server = await startCli(['serve', '--port', '0', ...db, ...logFlags])
  })
  afterAll(async () => {
    await server?.stop()
    await partner?.stop()
  })

  it('A: a client, a member, the consent form, the code for tokens, token info and member info', async () => {
    const base = server.url
    const redirectUri = 'https://app.example/callback'
    client = runJson(
      ['register-client', ...db, '--name', 'Logs', '--url', 'https://app.example', '--logo-url', 'https://app.example/l.png', '--redirect-uri', redirectUri].concat([
        '--grant',
        'signon,balance,conversations',
      ]),
      ['client secret'],
    )
    secrets['client secret'] = client.client_secret
    member = runJson([
      'add-member',
      ...db,
      '--email',
      'logs@clinic.example',
      '--password',
      secrets['member password']!,
      '--first-name',
      'Lou',
      '--last-name',
      'Gan',
      '--country',
      'US',
      '--specialty',
      'Cardiology',
    ])
    const verifier = randomBytes(32).toString('base64url')
    secrets['code verifier'] = verifier
    const authorize = new URL(`${base}/oauth/authorize`)
    authorize.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: redirectUri,
      response_type: 'code',
      state: 'st',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString()
    const callback = await consentInBrowser(base, authorize, {email: 'logs@clinic.example', password: secrets['member password']!})
    const code = callback.searchParams.get('code')!
    expect(code).toBeTruthy()
    secrets.code = code
    const tokenAnswer = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: redirectUri,
        code_verifier: verifier,
        client_id: client.client_id,
        client_secret: client.client_secret,
      }),
    })
    expect(tokenAnswer.status).toBe(200)
    const tokens = (await tokenAnswer.json()) as Record<string, unknown>
    for (const [name, value] of Object.entries(tokens)) if (name.endsWith('token') && typeof value === 'string') secrets[name.replace('_', ' ')] = value
    expect(secrets['access token']).toBeTruthy()
    const bearer = {authorization: `Bearer ${secrets['access token']}`}
    expect((await fetch(`${base}/oauth/token/info`, {headers: bearer})).status).toBe(200)
    expect((await fetch(`${base}/oauth/user/info`, {headers: bearer})).status).toBe(200)
  })

  it('C: a credit from the CLI, a withdrawal over HTTP with an Idempotency-Key', async () => {
    run(['credit', 'user_id', String(member.user_id), ...db, '--amount', '50'])
    const basic = clientBasic(client)
    const withdrawal = await fetch(`${server.url}/balance/user_id/${member.user_id}/withdrawals`, {
      method: 'POST',
      headers: {authorization: basic, 'content-type': 'application/json', 'idempotency-key': `idem-${randomBytes(6).toString('hex')}`},
      body: JSON.stringify({type: 'PAYPAL', amount: 20, member_details: {first_name: 'Lou', last_name: 'Gan', email: 'logs@clinic.example'}}),
    })
    expect(withdrawal.status).toBe(201)
  })

  it("B: a partner with a password and a signing secret; two pushes, each with a request id, which serve's worker delivers", async () => {
    const partnerClient = runJson(
      [
        'register-client',
        ...db,
        '--name',
        'Partner',
        '--url',
        'https://partner.example',
        '--logo-url',
        'https://partner.example/l.png',
        '--grant',
        'partner',
        '--partner-url',
        partner.url,
        '--partner-username',
        'medpanel',
        '--partner-password',
        secrets['partner password']!,
        '--signing-secret',
        secrets['signing secret']!,
      ],
      ['client secret'],
    )
    const project = ['--name', 'Logged study', '--duration', '10', '--status', 'active', '--type', 'custom', '--partner', partnerClient.client_id]
    const pushed = runJson(['push-project', ...db, '--project-id', 'LOG-1', ...project])
    expect(pushed.request_id).toMatch(/^[0-9a-f-]{36}$/)
    pushedId = pushed.request_id
    const human = run(['push-project', ...db, '--project-id', 'LOG-2', ...project])
    humanId = /^Request id: ([0-9a-f-]{36}) /m.exec(human.stderr)?.[1] as string
    expect(humanId, human.stderr).toBeTruthy()
    expect(runJson(['list-deliveries', ...db, '--project-id', 'LOG-1'])).toEqual([expect.objectContaining({request_id: pushedId})])
    const partnerAuth = {authorization: basicAuth('medpanel', `${secrets['partner password']}`)}
    for (const id of ['LOG-1', 'LOG-2']) {
      for (let i = 0; (await fetch(`${partner.url}/v1/projects/${id}`, {headers: partnerAuth})).status !== 200; i++) {
        expect(i, `${id} was not delivered`).toBeLessThan(600)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }
  })

  it('E: an API key and a search', async () => {
    const key = runJson(['issue-api-key', client.client_id, ...db, '--methods', 'summary'], ['API key'])
    secrets['API key'] = key.api_key
    const search = await fetch(`${server.url}/conversations/summary?terms[]=heart&start=2024-01-01T00:00:00Z&end=2024-12-31T23:59:59Z`, {
      headers: {'x-service-conversation-api-key': key.api_key},
    })
    expect(search.status).toBe(200)
  })

  it('hold no secret: not one in a line of serve, of the partner, or of a command that is not there to print it', async () => {
    // The store's key: its file beside a SQLite store, or the environment's on PostgreSQL.
    const keyText = onPostgres ? process.env.MEDPANEL_SECRET_KEY : existsSync(join(dir, 'medpanel.db.key')) ? readFileSync(join(dir, 'medpanel.db.key'), 'utf8') : undefined
    const storeKeys = (keyText ?? '').split(/[\s,]+/).filter(Boolean)
    expect(storeKeys.length).toBeGreaterThan(0)
    for (const [i, encoded] of storeKeys.entries()) {
      secrets[`store key ${i}`] = encoded
      secrets[`store key ${i} (hex)`] = Buffer.from(encoded, 'base64').toString('hex')
    }

    expect(Object.keys(secrets)).toEqual(
      expect.arrayContaining(['client secret', 'member password', 'code', 'access token', 'partner password', 'signing secret', 'API key', 'store key 0']),
    )
    // The check reads what it means to: the command that hands out a secret does show it.
    expect(readFileSync(outputs[0]!.file, 'utf8')).toContain(secrets['client secret'])

    expect(await server.stop('SIGTERM')).toBe(0)
    expect(await partner.stop('SIGTERM')).toBe(0)
    serveLines = server.stderr().split('\n').filter(Boolean)
    partnerLines = partner.stderr().split('\n').filter(Boolean)

    const logs: [string, string][] = [...serveLines.map((line): [string, string] => ['serve', line]), ...partnerLines.map((line): [string, string] => ['partner-serve', line])]
    for (const {file, hands} of outputs) {
      for (const line of readFileSync(file, 'utf8').split('\n')) {
        for (const [name, secret] of Object.entries(secrets)) {
          if (!hands.includes(name)) expect(line.includes(secret), `${file} shows the ${name}: ${line}`).toBe(false)
        }
      }
    }
    for (const [who, line] of logs) {
      for (const [name, secret] of Object.entries(secrets)) expect(line.includes(secret), `${who} logged the ${name}: ${line}`).toBe(false)
    }
  })

  it(`follow a push by its request id from serve's worker to the partner, in ${format} lines`, () => {
    // One push, followed by its id: serve's worker sent it, the partner received it under it.
    const humanLines = (lines: string[], id: string) => lines.filter((line) => line.includes(id))
    if (format === 'json') {
      const parsed = (lines: string[]) =>
        lines.map((line) => {
          const entry = JSON.parse(line) as Record<string, unknown>
          expect(entry, line).toMatchObject({
            time: expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/),
            level: expect.stringMatching(/^(info|warn|error)$/),
            msg: expect.any(String),
          })
          return entry
        })
      const served = parsed(serveLines)
      const received = parsed(partnerLines)
      for (const id of [pushedId, humanId]) {
        expect(served).toContainEqual(expect.objectContaining({msg: 'delivery attempt', request_id: id, outcome: 'delivered', status: 200, interface: 'B'}))
        expect(received).toContainEqual(expect.objectContaining({msg: 'request', request_id: id, method: 'PUT', route: '/v1/projects/:p', interface: 'B', status: 200}))
      }
      expect(served).toContainEqual(
        expect.objectContaining({msg: 'request', interface: 'C', route: '/balance/:key/:id/withdrawals', method: 'POST', status: 201, address: '127.0.0.1'}),
      )
      expect(served).toContainEqual(expect.objectContaining({msg: 'request', interface: 'A', route: '/oauth/token', method: 'POST', status: 200}))
      expect(served).toContainEqual(expect.objectContaining({msg: 'request', interface: 'E', route: '/conversations/summary', status: 200}))
      expect(served).toContainEqual(expect.objectContaining({msg: 'stopping: finishing requests in flight', signal: 'SIGTERM'}))
      // The route template, never a path with the member's id in it.
      expect(serveLines.filter((line) => line.includes(`/balance/user_id/${member.user_id}/`))).toEqual([])
    } else {
      const access = serveLines.filter((line) => /^\S+ (GET|POST|PUT|DELETE|HEAD) \//.test(line))
      expect(access.length).toBeGreaterThan(5)
      for (const line of access) expect(line).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z [A-Z]+ \S+ \d{3} \d+\.\dms id=\S+ addr=\S+$/)
      expect(serveLines).toContainEqual(expect.stringMatching(new RegExp(`^.* POST /balance/user_id/${member.user_id}/withdrawals 201 `)))
      for (const id of [pushedId, humanId]) {
        expect(humanLines(serveLines, id)).toEqual([expect.stringMatching(new RegExp(`^delivery [0-9a-f-]{36} PUT /v1/projects/LOG-\\d -> delivered \\(200\\) id=${id}$`))])
        expect(humanLines(partnerLines, id)).toEqual([expect.stringMatching(new RegExp(` PUT /v1/projects/LOG-\\d 200 [\\d.]+ms id=${id} addr=`))])
      }
      expect(serveLines).toContain('received SIGTERM, finishing requests in flight…')
    }
  })
})

describe('a service told to log JSON', () => {
  const db = ['--db', join(tempDir('medpanel-logs-'), 'medpanel.db')]
  // One test per way of asking for JSON and failing to start.
  for (const [args, env] of [
    [['serve', ...db, '--log-format', 'json', '--port', 'abc'], {}],
    [['serve', ...db, '--port', 'abc'], {MEDPANEL_LOG_FORMAT: 'json'}],
    [['serve', ...db, '--log-format=json', '--base-url', 'ftp://panel.example'], {}],
    [['partner-serve', '--log-format', 'json', '--username', 'u', '--password', 'p', '--port', '-1'], {}],
  ] as [string[], Record<string, string>][]) {
    const shown = [...Object.entries(env).map(([name, value]) => `${name}=${value}`), ...args.map((arg) => (arg === db[1] ? 'STORE' : arg))].join(' ')
    it(`reports a failure to start in a JSON line too, even a flag it could not parse: ${shown}`, () => {
      const run = cli(args, env)
      expect(run.status, args.join(' ')).toBe(1)
      expect(
        run.stderr
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line)),
        args.join(' '),
      ).toEqual([{time: expect.stringMatching(/Z$/), level: 'error', msg: expect.stringMatching(/--port|--base-url/)}])
    })
  }

  it('keeps the Error: line of the text format when not told to log JSON', () => {
    expect(cli(['serve', ...db, '--port', 'abc']).stderr).toMatch(/^Error: Parsing --port/)
  })
})
