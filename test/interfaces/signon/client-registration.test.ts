import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {createApp} from '../../../src/app.js'
import {ManualClock} from '../../../src/lib/clock.js'
import {issueRegistrationToken} from '../../../src/registry/dynamic-registration.js'
import {form, freshApp, type TestContext} from '../../helpers/app.js'
import {cli, cliJson, tempDir} from '../../helpers/cli.js'
import {openCliStore, storeFlags} from '../../helpers/store.js'

const ISSUER = 'http://localhost'

/** Client metadata a confidential sign-on client would send (RFC 7591 §2). */
const METADATA = {
  client_name: 'Cardio Notes',
  client_uri: 'https://cardio.example',
  logo_uri: 'https://cardio.example/logo.png',
  redirect_uris: ['https://cardio.example/callback'],
}

function json(method: string, body: unknown, token?: string): RequestInit {
  return {
    method,
    headers: {'content-type': 'application/json', ...(token === undefined ? {} : {authorization: `Bearer ${token}`})},
    body: JSON.stringify(body),
  }
}

function bearer(token: string, method = 'GET'): RequestInit {
  return {method, headers: {authorization: `Bearer ${token}`}}
}

describe('dynamic client registration (RFC 7591, RFC 7592)', () => {
  let ctx: TestContext
  beforeEach(async () => {
    ctx = await freshApp()
  })
  afterEach(async () => ctx.store.close())

  const issue = async (options: {expiresInSeconds?: number; uses?: number} = {}) => (await issueRegistrationToken(ctx.db, options, ctx.clock.now())).initial_access_token
  const register = (body: unknown, token?: string) => ctx.app.request('/oauth/register', json('POST', body, token))
  const clientCount = async () =>
    (
      await ctx.db
        .selectFrom('clients')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n

  it('is off until an operator issues an initial access token: not advertised, and 404', async () => {
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
      expect(await (await ctx.app.request(path)).json()).not.toHaveProperty('registration_endpoint')
    }
    const res = await register(METADATA, 'anything')
    expect(res.status).toBe(404)
    await issue()
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
      expect(await (await ctx.app.request(path)).json()).toMatchObject({registration_endpoint: `${ISSUER}/oauth/register`})
    }
  })

  it('closes again when the only token has expired or is used up', async () => {
    await issue({expiresInSeconds: 60})
    ctx.clock.advance(61)
    expect((await register(METADATA, 'x')).status).toBe(404)
    const once = await issue({uses: 1})
    const created = await register(METADATA, once)
    expect(created.status).toBe(201)
    expect(await (await ctx.app.request('/.well-known/openid-configuration')).json()).not.toHaveProperty('registration_endpoint')
    expect((await register(METADATA, once)).status).toBe(404)
    // The client registered before still manages itself.
    const {client_id, registration_access_token} = (await created.json()) as Record<string, string>
    expect((await ctx.app.request(`/oauth/register/${client_id}`, bearer(registration_access_token!))).status).toBe(200)
  })

  it('registers a confidential client that can then use the token endpoint', async () => {
    const token = await issue()
    const res = await register({...METADATA, grant_types: ['client_credentials'], redirect_uris: undefined, response_types: []}, token)
    expect(res.status).toBe(201)
    expect(res.headers.get('cache-control')).toBe('no-store')
    const body = (await res.json()) as Record<string, unknown>
    expect(body).toMatchObject({
      client_name: 'Cardio Notes',
      client_uri: 'https://cardio.example',
      logo_uri: 'https://cardio.example/logo.png',
      grant_types: ['client_credentials'],
      token_endpoint_auth_method: 'client_secret_basic',
      client_secret_expires_at: 0,
      client_id_issued_at: Math.floor(ctx.clock.now().getTime() / 1000),
    })
    expect(body.registration_client_uri).toBe(`${ISSUER}/oauth/register/${body.client_id}`)
    expect(typeof body.client_secret).toBe('string')
    expect(typeof body.registration_access_token).toBe('string')
    const grant = await ctx.app.request('/oauth/token', form({grant_type: 'client_credentials', client_id: String(body.client_id), client_secret: String(body.client_secret)}))
    expect(grant.status).toBe(200)
    expect(await grant.json()).toMatchObject({token_type: 'bearer', scope: 'pulses'})
  })

  it('registers a public client without a secret', async () => {
    const res = await register({...METADATA, token_endpoint_auth_method: 'none'}, await issue())
    expect(res.status).toBe(201)
    const body = (await res.json()) as Record<string, unknown>
    expect(body).toMatchObject({token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code']})
    expect(body).not.toHaveProperty('client_secret')
  })

  it('refuses a missing or wrong initial access token with 401 invalid_token, storing nothing', async () => {
    await issue()
    for (const token of [undefined, 'not-the-token']) {
      const res = await register(METADATA, token)
      expect(res.status).toBe(401)
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer .*error="invalid_token"/)
      expect(await res.json()).toMatchObject({error: 'invalid_token'})
    }
    expect(await clientCount()).toBe(0)
  })

  it('refuses a bad redirect URI with invalid_redirect_uri, storing nothing', async () => {
    const token = await issue({uses: 1})
    const res = await register({...METADATA, redirect_uris: ['http://cardio.example/callback']}, token)
    expect(res.status).toBe(400)
    const body = (await res.json()) as {error: string; error_description: string}
    expect(body.error).toBe('invalid_redirect_uri')
    expect(body.error_description).toMatch(/^redirect_uris.*https/)
    expect(body.error_description).not.toContain('\n')
    expect(await clientCount()).toBe(0)
    // The refused attempt spent no use of the token.
    expect((await register(METADATA, token)).status).toBe(201)
  })

  it('names the required fields that are missing with invalid_client_metadata', async () => {
    const res = await register({redirect_uris: METADATA.redirect_uris, client_name: 'X'}, await issue())
    expect(res.status).toBe(400)
    const body = (await res.json()) as {error: string; error_description: string}
    expect(body.error).toBe('invalid_client_metadata')
    expect(body.error_description).toMatch(/^client_uri, logo_uri: required/)
    expect(await clientCount()).toBe(0)
  })

  it('refuses an unsupported grant type and a body that is not JSON', async () => {
    const token = await issue()
    expect(await (await register({...METADATA, grant_types: ['implicit']}, token)).json()).toMatchObject({error: 'invalid_client_metadata'})
    const res = await ctx.app.request('/oauth/register', {method: 'POST', headers: {'content-type': 'application/json', authorization: `Bearer ${token}`}, body: '{'})
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({error: 'invalid_client_metadata'})
  })

  it('reads, replaces and deletes a client with its registration access token (RFC 7592)', async () => {
    const created = (await (await register(METADATA, await issue())).json()) as Record<string, string>
    const uri = `/oauth/register/${created.client_id}`
    const access = created.registration_access_token!

    const read = await ctx.app.request(uri, bearer(access))
    expect(read.status).toBe(200)
    expect(await read.json()).toMatchObject({client_id: created.client_id, client_name: 'Cardio Notes', redirect_uris: METADATA.redirect_uris})

    for (const wrong of [bearer(created.client_secret!), {}]) {
      const res = await ctx.app.request(uri, wrong)
      expect(res.status).toBe(401)
      expect(await res.json()).toMatchObject({error: 'invalid_token'})
    }

    const replaced = await ctx.app.request(
      uri,
      json('PUT', {...METADATA, client_id: created.client_id, client_name: 'Cardio Notes 2', redirect_uris: ['https://cardio.example/cb2']}, access),
    )
    expect(replaced.status).toBe(200)
    expect(await replaced.json()).toMatchObject({client_name: 'Cardio Notes 2', redirect_uris: ['https://cardio.example/cb2']})

    const bad = await ctx.app.request(uri, json('PUT', {...METADATA, redirect_uris: ['https://cardio.example/cb#frag']}, access))
    expect(bad.status).toBe(400)
    expect(await bad.json()).toMatchObject({error: 'invalid_redirect_uri'})
    expect(await (await ctx.app.request(uri, bearer(access))).json()).toMatchObject({redirect_uris: ['https://cardio.example/cb2']})

    const deleted = await ctx.app.request(uri, bearer(access, 'DELETE'))
    expect(deleted.status).toBe(204)
    expect((await ctx.app.request(uri, bearer(access))).status).toBe(401)
    const grant = await ctx.app.request('/oauth/token', form({grant_type: 'client_credentials', client_id: created.client_id!, client_secret: created.client_secret!}))
    expect(grant.status).toBe(401)
  })
})

