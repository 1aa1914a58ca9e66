import * as client from 'openid-client'
import {createRemoteJWKSet, decodeJwt, jwtVerify} from 'jose'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cliJson, freePort, memberRegistration, type RunningCli, startCli, tempDir} from '../helpers/cli.js'
import {LogoutReceiver} from '../helpers/logout-receiver.js'
import {CookieBrowser} from '../helpers/oidc-browser.js'
import {clientRegistration, MEMBER, signOn} from '../helpers/oidc.js'

const EVENT = 'http://schemas.openid.net/event/backchannel-logout'

/**
 * OpenID Connect Back-Channel Logout against a real `serve` (its worker on): openid-client v6 signs
 * the member in and logs them out (RP-initiated), and the client's back-channel endpoint, a
 * loopback server that is down at first, gets the logout token on a retry and verifies it against
 * the served JWKS with jose, as a relying party must. A second client that got no ID token in that
 * session hears nothing.
 */
describe('back-channel logout with openid-client and a real serve', () => {
  const db = join(tempDir('medpanel-bcl-'), 'bcl.db')
  let server: RunningCli
  let health: {client_id: string; client_secret: string}
  let downPort: number
  const receiver = new LogoutReceiver()
  const bystander = new LogoutReceiver()
  const redirectUri = 'https://health.example/callback'

  const register = (name: string, logoutUri: string) =>
    cliJson<{client_id: string; client_secret: string}>(clientRegistration(db, name, redirectUri, ['--backchannel-logout-uri', logoutUri, '--backchannel-logout-session-required']))

  beforeAll(async () => {
    cliJson(memberRegistration(['--db', db], {email: MEMBER.email, password: MEMBER.password}))
    // The client's endpoint is down: nothing listens on its port until the test starts it.
    downPort = await freePort()
    health = register('Health Partner', `http://127.0.0.1:${downPort}/backchannel-logout`)
    await bystander.start()
    register('Bystander', bystander.url)
    server = await startCli(['serve', '--db', db, '--port', '0', '--host', '127.0.0.1'])
  })
  afterAll(async () => {
    await server?.stop()
    await receiver.stop()
    await bystander.stop()
  })

  it('delivers a verifiable logout token naming the ID token sid once the client is back up', async () => {
    const config = await client.discovery(new URL(server.url), health.client_id, health.client_secret, undefined, {execute: [client.allowInsecureRequests]})
    expect(config.serverMetadata()).toMatchObject({backchannel_logout_supported: true, backchannel_logout_session_supported: true})
    const browser = new CookieBrowser(server.url)
    const rp = {...health, alg: 'RS256' as const, redirectUri, postLogoutRedirectUri: ''}
    const {tokens} = await signOn(config, rp, browser, {scope: 'openid profile offline_access'})
    const sid = tokens.claims()!.sid as string
    expect(sid).toBeTruthy()
    // A refresh keeps the session's sid.
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!)
    expect(decodeJwt(refreshed.id_token!).sid).toBe(sid)

    const loggedOut = await browser.request(client.buildEndSessionUrl(config, {id_token_hint: refreshed.id_token!}))
    expect(loggedOut.status).toBe(200)
    // The first attempt finds nobody listening; the worker logs it and tries again later.
    await stderrShows(server, /logout \S+ to \S+ -> network error: ECONNREFUSED/)
    await receiver.start(downPort)
    const token = await receiver.first()

    const {payload, protectedHeader} = await jwtVerify(token, createRemoteJWKSet(new URL(`${server.url}/oauth/jwks`)), {
      issuer: server.url,
      audience: health.client_id,
      typ: 'logout+jwt',
      requiredClaims: ['iat', 'jti', 'sid', 'sub', 'events'],
    })
    expect(protectedHeader.alg).toBe('RS256')
    expect(payload.events).toEqual({[EVENT]: {}})
    expect(payload.sid).toBe(sid)
    expect(payload.sub).toBe(tokens.claims()!.sub)
    expect(payload).not.toHaveProperty('nonce')
    expect(receiver.malformed).toBe(0)
    // The bystander got no ID token in that session: it was never told.
    expect(bystander.tokens).toEqual([])
  })
})

/** Resolves once the server's stderr has shown `pattern`, looking again at each line it writes. */
function stderrShows(running: RunningCli, pattern: RegExp): Promise<void> {
  return new Promise((resolve) => {
    const look = () => {
      if (!pattern.test(running.stderr())) return
      running.child.stderr!.off('data', look)
      resolve()
    }
    running.child.stderr!.on('data', look)
    look()
  })
}
