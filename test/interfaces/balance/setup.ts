import {addMember} from '../../../src/registry/service.js'
import {narrow, type StoreParts} from '../../../src/store/database.js'
import {findMemberBy} from '../../../src/registry/repository.js'
import type {MemberRow} from '../../../src/registry/tables.js'
import {npiFromBase} from '../../../src/lib/npi.js'
import type {Db} from '../../../src/schema.js'
import {freshApp, type TestContext} from '../../helpers/app.js'
import {registerTestClient} from '../../helpers/clients.js'
import {basicAuth} from '../../helpers/http-basic.js'

export const CLIENT = {id: 'balance-client', secret: 'balance-client-secret'}
export const AUTH = {authorization: basicAuth(CLIENT.id, CLIENT.secret)}

/** A client with the balance grant and one without; returns nothing, ids are fixed. */
export async function seedClients(store: StoreParts, now: Date): Promise<void> {
  await registerTestClient(store, {name: 'Balance partner', grants: ['balance']}, now, CLIENT)
  await registerTestClient(store, {name: 'Sign-on only', grants: ['signon'], redirect_uris: ['https://sign-on-only.example/cb']}, now, {
    id: 'signon-client',
    secret: 'signon-client-secret',
  })
}

let counter = 0
/** A member with a fresh email, NPI and ME number. */
export async function seedMember(db: Db, now: Date, overrides: {country?: string} = {}) {
  counter += 1
  const n = String(100000000 + counter * 7919).slice(0, 9)
  return addMember(
    narrow(db),
    {
      email: `doc${counter}-${Date.now()}@example.com`,
      password: 'correct horse battery',
      first_name: 'Ada',
      last_name: 'Lovelace',
      country: overrides.country ?? 'US',
      specialty: 'Cardiology',
      npi: npiFromBase(n),
      me: `0${n}1`,
    },
    now,
  )
}

export const PAYPAL_DETAILS = {first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com'}
export const CHECK_DETAILS = {
  first_name: 'Ada',
  last_name: 'Lovelace',
  address_line1: '1 Main St',
  city: 'Springfield',
  region: 'US-IL',
  postal_code: '62701',
  country: 'US',
}

/** A fresh app (helpers/app.ts) with one seeded member, as the ledger's own tests start each test. */
export interface LedgerContext extends TestContext {
  member: Awaited<ReturnType<typeof seedMember>>
  /** The member's row, read again (balances and sessions change it). */
  row: () => Promise<MemberRow>
  /** The app clock's time. */
  now: () => Date
}

export async function ledgerContext(): Promise<LedgerContext> {
  const ctx = await freshApp()
  const member = await seedMember(ctx.db, ctx.clock.now())
  return {...ctx, member, row: async () => (await findMemberBy(ctx.db, 'id', member.user_id))!, now: () => ctx.clock.now()}
}
