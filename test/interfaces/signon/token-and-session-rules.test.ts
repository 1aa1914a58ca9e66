import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {AppError} from '../../../src/errors.js'
import {requireClient, type ClientCredentials} from '../../../src/interfaces/signon/client-auth.js'
import {clientCredentials} from '../../../src/interfaces/signon/flows/client-credentials.js'
import {introspect, revoke} from '../../../src/interfaces/signon/introspection.js'
import {issueToken} from '../../../src/interfaces/signon/issue-token.js'
import {checkLogoutRequest} from '../../../src/interfaces/signon/logout.js'
import {memberInfo} from '../../../src/interfaces/signon/resources.js'
import {closeSession, openSession, sessionMember} from '../../../src/interfaces/signon/sessions.js'
import {signIn} from '../../../src/interfaces/signon/sign-in.js'
import {type RegisteredClient, updateMember} from '../../../src/registry/service.js'
import {freshApp, type TestContext} from '../../helpers/app.js'
import {PASSWORD, setupClientAndMember} from './flow.js'
import {registerTestClient} from '../../helpers/clients.js'

/*
 * Sign-on's service beyond the authorize request and the code exchange (those have their own
 * edge tests): tokens an operator mints, the client_credentials grant, the shape of an
 * introspection, sign-in with an unknown e-mail, member info, and RP-initiated logout's checks.
 * Found by mutation testing (docs/architecture.md, "Mutation testing"); expected values written out.
 */

let ctx: TestContext
let client: RegisteredClient
let memberId: number

beforeEach(async () => {
  ctx = await freshApp()
  const setup = await setupClientAndMember(ctx, {post_logout_redirect_uris: ['https://client.example/bye']})
  client = setup.client
  memberId = setup.member.user_id
})
afterEach(async () => ctx.store.close())

const now = () => ctx.clock.now()
const credentials = () => ({clientId: client.client_id, clientSecret: client.client_secret})
const refusal = async (promise: Promise<unknown> | (() => unknown)) => {
  let error: unknown
  try {
    await (typeof promise === 'function' ? promise() : promise)
  } catch (e) {
    error = e
  }
  if (!(error instanceof AppError)) throw new Error(`expected an AppError, got ${String(error)}`)
  return {code: error.code, message: error.message}
}
/** The client_credentials grant as the token endpoint runs it. */
const exchangeClientCredentials = (creds: ClientCredentials, scope: string | undefined, at: Date) =>
  clientCredentials.exchange({
    ...ctx.store,
    form: {scope},
    authenticate: () => requireClient(ctx.store, creds, at),
    dpopJkt: null,
    issuer: 'http://localhost',
    now: at,
  })
const pulsesClient = async () => registerTestClient(ctx.store, {name: 'Pulse owner', grants: ['pulses']}, now())

describe('tokens an operator mints (issue-token)', () => {
  it('refuses an expired client, a client without sign-on, an inactive member and scopes that are unknown or none', async () => {
    const owner = await pulsesClient()
    expect(await refusal(issueToken(ctx.db, memberId, owner.client_id, now()))).toEqual({
      code: 'bad_request',
      message: `client ${owner.client_id} does not have the signon grant, so it cannot hold members' tokens (update-client --grant to add it)`,
    })
    expect(await refusal(issueToken(ctx.db, memberId, client.client_id, now(), ['profile', 'admin', 'x']))).toEqual({
      code: 'bad_request',
      message: "unknown scope: admin x (a member's token may have profile, openid, email)",
    })
    expect(await refusal(issueToken(ctx.db, memberId, client.client_id, now(), []))).toEqual({
      code: 'bad_request',
      message: "a member's token needs at least one scope of profile, openid, email",
    })
    await updateMember(ctx.db, memberId, {active: false}, now())
    expect(await refusal(issueToken(ctx.db, memberId, client.client_id, now()))).toEqual({code: 'bad_request', message: `member ${memberId} is not active`})
    await ctx.db.updateTable('clients').set({expired_at: now().toISOString()}).where('id', '=', client.client_id).execute()
    expect(await refusal(issueToken(ctx.db, memberId, client.client_id, now()))).toEqual({code: 'bad_request', message: `client ${client.client_id} has expired`})
  })

  it('mints a token with each scope once', async () => {
    const minted = await issueToken(ctx.db, memberId, client.client_id, now(), ['profile', 'openid', 'profile'])
    expect(minted.scope).toBe('profile openid')
  })
})

