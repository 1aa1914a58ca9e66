import {spawnSync} from 'node:child_process'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {CookieBrowser} from '../helpers/oidc-browser.js'
import {discover, expectedAtHash, memberClaims, signOn, startProvider, type Provider, type RelyingParty} from '../helpers/oidc.js'

/** Debian's Python, which has python3-authlib (the `python3` on PATH may be a pyenv shim without it). */
const PYTHON = '/usr/bin/python3'
const SCRIPT = fileURLToPath(new URL('./oidc_authlib_validate.py', import.meta.url))

const probe = spawnSync(PYTHON, ['-c', 'import authlib'], {encoding: 'utf8'})
const authlib = probe.status === 0
// CI installs python3-authlib (.ci/run): there a missing Authlib is a failure, never a skip.
if (!authlib && process.env.CI) throw new Error(`${PYTHON} cannot import authlib in CI: .ci/run installs python3-authlib`)
if (!authlib) {
  console.warn(`oidc-authlib.test.ts skipped: ${PYTHON} cannot import authlib (${(probe.stderr || probe.error?.message || '').trim()}); apt-get install python3-authlib`)
}

interface Validated {
  header: {alg: string; kid: string; typ: string}
  claims: Record<string, unknown>
}

/** Runs the Python relying party; answers its exit status and what it printed. */
function authlibValidate(issuer: string, idToken: string, clientId: string, nonce: string, accessToken?: string) {
  const run = spawnSync(PYTHON, [SCRIPT, issuer, idToken, clientId, nonce, ...(accessToken === undefined ? [] : [accessToken])], {encoding: 'utf8', timeout: 30_000})
  if (run.status !== 0 && run.status !== 1) throw new Error(`${SCRIPT} exited ${run.status}: ${run.stderr}`)
  return {status: run.status, output: JSON.parse(run.stdout) as Validated & {error?: string}}
}

/**
 * A Python relying party: Authlib (authlib.jose) validates the ID tokens medpanel signs, RS256 and
 * ES256, with the key set it reads from jwks_uri itself. The tokens come from the real consent
 * page and token endpoint through openid-client.
 */
describe.skipIf(!authlib)('ID tokens validated by Authlib (Python)', () => {
  let provider: Provider
  const tokens = new Map<string, {rp: RelyingParty; idToken: string; accessToken: string; nonce: string}>()

  beforeAll(async () => {
    provider = await startProvider()
    for (const alg of ['RS256', 'ES256'] as const) {
      const rp = provider.register(`Python ${alg} RP`, alg)
      const {tokens: granted, nonce} = await signOn(await discover(provider, rp), rp, new CookieBrowser(provider.server.url))
      tokens.set(alg, {rp, idToken: granted.id_token!, accessToken: granted.access_token, nonce})
    }
  })
  afterAll(async () => provider?.server.stop())

  for (const alg of ['RS256', 'ES256'] as const) {
    it(`${alg}: Authlib checks the signature, iss, aud, nonce, exp, iat and at_hash, and reads the member's claims`, () => {
      const {rp, idToken, accessToken, nonce} = tokens.get(alg)!
      const {status, output} = authlibValidate(provider.server.url, idToken, rp.client_id, nonce, accessToken)
      expect(output.error).toBeUndefined()
      expect(status).toBe(0)
      expect(output.header).toMatchObject({alg, typ: 'JWT', kid: expect.any(String)})
      expect(output.claims).toMatchObject({...memberClaims(provider.sub), iss: provider.server.url, aud: rp.client_id, nonce, at_hash: expectedAtHash(accessToken)})
      expect((output.claims.exp as number) - (output.claims.iat as number)).toBe(3600)
    })

    it(`${alg}: Authlib refuses the token for another nonce, another audience, another access token, or with a changed claim`, () => {
      const {rp, idToken, accessToken, nonce} = tokens.get(alg)!
      expect(authlibValidate(provider.server.url, idToken, rp.client_id, `${nonce}x`).output.error).toMatch(/nonce/)
      expect(authlibValidate(provider.server.url, idToken, 'another-client', nonce).output.error).toMatch(/aud/)
      expect(authlibValidate(provider.server.url, idToken, rp.client_id, nonce, `${accessToken}x`).output.error).toMatch(/at_hash/)
      const [header, payload, signature] = idToken.split('.')
      const changed = Buffer.from(JSON.stringify({...JSON.parse(Buffer.from(payload!, 'base64url').toString()), sub: '999999'})).toString('base64url')
      const forged = authlibValidate(provider.server.url, [header, changed, signature].join('.'), rp.client_id, nonce)
      expect(forged.status).toBe(1)
      expect(forged.output.error).toMatch(/BadSignatureError/)
    })
  }
})
