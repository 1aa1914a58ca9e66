import {Decimal} from 'decimal.js'
import {statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {npiFromBase} from '../../src/lib/npi.js'
import {cliJson, startCli, tempDir, type RunningCli} from '../helpers/cli.js'
import {makeStoreFile} from '../helpers/store.js'
import {cliAsync} from '../interfaces/partner/helpers.js'
import {basicAuth, clientBasic} from '../helpers/http-basic.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function kill(server: RunningCli): Promise<void> {
  const exited = new Promise((resolve) => server.child.once('exit', resolve))
  process.kill(server.child.pid!, 'SIGKILL')
  await exited
}

interface Tx {
  id: string
  amount: number
  type: string
  status: string
}

/** Every account's balance equals the fold of its ledger; returns each account's transaction ids. */
async function verifyLedger(url: string, auth: string, members: number[]): Promise<Map<string, number>> {
  const seen = new Map<string, number>()
  for (const id of members) {
    const summary = await (await fetch(`${url}/balance/user_id/${id}/summary`, {headers: {authorization: auth}})).text()
    const available = new Decimal(/"available_funds":(-?[\d.]+)/.exec(summary)![1]!)
    const list = (await (await fetch(`${url}/balance/user_id/${id}/transactions`, {headers: {authorization: auth}})).json()) as Tx[]
    let balance = new Decimal(0)
    for (const tx of list) {
      seen.set(tx.id, (seen.get(tx.id) ?? 0) + 1)
      const amount = new Decimal(tx.amount)
      if (amount.isPositive() && tx.status === 'Completed') balance = balance.plus(amount)
      if (amount.isNegative() && ['Processing', 'OnHold', 'Completed'].includes(tx.status)) balance = balance.plus(amount)
    }
    expect(available.toString(), `member ${id}`).toBe(balance.toString())
    expect(available.isNegative()).toBe(false)
  }
  return seen
}

