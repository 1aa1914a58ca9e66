import {execFileSync, spawnSync} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import {existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {freshExecutable} from '../helpers/executable.js'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {DEMO_API_KEY, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET} from '../../src/demo-data.js'
import {cli, freePort, startCli, tempDir, type Launcher, type RunningCli} from '../helpers/cli.js'
import {basicAuth} from '../helpers/http-basic.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const buildah = spawnSync('sh', ['-c', 'command -v buildah'], {encoding: 'utf8'}).stdout.trim()
if (!buildah) console.warn('skipping the container image test: buildah is not installed here (Debian: apt-get install buildah; .ci/run installs it)')

interface OciDescriptor {
  mediaType: string
  digest: string
  size: number
}

interface ImageConfig {
  User?: string
  Env?: string[]
  Entrypoint?: string[]
  Cmd?: string[]
  WorkingDir?: string
  ExposedPorts?: Record<string, object>
  Volumes?: Record<string, object>
  StopSignal?: string
}

/**
 * The image's root file system, as a runtime makes it from the OCI archive: the archive is a tar
 * of an OCI layout (index.json, blobs/sha256/…); the index names the manifest, the manifest the
 * config and the layers, each a tar (gzip or not: GNU tar tells) extracted in order. A FROM
 * scratch image of COPY instructions has no deletions, so no whiteout files to apply (checked).
 * Extracted without owners: the test runs it as root of a user namespace that maps only root, for
 * which files of uid 10001 would be out of reach; the owners are checked in the layers instead.
 */
function unpack(archive: string, into: string): {config: ImageConfig; layers: string[]; rootfs: string} {
  const layout = join(into, 'layout')
  const rootfs = join(into, 'rootfs')
  mkdirSync(layout)
  mkdirSync(rootfs)
  execFileSync('tar', ['-xf', archive, '-C', layout])
  const blob = (descriptor: OciDescriptor) => join(layout, 'blobs', ...descriptor.digest.split(':'))
  const index = JSON.parse(readFileSync(join(layout, 'index.json'), 'utf8')) as {manifests: OciDescriptor[]}
  expect(index.manifests).toHaveLength(1)
  const manifest = JSON.parse(readFileSync(blob(index.manifests[0]!), 'utf8')) as {config: OciDescriptor; layers: OciDescriptor[]}
  const config = (JSON.parse(readFileSync(blob(manifest.config), 'utf8')) as {config: ImageConfig}).config
  const layers = manifest.layers.map(blob)
  for (const layer of layers) execFileSync('tar', ['-xf', layer, '-C', rootfs, '--no-same-owner'])
  return {config, layers, rootfs}
}

/** Each entry of a layer as "mode uid/gid path", from GNU tar's verbose listing. */
function listing(layer: string): Map<string, {mode: string; owner: string}> {
  const lines = execFileSync('tar', ['-tvf', layer, '--numeric-owner'], {encoding: 'utf8', maxBuffer: 16 * 2 ** 20})
    .trim()
    .split('\n')
  const entries = new Map<string, {mode: string; owner: string}>()
  for (const line of lines) {
    const [mode, owner, , , , path] = line.split(/\s+/)
    entries.set(path!.replace(/^\.?\//, '').replace(/\/$/, ''), {mode: mode!, owner: owner!})
  }
  return entries
}

function du(path: string): number {
  return Number(execFileSync('du', ['-sb', path], {encoding: 'utf8'}).split('\t')[0])
}

describe.skipIf(!buildah)('the container image (deploy/Containerfile), built FROM scratch by buildah, unpacked and run', () => {
  let work: string
  let archive: string
  let image: ReturnType<typeof unpack>
  let launcher: Launcher
  /** A path inside the image's root as the executable sees it. */
  let inside: (path: string) => string
  let executable: ReturnType<typeof freshExecutable>
  const servers: RunningCli[] = []

  beforeAll(() => {
    executable = freshExecutable()
    work = tempDir('medpanel-image-')
    archive = join(work, 'medpanel-image.tar')
    // The script as `npm run build:image` runs it, on this checkout's executable, with its
    // staging and archive in this test's temporary directory.
    const script = join(ROOT, 'scripts/build-image.mjs')
    execFileSync(process.execPath, [script, '--executable', executable.path, '--staging', join(work, 'staging'), '--out', archive], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
    })
    image = unpack(archive, work)
    // Reported in docs/operations.md ("Running it in a container").
    console.info(`image: archive ${statSync(archive).size} bytes, unpacked root ${du(image.rootfs)} bytes`)

    const env: Record<string, string> = {PATH: '/nowhere'}
    for (const line of image.config.Env ?? []) env[line.slice(0, line.indexOf('='))] = line.slice(line.indexOf('=') + 1)
    const unshare = spawnSync('sh', ['-c', 'command -v unshare'], {encoding: 'utf8'}).stdout.trim() || '/usr/bin/unshare'
    const isolated: Launcher = {command: unshare, args: ['--user', '--map-root-user', '--root', image.rootfs, ...image.config.Entrypoint!], env}
    const probe = spawnSync(isolated.command, [...isolated.args, '--version'], {encoding: 'utf8', env})
    if (probe.status === 0) {
      launcher = isolated
      inside = (path) => path
    } else {
      // As test/e2e/executable.test.ts does, said out loud: without user namespaces, the best left
      // is the image's executable run from its unpacked root, every path of the image under it.
      console.warn(`user namespaces are not allowed here (${(probe.stderr || '').trim()}); running the image's executable from ${image.rootfs} instead`)
      inside = (path) => join(image.rootfs, path)
      const outsideEnv = Object.fromEntries(Object.entries(env).map(([name, value]) => [name, value.startsWith('/') ? inside(value) : value]))
      launcher = {command: join(image.rootfs, image.config.Entrypoint![0]!), args: image.config.Entrypoint!.slice(1), env: {...outsideEnv, PATH: image.rootfs}}
      process.chdir(image.rootfs)
    }
  })

  afterAll(async () => {
    for (const server of servers) await server.stop()
    executable?.dispose()
  })

  it('holds the executable, its libraries, CA certificates, a non-root user and writable /data and /tmp, and nothing else', () => {
    expect(image.config.Entrypoint).toEqual(['/medpanel'])
    expect(image.config.Cmd).toEqual(['serve', '--host', '0.0.0.0', '--port', '8080', '--db', '/data/medpanel.db'])
    expect(image.config.User).toBe('10001:10001')
    expect(image.config.WorkingDir).toBe('/data')
    expect(Object.keys(image.config.ExposedPorts ?? {})).toEqual(['8080/tcp'])
    expect(Object.keys(image.config.Volumes ?? {})).toEqual(['/data'])
    expect(image.config.Env).toContain('NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt')
    expect(image.config.Env).toContain('CREDENTIALS_DIRECTORY=/run/secrets')

    // No shell, no package manager: the top level is the executable and what it needs.
    expect(readdirSync(image.rootfs).sort()).toEqual(['data', 'etc', 'lib', 'lib64', 'medpanel', 'tmp'])
    const libraries = execFileSync('ldd', [executable.path], {encoding: 'utf8'}).match(/\/\S+/g) ?? []
    for (const library of libraries) expect(existsSync(join(image.rootfs, library)), library).toBe(true)
    expect(readFileSync(join(image.rootfs, 'etc/ssl/certs/ca-certificates.crt'), 'utf8')).toMatch(/^-----BEGIN CERTIFICATE-----/)
    expect(readFileSync(join(image.rootfs, 'etc/passwd'), 'utf8')).toContain('medpanel:x:10001:10001:')
    expect(readFileSync(join(image.rootfs, 'etc/group'), 'utf8')).toContain('medpanel:x:10001:')

    // Owners and modes as the layer carries them (the unpacked copy dropped the owners).
    const entries = new Map<string, {mode: string; owner: string}>()
    for (const layer of image.layers) for (const [path, entry] of listing(layer)) entries.set(path, entry)
    expect([...entries.keys()].filter((path) => /(^|\/)\.wh\./.test(path))).toEqual([])
    expect(entries.get('data')).toEqual({mode: 'drwx------', owner: '10001/10001'})
    expect(entries.get('tmp')).toEqual({mode: 'drwxrwxrwt', owner: '0/0'})
    expect(entries.get('medpanel')).toEqual({mode: '-rwxr-xr-x', owner: '0/0'})
  })

  it('refuses its default command without a public address, naming MEDPANEL_BASE_URL', () => {
    const result = cli(image.config.Cmd!, {}, launcher)
    expect(result.status).toBe(1)
    expect(result.stderr).toContain('give --base-url (or MEDPANEL_BASE_URL)')
  })

  it('takes the store key from a secret file in /run/secrets, and then writes no key file beside the store', () => {
    mkdirSync(join(image.rootfs, 'run/secrets'), {recursive: true})
    writeFileSync(join(image.rootfs, 'run/secrets/medpanel-secret-key'), `${randomBytes(32).toString('base64')}\n`, {mode: 0o400})
    try {
      const store = inside('/data/sealed.db')
      const registered = cli(
        [
          'register-client',
          '--db',
          store,
          '--name',
          'Sealed',
          '--url',
          'https://sealed.example',
          '--logo-url',
          'https://sealed.example/l.png',
          '--redirect-uri',
          'https://sealed.example/cb',
          '--json',
        ],
        {},
        launcher,
      )
      expect(registered.status, registered.stderr).toBe(0)
      expect(existsSync(join(image.rootfs, 'data/sealed.db'))).toBe(true)
      expect(existsSync(join(image.rootfs, 'data/sealed.db.key'))).toBe(false)
    } finally {
      rmSync(join(image.rootfs, 'run'), {recursive: true})
    }
  })

  it('serves the demo from /data: /healthz, a client_credentials sign-on, and an XML search with the API key', async () => {
    // The default command with its address made a loopback one for the test and its public
    // address from MEDPANEL_BASE_URL, as `-p PORT:8080 -e MEDPANEL_BASE_URL=…` would give it.
    const port = await freePort()
    const args = [...image.config.Cmd!]
    args[args.indexOf('--host') + 1] = '127.0.0.1'
    args[args.indexOf('--port') + 1] = String(port)
    args[args.indexOf('--db') + 1] = inside('/data/medpanel.db')
    const server = await startCli([...args, '--demo'], {MEDPANEL_BASE_URL: `http://localhost:${port}`}, launcher)
    servers.push(server)
    expect(server.url).toBe(`http://127.0.0.1:${port}`)
    // Its CA bundle was read: Node warns on stderr about one it cannot.
    expect(server.stderr()).not.toMatch(/extra certs/i)

    const health = await fetch(`${server.url}/healthz`)
    expect(health.status).toBe(200)
    // The issuer is the public address, and requests addressed to it are answered.
    const discovery = await fetch(`${server.url}/.well-known/oauth-authorization-server`, {headers: {host: `localhost:${port}`}})
    expect(discovery.status).toBe(200)
    expect(((await discovery.json()) as {issuer: string}).issuer).toBe(`http://localhost:${port}`)

    const basic = basicAuth(DEMO_CLIENT_ID, DEMO_CLIENT_SECRET)
    const token = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: {authorization: basic, 'content-type': 'application/x-www-form-urlencoded'},
      body: new URLSearchParams({grant_type: 'client_credentials', scope: 'pulses'}),
    })
    expect(token.status).toBe(200)
    const {access_token} = (await token.json()) as {access_token: string}
    const info = await fetch(`${server.url}/clients/info`, {headers: {authorization: `Bearer ${access_token}`}})
    expect(info.status).toBe(200)
    const introspection = await fetch(`${server.url}/oauth/introspect`, {
      method: 'POST',
      headers: {authorization: basic, 'content-type': 'application/x-www-form-urlencoded'},
      body: new URLSearchParams({token: access_token}),
    })
    expect(await introspection.json()).toMatchObject({active: true, client_id: DEMO_CLIENT_ID})

    // E: the demo's posts cover the two years up to now.
    const end = new Date(Math.floor(Date.now() / 1000) * 1000)
    const start = new Date(end.getTime() - 365 * 86_400_000)
    const stamp = (d: Date) => d.toISOString().replace('.000Z', 'Z')
    const query = new URLSearchParams([
      ['terms[]', 'sepsis'],
      ['start', stamp(start)],
      ['end', stamp(end)],
    ])
    const search = await fetch(`${server.url}/conversations/summary?${query}`, {
      headers: {accept: 'application/vnd.service-v1+xml', 'x-service-conversation-api-key': DEMO_API_KEY},
    })
    expect(search.status).toBe(200)
    expect(search.headers.get('content-type')).toMatch(/xml/)
    expect(await search.text()).toMatch(/^<\?xml[\s\S]*<summary-term><term>sepsis<\/term><matches>\d+<\/matches>/)

    // The store and its key file are in the image's /data, and SIGTERM drains and exits 0.
    expect(await server.stop()).toBe(0)
    expect(existsSync(join(image.rootfs, 'data/medpanel.db'))).toBe(true)
    expect(existsSync(join(image.rootfs, 'data/medpanel.db.key'))).toBe(true)
  })
})
