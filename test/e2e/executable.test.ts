import * as oauth from 'oauth4webapi'
import {exportJWK, generateKeyPair} from 'jose'
import * as openid from 'openid-client'
import {execFileSync, spawnSync} from 'node:child_process'
import {copyFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {EXECUTABLE, cli, cliJson, startCli, tempDir, type Launcher, type RunningCli} from '../helpers/cli.js'
import {consentInBrowser} from '../helpers/consent.js'
import {basicAuth, clientBasic} from '../helpers/http-basic.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** Builds dist/medpanel unless this run already has one at least as new as the bundle. */
function ensureExecutable(): void {
  const bundle = join(ROOT, 'dist/commands/index.js')
  if (existsSync(EXECUTABLE) && existsSync(bundle) && statSync(EXECUTABLE).mtimeMs >= statSync(bundle).mtimeMs) return
  execFileSync(process.execPath, [join(ROOT, 'scripts/build-exe.mjs')], {cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit']})
}

/**
 * A root directory holding the executable and the shared libraries it links, and nothing else:
 * no node, no node_modules, no checkout. Run under `unshare --root`, the executable sees only
 * this tree, which proves it needs nothing beside it (a PATH without node would prove nothing
 * while /usr/bin/node exists).
 */
function buildJail(): string {
  const jail = tempDir('medpanel-jail-')
  copyFileSync(EXECUTABLE, join(jail, 'medpanel'))
  execFileSync('chmod', ['755', join(jail, 'medpanel')])
  const libraries = execFileSync('ldd', [EXECUTABLE], {encoding: 'utf8'}).match(/\/\S+/g) ?? []
  for (const library of libraries) {
    mkdirSync(join(jail, dirname(library)), {recursive: true})
    copyFileSync(library, join(jail, library))
  }
  mkdirSync(join(jail, 'tmp'), {mode: 0o1777})
  return jail
}

describe('the single executable, alone in an empty root', () => {
  let jail: string
  let launcher: Launcher
  /** Where a path inside the executable's root lies on this machine. */
  let outside: (path: string) => string
  const servers: RunningCli[] = []

  beforeAll(() => {
    ensureExecutable()
    jail = buildJail()
    const env = {HOME: '/tmp', PATH: '/nowhere', TZ: 'UTC'}
    // Found on this machine's PATH before the executable's own environment (which has none) applies.
    const unshare = spawnSync('sh', ['-c', 'command -v unshare'], {encoding: 'utf8'}).stdout.trim() || '/usr/bin/unshare'
    const isolated: Launcher = {command: unshare, args: ['--user', '--map-root-user', '--root', jail, '/medpanel'], env}
    const probe = spawnSync(isolated.command, [...isolated.args, '--version'], {encoding: 'utf8', env})
    if (probe.status === 0) {
      launcher = isolated
      outside = (path) => join(jail, path)
    } else {
      // Said out loud, never passed silently: this machine forbids user namespaces, so the best
      // proof left is a copy of the executable in an empty directory with no node on PATH.
      console.warn(`user namespaces are not allowed here (${(probe.stderr || '').trim()}); running the executable from ${jail} with a PATH that has no node instead`)
      launcher = {command: join(jail, 'medpanel'), args: [], env: {...env, PATH: jail}}
      outside = (path) => join(jail, path)
      process.chdir(jail)
    }
  })

  afterAll(async () => {
    for (const server of servers) await server.stop()
  })

  it('prints its version and help', () => {
    const version = cli(['--version'], {}, launcher)
    expect(version.status).toBe(0)
    expect(version.stdout).toMatch(/^medpanel\/\d+\.\d+\.\d+ linux-x64 node-v22\./)
    const help = cli(['--help'], {}, launcher)
    expect(help.status).toBe(0)
    expect(help.stdout).toContain('serve')
    expect(help.stdout).toContain('register-client')
    // The executable carries no plugin (shell completion needs the npm install), and none is
    // looked for: nothing on stderr, on any form of help.
    for (const args of [['--help'], ['help', 'serve'], ['serve', '--help'], ['clients'], ['help', 'keys']]) {
      const answer = cli(args, {}, launcher)
      expect(answer.status, `${args.join(' ')}: ${answer.stderr}`).toBe(0)
      expect(answer.stderr, args.join(' ')).toBe('')
    }
  })

  describe('runs every interface from the one file: sign-on, a withdrawal, a pulse export, XML search, a push to partner-serve', () => {
    // One serve, one client with every grant and one member for these tests, which run in order.
    const db = ['--db', '/tmp/exe.db']
    let server: RunningCli
    let redirectUri: string
    let client: {client_id: string; client_secret: string}
    let member: {user_id: number}
    let as: oauth.AuthorizationServer
    const insecure = {[oauth.allowInsecureRequests]: true}

    beforeAll(async () => {
      server = await startCli(['serve', '--port', '0', '--host', '127.0.0.1', ...db], {}, launcher)
      servers.push(server)
      redirectUri = `${server.url}/app/callback`
      as = {issuer: server.url, authorization_endpoint: `${server.url}/oauth/authorize`, token_endpoint: `${server.url}/oauth/token`}
      client = cliJson<{client_id: string; client_secret: string}>(
        [
          'register-client',
          ...db,
          '--name',
          'Exe Partner',
          '--url',
          'https://exe.example',
          '--logo-url',
          'https://exe.example/logo.png',
          '--redirect-uri',
          redirectUri,
          '--token-ttl',
          '900',
          '--grant',
          'signon,balance,pulses,conversations',
        ],
        {},
        launcher,
      )
      member = cliJson<{user_id: number}>(
        [
          'add-member',
          ...db,
          '--email',
          'exe@clinic.example',
          '--password',
          'exe-password-1',
          '--first-name',
          'Ada',
          '--last-name',
          'Okafor',
          '--country',
          'US',
          '--specialty',
          'Cardiology',
        ],
        {},
        launcher,
      )
    })

    it('A: signs a member on with the code flow and PKCE through a real OAuth client library', async () => {
      const verifier = oauth.generateRandomCodeVerifier()
      const url = new URL(as.authorization_endpoint!)
      url.search = new URLSearchParams({
        client_id: client.client_id,
        redirect_uri: redirectUri,
        response_type: 'code',
        scope: 'profile',
        state: 'exe-state',
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      }).toString()
      const callback = await consentInBrowser(server.url, url, {email: 'exe@clinic.example', password: 'exe-password-1'})
      const params = oauth.validateAuthResponse(as, {client_id: client.client_id}, callback, 'exe-state')
      const grant = await oauth.authorizationCodeGrantRequest(
        as,
        {client_id: client.client_id},
        oauth.ClientSecretBasic(client.client_secret),
        params,
        redirectUri,
        verifier,
        insecure,
      )
      const tokens = await oauth.processAuthorizationCodeResponse(as, {client_id: client.client_id}, grant)
      const me = await oauth.protectedResourceRequest(tokens.access_token, 'GET', new URL(`${server.url}/oauth/user/info`), undefined, undefined, insecure)
      expect(await me.json()).toEqual({first_name: 'Ada', last_name: 'Okafor', country_of_practice: 'US', primary_specialty: 'Cardiology'})
    })

    it('C: credits from the command line, withdraws over HTTP, and the summary shows what is left', async () => {
      cliJson(['credit', 'user_id', String(member.user_id), ...db, '--amount', '120.50', '--type', 'HONORARIUM'], {}, launcher)
      const basic = clientBasic(client)
      const withdrawal = await fetch(`${server.url}/balance/user_id/${member.user_id}/withdrawals`, {
        method: 'POST',
        headers: {authorization: basic, 'content-type': 'application/json'},
        body: JSON.stringify({type: 'PAYPAL', amount: 20.25, member_details: {first_name: 'Ada', last_name: 'Okafor', email: 'exe@clinic.example'}}),
      })
      expect(withdrawal.status).toBe(201)
      const summary = await (await fetch(`${server.url}/balance/user_id/${member.user_id}/summary`, {headers: {authorization: basic}})).json()
      expect(summary).toMatchObject({available_funds: 100.25, currency: 'USD'})
    })

    it("serves the API reference's Swagger UI from the assets it carries", async () => {
      const swaggerUi = join(ROOT, 'node_modules/swagger-ui-dist')
      for (const [path, file] of [
        ['/docs/swagger-ui-bundle.js', 'swagger-ui-bundle.js'],
        ['/docs/swagger-ui.css', 'swagger-ui.css'],
      ]) {
        const asset = await fetch(`${server.url}${path}`)
        expect(asset.status, path).toBe(200)
        expect(await asset.text(), path).toBe(readFileSync(join(swaggerUi, file!), 'utf8'))
      }
    })

    it('D: exports seeded pulses with a client_credentials token', async () => {
      const seeded = cliJson<{created: {project_id: string}[]}>(
        ['seed-pulses', ...db, '--client', client.client_id, '--count', '3', '--respondents', '5', '--seed', '4'],
        {},
        launcher,
      )
      const ccResponse = await oauth.clientCredentialsGrantRequest(as, {client_id: client.client_id}, oauth.ClientSecretPost(client.client_secret), new URLSearchParams(), insecure)
      const cc = await oauth.processClientCredentialsResponse(as, {client_id: client.client_id}, ccResponse)
      const exported = await fetch(`${server.url}/projects/${seeded.created[0]!.project_id}/export`, {headers: {authorization: `Bearer ${cc.access_token}`}})
      expect(exported.status).toBe(200)
      const doc = (await exported.json()) as {Project: {ProjectId: string}; Respondents: unknown[]}
      expect(doc.Project.ProjectId).toBe(seeded.created[0]!.project_id)
      expect(doc.Respondents).toHaveLength(5)
    })

    it('E: counts seeded posts in XML with an API key on its own search thread, and streams a data answer from it', async () => {
      cliJson(['seed-posts', ...db, '--count', '60', '--comments', '2', '--from', '2024-01-01T00:00:00Z', '--to', '2024-12-31T23:59:59Z', '--seed', '2'], {}, launcher)
      const key = cliJson<{api_key: string}>(['issue-api-key', client.client_id, ...db, '--methods', 'summary,data'], {}, launcher)
      const query = new URLSearchParams([
        ['terms[]', 'patient'],
        ['start', '2024-01-01T00:00:00Z'],
        ['end', '2024-12-31T23:59:59Z'],
      ])
      // The first search starts the executable's search thread, from the source it carries as an
      // asset; without it, searches would quietly run on the event loop instead.
      const threads = () => Number(/^Threads:\s+(\d+)$/m.exec(readFileSync(`/proc/${server.child.pid}/status`, 'utf8'))?.[1])
      const threadsBefore = threads()
      const search = await fetch(`${server.url}/conversations/summary?${query}`, {
        headers: {accept: 'application/vnd.service-v1+xml', 'x-service-conversation-api-key': key.api_key},
      })
      expect(search.status).toBe(200)
      expect(threads()).toBeGreaterThan(threadsBefore)
      expect(search.headers.get('content-type')).toMatch(/xml/)
      const xml = await search.text()
      expect(xml).toMatch(/^<\?xml[\s\S]*<call>[\s\S]*<summary-term><term>patient<\/term><matches>\d+<\/matches>/)
      // a data answer, streamed from the executable's search thread
      const data = await fetch(`${server.url}/conversations/data?${query}`, {headers: {'x-service-conversation-api-key': key.api_key}})
      expect(data.status).toBe(200)
      const answer = (await data.json()) as {summary: {uniques: {posts: number}}; conversations: {post: {id: number}}[]}
      expect(answer.conversations.length).toBeGreaterThan(0)
      expect(answer.conversations.length).toBeGreaterThanOrEqual(answer.summary.uniques.posts)
    })

    it('B: partner-serve from the same executable receives a push-project --wait', async () => {
      const partner = await startCli(['partner-serve', '--port', '0', '--username', 'exe', '--password', 'exe-partner-pw', '--db', '/tmp/partner.db'], {}, launcher)
      servers.push(partner)
      const pusher = cliJson<{client_id: string}>(
        [
          'register-client',
          ...db,
          '--name',
          'Exe Panel',
          '--url',
          'https://panel.example',
          '--logo-url',
          'https://panel.example/l.png',
          '--grant',
          'partner',
          '--partner-url',
          partner.url,
          '--partner-username',
          'exe',
          '--partner-password',
          'exe-partner-pw',
        ],
        {},
        launcher,
      )
      cliJson(
        [
          'push-project',
          ...db,
          '--project-id',
          'EXE-1',
          '--name',
          'Executable study',
          '--duration',
          '12',
          '--status',
          'active',
          '--type',
          'custom',
          '--partner',
          pusher.client_id,
          '--wait',
        ],
        {},
        launcher,
      )
      const received = await fetch(`${partner.url}/v1/projects/EXE-1`, {headers: {authorization: basicAuth('exe', 'exe-partner-pw')}})
      expect(received.status).toBe(200)
      expect(await received.json()).toMatchObject({project_id: 'EXE-1', name: 'Executable study', status: 'active', project_type: 'custom'})
    })

    it('writes everything inside its own root', () => {
      expect(existsSync(outside('/tmp/exe.db'))).toBe(true)
      writeFileSync(outside('/tmp/done'), 'ok')
    })
  })

  it('proves clients and tokens with keys: private_key_jwt, a pushed request and DPoP, verified by its own WebCrypto', async () => {
    const db = ['--db', '/tmp/keys.db']
    const server = await startCli(['serve', '--port', '0', '--host', '127.0.0.1', ...db], {}, launcher)
    servers.push(server)
    const signing = await generateKeyPair('ES256', {extractable: true})
    writeFileSync(outside('/tmp/client-jwks.json'), JSON.stringify({keys: [{...(await exportJWK(signing.publicKey)), kid: 'exe-1'}]}))
    const registered = cliJson<{client_id: string}>(
      [
        'register-client',
        ...db,
        '--name',
        'Exe Keys',
        '--url',
        'https://keys.example',
        '--logo-url',
        'https://keys.example/l.png',
        '--redirect-uri',
        'https://keys.example/cb',
        '--grant',
        'signon,pulses',
        '--token-ttl',
        '3600',
        '--token-endpoint-auth-method',
        'private_key_jwt',
        '--jwks-file',
        '/tmp/client-jwks.json',
        '--require-dpop',
      ],
      {},
      launcher,
    )
    const config = await openid.discovery(new URL(server.url), registered.client_id, undefined, openid.PrivateKeyJwt({key: signing.privateKey, kid: 'exe-1'}), {
      execute: [openid.allowInsecureRequests],
    })
    const pushed = await openid.buildAuthorizationUrlWithPAR(config, {redirect_uri: 'https://keys.example/cb', scope: 'profile'})
    expect(pushed.searchParams.get('request_uri')).toMatch(/^urn:ietf:params:oauth:request_uri:/)
    const dpop = openid.getDPoPHandle(config, await generateKeyPair('ES256'))
    const tokens = await openid.clientCredentialsGrant(config, {scope: 'pulses'}, {DPoP: dpop})
    expect(tokens.token_type).toBe('dpop')
    const info = await openid.fetchProtectedResource(config, tokens.access_token, new URL(`${server.url}/clients/info`), 'GET', undefined, undefined, {DPoP: dpop})
    expect(info.status).toBe(200)
    const bare = await fetch(`${server.url}/clients/info`, {headers: {authorization: `Bearer ${tokens.access_token}`}})
    expect(bare.status).toBe(401)
  })
})