describe('the client_credentials grant', () => {
  it('is only for clients with the pulses grant, takes its scopes split on spaces, once each, and refuses any other', async () => {
    expect(await refusal(exchangeClientCredentials(credentials(), undefined, now()))).toEqual({
      code: 'unauthorized_client',
      message: 'client_credentials is only for clients with the pulses grant',
    })
    const owner = await pulsesClient()
    const mine = {clientId: owner.client_id, clientSecret: owner.client_secret}
    expect((await exchangeClientCredentials(mine, undefined, now())).scope).toBe('pulses')
    expect((await exchangeClientCredentials(mine, ' pulses  pulses ', now())).scope).toBe('pulses')
    expect(await refusal(exchangeClientCredentials(mine, 'pulses profile', now()))).toEqual({code: 'invalid_scope', message: 'unknown scope: profile'})
  })
})

describe('introspection and revocation', () => {
  it("answers a member's token with its fields, and no exp when it never expires", async () => {
    const minted = await issueToken(ctx.db, memberId, client.client_id, now())
    const answer = await introspect(ctx.store, credentials(), minted.access_token, now())
    expect(answer).toEqual({
      active: true,
      scope: 'profile',
      client_id: client.client_id,
      token_type: 'bearer',
      iat: Math.floor(now().getTime() / 1000),
      exp: expect.any(Number),
      sub: String(memberId),
    })
    await ctx.db.updateTable('access_tokens').set({expires_at: null}).execute()
    expect(await introspect(ctx.store, credentials(), minted.access_token, now())).not.toHaveProperty('exp')
    const wider = await issueToken(ctx.db, memberId, client.client_id, now(), ['profile', 'openid'])
    expect(await introspect(ctx.store, credentials(), wider.access_token, now())).toMatchObject({active: true, scope: 'profile openid'})
  })

  it("answers a client's own token without sub, and another client's token as inactive", async () => {
    const owner = await pulsesClient()
    const mine = {clientId: owner.client_id, clientSecret: owner.client_secret}
    const token = (await exchangeClientCredentials(mine, undefined, now())).access_token
    const answer = await introspect(ctx.store, mine, token, now())
    expect(answer).toMatchObject({active: true, scope: 'pulses', client_id: owner.client_id, token_type: 'bearer'})
    expect(answer).not.toHaveProperty('sub')
    expect(await introspect(ctx.store, credentials(), token, now())).toEqual({active: false})
    expect(await introspect(ctx.store, credentials(), 'no-such-token', now())).toEqual({active: false})
  })

  it('refuses introspection and revocation without a token', async () => {
    expect(await refusal(introspect(ctx.store, credentials(), undefined, now()))).toEqual({code: 'invalid_request', message: 'token is required'})
    expect(await refusal(revoke(ctx.store, credentials(), undefined, now()))).toEqual({code: 'invalid_request', message: 'token is required'})
  })
})

