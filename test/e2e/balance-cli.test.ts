import {join} from 'node:path'
import {writeFileSync} from 'node:fs'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {cli, cliJson, startCli, tempDir, type RunningCli} from '../helpers/cli.js'
import {basicAuth} from '../helpers/http-basic.js'

describe('balance commands and a running server', () => {
  // Every test gets its own store holding one member (user_id 1, NPI 1234567893, ME 03512345671)
  // and nothing else, so each runs alone (-t) or in any order.
  let dir: string
  let db: string
  let store: string[]
  beforeEach(() => {
    dir = tempDir()
    db = join(dir, 'balance.db')
    store = ['--db', db]
    cliJson([
      'add-member',
      '--email',
      'c@example.com',
      '--password',
      'long enough pw',
      '--first-name',
      'Cy',
      '--last-name',
      'Ng',
      '--country',
      'US',
      '--specialty',
      'Oncology',
      '--npi',
      '1234567893',
      '--me',
      '03512345671',
      ...store,
    ])
  })

  // Credits, withdrawals and statuses from the command line, printing exact amounts.
  it('credits by ME number, and show-balance by NPI prints the exact sum: 0.1 three times is 0.3', () => {
    for (let i = 0; i < 3; i++) expect(cli(['credit', 'me', '03512345671', '--amount', '0.1', '--type', 'INCENTIVE', ...store]).status).toBe(0)
    const summary = cli(['show-balance', 'npi', '1234567893', '--json', ...store])
    expect(JSON.parse(summary.stdout)).toEqual({available_funds: 0.3, currency: 'USD', preferred_status: false})
    expect(summary.stdout).toContain('"available_funds": 0.3,')
  })

  /** Credits 0.30, withdraws 0.25 to charity with details from a file, and returns the withdrawal. */
  const withdrawFromCredit = () => {
    cliJson(['credit', 'user_id', '1', '--amount', '0.3', '--type', 'INCENTIVE', ...store])
    const details = join(dir, 'details.json')
    writeFileSync(details, JSON.stringify({first_name: 'Cy', last_name: 'Ng', email: 'cy@example.com'}))
    return cliJson(['withdraw', 'user_id', '1', '--type', 'charity', '--amount', '0.25', '--details', details, ...store])
  }

  it('withdraws, printing the exact funds left, moves the withdrawal to Completed, and list-transactions shows it', () => {
    const tx = withdrawFromCredit()
    expect(tx).toMatchObject({type: 'WITHDRAWAL', amount: -0.25, status: 'Processing', survey_id: null, fee: null, available_funds_after: 0.05})
    expect(tx.transaction_id).toBe(tx.id)
    expect(cliJson(['update-transaction', tx.id, '--status', 'Completed', ...store]).status).toBe('Completed')
    const human = cli(['list-transactions', 'user_id', '1', ...store])
    expect(human.status).toBe(0)
    expect(human.stdout).toMatch(/WITHDRAWAL\s+Completed\s+-0\.25 USD\s+0\.05 USD/)
  })

  it('refuses a Completed transaction going back to Processing, and a debit past the funds, with one Error line', () => {
    const tx = withdrawFromCredit()
    expect(cliJson(['update-transaction', tx.id, '--status', 'Completed', ...store]).status).toBe('Completed')
    const refused = cli(['update-transaction', tx.id, '--status', 'Processing', ...store])
    expect(refused.status).toBe(1)
    expect(refused.stderr).toMatch(/^Error: a Completed transaction cannot become Processing/)
    const overdraw = cli(['debit', 'user_id', '1', '--amount', '1', ...store])
    expect(overdraw.status).toBe(1)
    expect(overdraw.stderr).toMatch(/^Error: insufficient funds/)
  })

  it('without a terminal, withdraw needs --type and credit needs --amount, each named in one Error line', () => {
    const noTty = cli(['withdraw', 'user_id', '1', '--amount', '0.01', ...store])
    expect(noTty.stderr).toMatch(/^Error: missing required flag --type/)
    const noAmount = cli(['credit', 'user_id', '1', '--type', 'INCENTIVE', ...store])
    expect([noAmount.status, noAmount.stderr]).toEqual([1, 'Error: missing required flag --amount (a terminal would be asked for it)\n'])
  })

  it('restricts a type for a person and lists what is left', () => {
    expect(cliJson(['restrict-withdrawal-type', 'user_id', '1', '--type', 'PAYPAL', ...store])).toEqual({
      user_id: 1,
      type: 'PAYPAL',
      restricted: true,
      restricted_types: ['PAYPAL'],
    })
    const types = cliJson<Array<{type: string; fee: unknown}>>(['list-withdrawal-types', 'user_id', '1', ...store])
    expect(types.map((t) => t.type)).not.toContain('PAYPAL')
    expect(types.find((t) => t.type === 'CHECK')!.fee).toEqual({amount: 2.5, currency: 'USD'})
  })

  it('refuses to restrict a type that does not exist, and lifts a restriction with --lift', () => {
    cliJson(['restrict-withdrawal-type', 'user_id', '1', '--type', 'PAYPAL', ...store])
    expect(cli(['restrict-withdrawal-type', 'user_id', '1', '--type', 'NOPE', ...store]).stderr).toMatch(/^Error: type: "NOPE" is not a withdrawal type/)
    expect(cliJson(['restrict-withdrawal-type', 'user_id', '1', '--type', 'PAYPAL', '--lift', ...store])).toEqual({
      user_id: 1,
      type: 'PAYPAL',
      restricted: false,
      restricted_types: [],
    })
  })

  describe('against serve', () => {
    // Two processes on one store file: only SQLite's write lock (BEGIN IMMEDIATE) keeps them apart.
    let client: {client_id: string; client_secret: string}
    let server: RunningCli | undefined
    let second: RunningCli | undefined
    beforeEach(async () => {
      client = cliJson([
        'register-client',
        '--name',
        'Payer',
        '--url',
        'https://payer.example.com',
        '--logo-url',
        'https://payer.example.com/l.png',
        '--grant',
        'balance',
        ...store,
      ])
      cliJson(['credit', 'user_id', '1', '--amount', '100.05', ...store])
      ;[server, second] = await Promise.all([startCli(['serve', '--port', '0', ...store]), startCli(['serve', '--port', '0', ...store])])
    })
    afterEach(async () => {
      await Promise.all([server?.stop(), second?.stop()])
      server = second = undefined
    })

    it('lets 200 concurrent withdrawals through two servers succeed exactly as far as funds allow, never below zero', async () => {
      const before = (await (await fetch(`${server!.url}/balance/user_id/1/summary`, {headers: {authorization: basicAuth(client.client_id, client.client_secret)}})).json()) as {
        available_funds: number
      }
      expect(before.available_funds).toBe(100.05)
      const body = JSON.stringify({type: 'CHARITY', amount: 0.75, member_details: {first_name: 'Cy', last_name: 'Ng', email: 'cy@example.com'}})
      const statuses = await Promise.all(
        Array.from({length: 200}, (_, i) =>
          fetch(`${(i % 2 ? second : server)!.url}/balance/user_id/1/withdrawals`, {
            method: 'POST',
            headers: {authorization: basicAuth(client.client_id, client.client_secret), 'content-type': 'application/json'},
            body,
          }).then(async (res) => {
            await res.arrayBuffer()
            return res.status
          }),
        ),
      )
      const created = statuses.filter((s) => s === 201).length
      // 100.05 / 0.75 = 133 withdrawals, leaving 0.30
      expect(created).toBe(133)
      expect(statuses.filter((s) => s === 422).length).toBe(67)
      const after = await (await fetch(`${server!.url}/balance/npi/1234567893/summary`, {headers: {authorization: basicAuth(client.client_id, client.client_secret)}})).text()
      expect(after).toContain('"available_funds":0.3,')
      const list = cliJson<Array<{type: string; current_balance: number}>>(['list-transactions', '--limit', '100000', 'user_id', '1', ...store])
      expect(list.filter((t) => t.type === 'WITHDRAWAL')).toHaveLength(133)
      expect(list.at(-1)!.current_balance).toBe(0.3)
      expect(Math.min(...list.map((t) => t.current_balance))).toBeGreaterThanOrEqual(0)
    })
  })
})
