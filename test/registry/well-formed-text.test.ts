import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {AppError} from '../../src/errors.js'
import {id as partnerId} from '../../src/interfaces/partner/schema.js'
import {isWellFormedText} from '../../src/lib/unicode.js'
import {addMember} from '../../src/registry/service.js'
import {freshApp, type TestContext} from '../helpers/app.js'
import {rejectionOf} from '../helpers/rejection.js'
import {registerTestClient} from '../helpers/clients.js'

/*
 * Text that is not well-formed Unicode (a UTF-16 surrogate without its partner, which JSON can
 * carry as "\ud800") is refused wherever members', clients' and partners' text is taken, and
 * nothing is stored: it cannot be written as UTF-8.
 */

describe('isWellFormedText', () => {
  it('refuses a lone high or low surrogate, and keeps a pair', () => {
    for (const bad of ['\ud800', 'a\udc00', '\udbff\udbff', '\udc00\ud800']) expect(isWellFormedText(bad), JSON.stringify(bad)).toBe(false)
    for (const good of ['', 'Ana', 'Zoë', '\ud83d\ude00', '患者']) expect(isWellFormedText(good), good).toBe(true)
  })
})

describe('member and client fields', () => {
  let ctx: TestContext
  beforeEach(async () => {
    ctx = await freshApp()
  })
  afterEach(async () => ctx.store.close())

  const member = {email: 'ana@clinic.example', password: 'a long password', first_name: 'Ana', last_name: 'Ruiz', country: 'US', specialty: 'Oncology'}

  it('refuses a lone surrogate in a member name or e-mail, adding no one', async () => {
    for (const patch of [{first_name: 'Ana\ud800'}, {specialty: '\udc00'}, {email: 'ana\ud800@clinic.example'}]) {
      const error = await rejectionOf(addMember(ctx.db, {...member, ...patch}, ctx.clock.now()), AppError)
      expect(error.message, JSON.stringify(patch)).toMatch(/must be well-formed Unicode text/)
    }
    expect(await ctx.db.selectFrom('members').selectAll().execute()).toEqual([])
  })

  it("refuses a lone surrogate in a client's name", async () => {
    const error = await rejectionOf(registerTestClient(ctx.store, {name: 'Acme\ud800', redirect_uris: ['https://acme.example/cb']}, ctx.clock.now()), AppError)
    expect(error.message).toMatch(/name: must be well-formed Unicode text/)
  })

  it('refuses a lone surrogate in a pushed id', () => {
    expect(partnerId.safeParse('P-\ud800').success).toBe(false)
    expect(partnerId.safeParse('P-1').success).toBe(true)
  })
})
