import type {Kysely} from 'kysely'
import {DEMO_CLIENT_SECRET, type DemoPart} from '../../demo-data.js'
import {npiFromBase} from '../../lib/npi.js'
import {findMemberBy, findMemberByEmail} from '../../registry/repository.js'
import {addMember} from '../../registry/service.js'
import type {MemberRow} from '../../registry/tables.js'
import type {BalanceView as Database} from './tables.js'
import * as repo from './repository.js'
import {createWithdrawal, getSummary, postCredit, restrictWithdrawalType, setPreferredStatus, updateTransactionStatus} from './service.js'

const DAY = 86_400_000

interface Step {
  daysAgo: number
  run: (db: Kysely<Database>, member: MemberRow, at: Date) => Promise<unknown>
}

const credit = (daysAgo: number, type: string, amount: string, survey_id?: string): Step => ({
  daysAgo,
  run: (db, member, at) => postCredit(db, member, {type, amount, survey_id, properties: survey_id ? {project_name: `Demo study ${survey_id}`} : {}}, at),
})

const withdraw = (daysAgo: number, type: string, amount: string, member_details: Record<string, string>, finalStatus?: string): Step => ({
  daysAgo,
  run: async (db, member, at) => {
    const {created} = await createWithdrawal(db, member, {type, amount, member_details}, {now: at})
    if (finalStatus) await updateTransactionStatus(db, created.transaction_id, finalStatus, new Date(at.getTime() + DAY))
  },
})

/** Extra demo members (the shared demo doctor is user_id 1), each with a history. */
const PEOPLE = [
  {
    email: 'priya.raman@medpanel.test',
    first_name: 'Priya',
    last_name: 'Raman',
    country: 'US',
    specialty: 'Neurology',
    npi: npiFromBase('161803398'),
    me: '04812345679',
    preferred: false,
    restrict: [] as string[],
    history: [
      credit(60, 'HONORARIUM', '320.00', 'P-2040'),
      credit(45, 'HONORARIUM', '85.75', 'P-2077'),
      withdraw(
        30,
        'ACH',
        '200.00',
        {
          first_name: 'Priya',
          last_name: 'Raman',
          email: 'priya.raman@example.com',
          phone_number: '+1 415-555-0134',
          address_line1: '500 Market St',
          city: 'San Francisco',
          region: 'US-CA',
          postal_code: '94105',
          country: 'US',
        },
        'Completed',
      ),
      credit(3, 'CREDIT_ADJUSTMENT', '12.50'),
    ],
  },
  {
    email: 'lukas.becker@medpanel.test',
    first_name: 'Lukas',
    last_name: 'Becker',
    country: 'DE',
    specialty: 'Dermatology',
    npi: null,
    me: null,
    preferred: false,
    restrict: ['CHECK'],
    history: [
      credit(20, 'INCENTIVE', '40.00'),
      credit(10, 'HONORARIUM', '60.00', 'P-3001'),
      withdraw(5, 'PAYPAL', '25.00', {first_name: 'Lukas', last_name: 'Becker', email: 'lukas.becker@example.de'}, 'Cancelled'),
    ],
  },
]

const DEMO_DOCTOR_HISTORY: Step[] = [
  credit(90, 'HONORARIUM', '150.50', 'P-1001'),
  credit(75, 'INCENTIVE', '25.00'),
  credit(40, 'HONORARIUM', '75.00', 'P-1002'),
  withdraw(30, 'PAYPAL', '40.00', {first_name: 'Dana', last_name: 'Whitfield', email: 'dana.whitfield@example.com'}, 'Completed'),
  withdraw(2, 'CHECK', '30.00', {
    first_name: 'Dana',
    last_name: 'Whitfield',
    address_line1: '221 Elm Street',
    city: 'Springfield',
    region: 'US-IL',
    postal_code: '62704',
    country: 'US',
  }),
]

/** Plays a history once: a member whose account already has transactions is left alone. */
async function play(db: Kysely<Database>, member: MemberRow, steps: Step[], now: Date): Promise<void> {
  if ((await repo.listTransactionRows(db, member.id)).length > 0) return
  for (const step of steps) await step.run(db, member, new Date(now.getTime() - step.daysAgo * DAY))
}

/** Balances with history for the demo doctor and two more members, one preferred, one with a restricted type. */
export const balanceDemoPart: DemoPart = {
  name: 'balance',
  async seed(db, {baseUrl, now, clientId, memberId}) {
    const doctor = (await findMemberBy(db, 'id', memberId))!
    await play(db, doctor, DEMO_DOCTOR_HISTORY, now)
    await setPreferredStatus(db, doctor, true, now)
    const members: MemberRow[] = [doctor]
    for (const person of PEOPLE) {
      let row = await findMemberByEmail(db, person.email)
      if (!row) {
        const {preferred, restrict, history, ...fields} = person
        await addMember(db, {...fields, password: 'demo-password'}, now)
        row = (await findMemberByEmail(db, person.email))!
      }
      await play(db, row, person.history, now)
      for (const type of person.restrict) await restrictWithdrawalType(db, row, type, false, now)
      members.push(row)
    }

    const accounts = []
    for (const m of members) {
      const summary = await getSummary(db, m)
      accounts.push({user_id: m.id, npi: m.npi, me: m.me, name: `${m.first_name} ${m.last_name}`, available_funds: summary.available_funds, currency: summary.currency})
    }
    const latest = (await repo.listTransactionRows(db, doctor.id)).at(-1)
    const u = `-u ${clientId}:${DEMO_CLIENT_SECRET}`
    const b = `${baseUrl}/balance`
    const lines = [
      `curl -s ${u} ${b}/user_id/${doctor.id}/summary`,
      `curl -s ${u} ${b}/npi/${doctor.npi ?? npiFromBase('123456789')}/transactions`,
      `curl -s ${u} ${b}/user_id/${doctor.id}/withdrawal_types`,
      `curl -s ${u} ${b}/user_id/${doctor.id}/withdrawals -H 'Content-Type: application/json' -H 'Idempotency-Key: demo-1' -d '{"type":"PAYPAL","amount":10.50,"member_details":{"first_name":"Dana","last_name":"Whitfield","email":"dana.whitfield@example.com"}}'`,
      ...(latest ? [`curl -s ${u} ${b}/transactions/${latest.id}`] : []),
      `curl -s ${u} ${b}/countries`,
      `curl -s ${u} ${b}/countries/US/regions`,
    ]
    return {info: {accounts}, lines}
  },
}