describe('crashes, repeated', () => {
  describe('withdrawals at 20 concurrent through 5 SIGKILLs: ledgers balance, every 201 exists exactly once, a backup taken mid-soak restores balanced', () => {
    // One store, a round of withdrawals and a SIGKILL a test, in order; the last two check what is left.
    const dir = tempDir('medpanel-soak-')
    const db = ['--db', join(dir, 'soak.db')]
    let auth: string
    const members: number[] = []
    const acknowledged: string[] = []
    const backupFile = join(dir, 'mid-soak-backup.db')

    beforeAll(() => {
      const client = cliJson<{client_id: string; client_secret: string}>([
        'register-client',
        ...db,
        '--name',
        'Soak',
        '--url',
        'https://soak.example',
        '--logo-url',
        'https://soak.example/l.png',
        '--grant',
        'balance',
      ])
      auth = clientBasic(client)
      for (let i = 0; i < 4; i++) {
        const member = cliJson<{user_id: number}>([
          'add-member',
          ...db,
          '--email',
          `soak${i}@clinic.example`,
          '--password',
          'soak password 1',
          '--first-name',
          'Sam',
          '--last-name',
          'Oak',
          '--country',
          'US',
          '--specialty',
          'Cardiology',
        ])
        cliJson(['credit', 'user_id', String(member.user_id), ...db, '--amount', '100000', '--type', 'HONORARIUM'])
        members.push(member.user_id)
      }
    })

    for (let round = 0; round < 5; round++) {
      const what = round === 2 ? ', an online backup taken meanwhile' : ''
      it(`round ${round + 1} of 5: serve answers 20 concurrent withdrawals with 201 until SIGKILLed${what}`, async () => {
        const server = await startCli(['serve', '--port', '0', '--no-worker', ...db])
        let stopped = false
        const loop = async (n: number) => {
          while (!stopped) {
            try {
              const res = await fetch(`${server.url}/balance/user_id/${members[n % members.length]}/withdrawals`, {
                method: 'POST',
                headers: {authorization: auth, 'content-type': 'application/json'},
                body: JSON.stringify({type: 'PAYPAL', amount: 1.25, member_details: {first_name: 'Sam', last_name: 'Oak', email: 'sam@clinic.example'}}),
              })
              const body = (await res.json()) as {transaction_id?: string}
              if (res.status === 201) acknowledged.push(body.transaction_id!)
              else throw new Error(`unexpected ${res.status}: ${JSON.stringify(body)}`)
            } catch (error) {
              if (stopped || /fetch failed|ECONNRESET|socket|other side closed|connection/i.test(String((error as Error).cause ?? error))) return
              throw error
            }
          }
        }
        const loops = Array.from({length: 20}, (_, n) => loop(n))
        await sleep(600)
        if (round === 2) {
          // An online backup while 20 writers go on.
          const backup = await cliAsync(['backup', ...db, '--to', backupFile, '--json'])
          expect(backup.status, backup.stderr).toBe(0)
        }
        await sleep(300)
        stopped = true
        await kill(server)
        await Promise.all(loops)
      })
    }

    it('after the kills, every ledger balances and every acknowledged withdrawal exists exactly once', async () => {
      expect(acknowledged.length).toBeGreaterThan(100)
      const last = await startCli(['serve', '--port', '0', '--no-worker', ...db])
      try {
        const seen = await verifyLedger(last.url, auth, members)
        for (const id of acknowledged) expect(seen.get(id), id).toBe(1)
      } finally {
        await last.stop()
      }
    })

    it('the backup taken mid-soak restores to a store whose ledger balances', async () => {
      const restoredDb = ['--db', join(dir, 'restored.db')]
      const restored = await cliAsync(['restore', ...restoredDb, '--from', backupFile, '--json'])
      expect(restored.status, restored.stderr).toBe(0)
      const fromBackup = await startCli(['serve', '--port', '0', '--no-worker', ...restoredDb])
      try {
        const seen = await verifyLedger(fromBackup.url, auth, members)
        expect(seen.size).toBeGreaterThan(members.length)
      } finally {
        await fromBackup.stop()
      }
    })
  })

  it('restore refuses a store that a running serve has open, and changes nothing', async () => {
    const dir = tempDir('medpanel-restore-')
    const db = ['--db', join(dir, 'live.db')]
    await makeStoreFile(join(dir, 'live.db'))
    const backup = await cliAsync(['backup', ...db, '--to', join(dir, 'b.db'), '--json'])
    expect(backup.status, backup.stderr).toBe(0)
    // The copy holds what the store holds: its owner's alone, like its key file.
    expect(statSync(join(dir, 'b.db')).mode & 0o777).toBe(0o600)
    const server = await startCli(['serve', '--port', '0', '--no-worker', ...db])
    try {
      const refused = await cliAsync(['restore', ...db, '--from', join(dir, 'b.db'), '--force'])
      expect(refused.status).toBe(1)
      expect(refused.stderr).toMatch(/^Error: .*live\.db is in use by another process \(a running serve\?\); stop it before restoring\n$/)
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
    } finally {
      await server.stop()
    }
  })

  describe('pushes through 5 SIGKILLs mid-delivery: partner-serve ends with exactly the final state, in order', () => {
    // One partner and one outbox of 400 pushes; a serve started and SIGKILLed mid-delivery a test, in order.
    const dir = tempDir('medpanel-push-soak-')
    const db = ['--db', join(dir, 'push.db')]
    let partner: RunningCli
    const all = Array.from({length: 400}, (_, i) => {
      const npi = npiFromBase(String(300000000 + i))
      return {npi, honoraria: 20 + i, url: `https://survey.example/s?npi=${npi}`}
    })
    const auth = {authorization: basicAuth('soak', 'soak-pw')}
    const received = async () => {
      const res = await fetch(`${partner.url}/v1/projects/S1/quotas/Q1/members`, {headers: auth})
      return res.status === 200 ? ((await res.json()) as unknown[]) : []
    }
    let killsDuringDelivery = 0
    /** The serve started after the kills, which the last two tests use and the last stops. */
    let final: RunningCli | undefined

    beforeAll(async () => {
      partner = await startCli(['partner-serve', '--port', '0', '--username', 'soak', '--password', 'soak-pw', '--db', join(dir, 'partner.db')])
      const client = cliJson<{client_id: string}>([
        'register-client',
        ...db,
        '--name',
        'Soak Partner',
        '--url',
        'https://p.example',
        '--logo-url',
        'https://p.example/l.png',
        '--grant',
        'partner',
        '--partner-url',
        partner.url,
        '--partner-username',
        'soak',
        '--partner-password',
        'soak-pw',
      ])
      const file = join(dir, 'members.json')
      writeFileSync(file, JSON.stringify(all))
      cliJson(['push-project', ...db, '--project-id', 'S1', '--name', 'Soak', '--duration', '5', '--status', 'active', '--type', 'custom', '--partner', client.client_id])
      writeFileSync(join(dir, 'quota.json'), JSON.stringify({quota_id: 'Q1', status: 'open', limit: 1000, incidence_rate: 0.5, closes_at: '2027-01-01T00:00:00Z'}))
      cliJson(['push-quota', ...db, '--project-id', 'S1', '--file', join(dir, 'quota.json')])
      // One member per request: hundreds of deliveries, so each kill lands mid-way.
      cliJson(['push-members', ...db, '--project-id', 'S1', '--quota-id', 'Q1', '--file', file, '--chunk', '1'])
    })
    afterAll(async () => {
      await final?.stop()
      await partner?.stop()
    })

    for (let round = 0; round < 5; round++) {
      it(`round ${round + 1} of 5: a serve delivering the outbox is SIGKILLed once 20 more members arrived, and the store opens again`, async () => {
        const server = await startCli(['serve', '--port', '0', ...db])
        const before = (await received()).length
        for (let i = 0; i < 200 && (await received()).length < before + 20; i++) await sleep(10)
        await kill(server)
        const pending = cliJson<unknown[]>(['list-deliveries', '--limit', '100000', ...db, '--status', 'pending'])
        if (pending.length > 0) killsDuringDelivery++
      })
    }

    it('at least three of the five kills landed while deliveries were pending', () => {
      expect(killsDuringDelivery).toBeGreaterThanOrEqual(3)
    })

    it('the next serve delivers the rest: partner-serve ends with exactly the final state, in the order it was pushed', async () => {
      final = await startCli(['serve', '--port', '0', ...db])
      let members: unknown[] = []
      for (let i = 0; i < 600; i++) {
        members = await received()
        if (members.length === all.length) break
        await sleep(50)
      }
      // Exactly the final state, in the order it was pushed: no member lost or doubled.
      expect(members).toEqual(all)
    })

    it('and once its outbox is drained, not one delivery failed', async () => {
      try {
        let pending: unknown[] = []
        for (let i = 0; i < 600; i++) {
          pending = cliJson<unknown[]>(['list-deliveries', '--limit', '100000', ...db, '--status', 'pending'])
          if (pending.length === 0) break
          await sleep(50)
        }
        expect(pending).toEqual([])
        expect(cliJson<unknown[]>(['list-deliveries', ...db, '--status', 'failed'])).toEqual([])
      } finally {
        await final?.stop()
        final = undefined
      }
    })
  })
})