describe('sign-in and sessions', () => {
  it('refuses an unknown e-mail in the same words as a wrong password', async () => {
    const expected = {code: 'access_denied', message: 'e-mail or password is not correct'}
    expect(await refusal(signIn(ctx.db, 'nobody@clinic.example', PASSWORD, {clock: ctx.clock}))).toEqual(expected)
    expect(await refusal(signIn(ctx.db, 'ana@clinic.example', 'wrong password', {clock: ctx.clock}))).toEqual(expected)
    expect((await signIn(ctx.db, 'ana@clinic.example', PASSWORD, {clock: ctx.clock})).id).toBe(memberId)
  })

  it('signs out a browser that had no session without error', async () => {
    await expect(closeSession(ctx.db, undefined, now())).resolves.toBeUndefined()
  })

  it("ends a session whose member is no longer active or changed the password after it began, even where the member's row says its sessions were never ended (a row written by hand or by an earlier release)", async () => {
    const session = await openSession(ctx.db, memberId, undefined, now())
    expect((await sessionMember(ctx.db, session, now()))?.member.id).toBe(memberId)
    await ctx.db.updateTable('members').set({active: 0, sessions_ended_at: null}).where('id', '=', memberId).execute()
    expect(await sessionMember(ctx.db, session, now())).toBeUndefined()
    await ctx.db.updateTable('members').set({active: 1}).where('id', '=', memberId).execute()
    expect((await sessionMember(ctx.db, session, now()))?.member.id).toBe(memberId)
    ctx.clock.advance(5)
    await ctx.db.updateTable('members').set({password_changed_at: now().toISOString(), sessions_ended_at: null}).where('id', '=', memberId).execute()
    expect(await sessionMember(ctx.db, session, now())).toBeUndefined()
  })
})

describe('member info', () => {
  it('refuses a token that acts for no member, and one without the profile scope, each with its challenge', async () => {
    const noMember = {member: undefined, scopes: ['pulses']} as unknown as Parameters<typeof memberInfo>[0]
    const noProfile = {member: {first_name: 'Ana'}, scopes: ['openid']} as unknown as Parameters<typeof memberInfo>[0]
    for (const [token, code, message, challenge] of [
      [noMember, 'invalid_token', 'The access token does not act for a member', {scheme: 'Bearer', error: 'invalid_token'}],
      [noProfile, 'insufficient_scope', 'The access token lacks the profile scope', {scheme: 'Bearer', error: 'insufficient_scope', scope: 'profile'}],
    ] as const) {
      let error: unknown
      try {
        memberInfo(token)
      } catch (e) {
        error = e
      }
      expect(error).toBeInstanceOf(AppError)
      expect({code: (error as AppError).code, message: (error as AppError).message, challenge: (error as AppError).challenge}).toEqual({code, message, challenge})
    }
  })
})

describe('RP-initiated logout', () => {
  const issuer = 'http://localhost'
  it('refuses an unknown client_id, and a post_logout_redirect_uri with no client to check it against or not registered for it', async () => {
    expect(await refusal(checkLogoutRequest(ctx.db, {client_id: 'no-such-client'}, issuer, now()))).toEqual({code: 'invalid_request', message: 'unknown client_id'})
    expect(await refusal(checkLogoutRequest(ctx.db, {post_logout_redirect_uri: 'https://client.example/bye'}, issuer, now()))).toEqual({
      code: 'invalid_request',
      message: 'post_logout_redirect_uri needs an id_token_hint or a client_id to say whose it is',
    })
    expect(await refusal(checkLogoutRequest(ctx.db, {client_id: client.client_id, post_logout_redirect_uri: 'https://client.example/elsewhere'}, issuer, now()))).toEqual({
      code: 'invalid_request',
      message: "post_logout_redirect_uri is not registered for this application, nor one of its redirect URIs or their sites' roots",
    })
  })

  it('goes back to a registered URI with the state, and nowhere when none is asked', async () => {
    const back = await checkLogoutRequest(ctx.db, {client_id: client.client_id, post_logout_redirect_uri: 'https://client.example/bye', state: 's 1'}, issuer, now())
    expect(back.client?.id).toBe(client.client_id)
    expect(back.destination).toBe('https://client.example/bye?state=s+1')
    expect((await checkLogoutRequest(ctx.db, {client_id: client.client_id}, issuer, now())).destination).toBeUndefined()
    expect(await checkLogoutRequest(ctx.db, {}, issuer, now())).toEqual({client: undefined, subject: undefined, destination: undefined})
  })
})
