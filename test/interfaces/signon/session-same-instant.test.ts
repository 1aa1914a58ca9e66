import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {updateMember, type RegisteredClient} from '../../../src/registry/service.js'
import {freshApp, type TestContext} from '../../helpers/app.js'
import {authorizeParams, authorizeUrl, setupClientAndMember, signIn} from './flow.js'

/**
 * A password change or a deactivation ends the sign-in sessions begun before it, and also one
 * begun in the same millisecond: the store keeps times to the millisecond, so a sign-in that
 * could have used the old password must not survive the change it raced with.
 */
describe('sign-in sessions and a change in the same millisecond', () => {
  let ctx: TestContext
  let client: RegisteredClient
  let memberId: number
  beforeEach(async () => {
    ctx = await freshApp()
    // The member is added at the clock's start: a sign-in in that same millisecond is good.
    const setup = await setupClientAndMember(ctx)
    client = setup.client
    memberId = setup.member.user_id
  })
  afterEach(async () => ctx.store.close())

  const consentShown = async (headers: Record<string, string>) =>
    (await (await ctx.app.request(authorizeUrl(authorizeParams(client.client_id)), {headers})).text()).includes('name="decision"')

  it('a sign-in in the millisecond the member was added opens the consent page', async () => {
    const {jar} = await signIn(ctx, authorizeParams(client.client_id))
    expect(await consentShown(jar.header())).toBe(true)
  })

  it('a password change in the millisecond of the sign-in ends that session', async () => {
    ctx.clock.advance(5)
    const {jar} = await signIn(ctx, authorizeParams(client.client_id))
    expect(await consentShown(jar.header())).toBe(true)
    await updateMember(ctx.db, memberId, {password: 'another long password'}, ctx.clock.now())
    expect(await consentShown(jar.header())).toBe(false)
  })

  it('a deactivation undone in the millisecond of the sign-in still ends that session', async () => {
    ctx.clock.advance(5)
    const {jar} = await signIn(ctx, authorizeParams(client.client_id))
    await updateMember(ctx.db, memberId, {active: false}, ctx.clock.now())
    await updateMember(ctx.db, memberId, {active: true}, ctx.clock.now())
    expect(await consentShown(jar.header())).toBe(false)
  })
})