describe('issue-registration-token', () => {
  it('prints the token once, opens registration, and the registered client is listed like any other', async () => {
    const file = join(tempDir(), 'dcr.db')
    const flags = storeFlags(file)
    const issued = cliJson<{initial_access_token: string; expires_at: string | null; uses: number | null}>([
      'issue-registration-token',
      ...flags,
      '--uses',
      '2',
      '--expires-in',
      '3600',
    ])
    expect(issued.uses).toBe(2)
    expect(issued.expires_at).not.toBeNull()
    expect(issued.initial_access_token).toMatch(/^[A-Za-z0-9_-]{40,}$/)

    const store = await openCliStore(file)
    try {
      // Only the digest is stored.
      const rows = await store.db.selectFrom('registration_tokens').selectAll().execute()
      expect(rows).toHaveLength(1)
      expect(JSON.stringify(rows)).not.toContain(issued.initial_access_token)
      const app = createApp({store, clock: new ManualClock(), log: () => {}})
      const res = await app.request('/oauth/register', json('POST', METADATA, issued.initial_access_token))
      expect(res.status).toBe(201)
      const body = (await res.json()) as {client_id: string}
      const listed = cliJson<{client_id: string; name: string}[]>(['list-clients', ...flags])
      expect(listed).toContainEqual(expect.objectContaining({client_id: body.client_id, name: 'Cardio Notes'}))
    } finally {
      await store.close()
    }
  })

  it('refuses a bad flag value with one Error line and exit 1', () => {
    const flags = storeFlags(join(tempDir(), 'dcr-bad.db'))
    const result = cli(['issue-registration-token', ...flags, '--uses', '0'])
    expect(result.status).toBe(1)
    expect(result.stderr.trim().split('\n')).toHaveLength(1)
    expect(result.stderr).toMatch(/^Error: .*uses/)
  })
})
