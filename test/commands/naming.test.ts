import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {cliJson, tempDir} from '../helpers/cli.js'

/**
 * The naming scheme every --json output keeps (docs: operations.md, "One naming scheme for scripts"), checked
 * on the outputs of a realistic scenario rather than command by command.
 */
const MONEY = new Set(['amount', 'available_funds', 'current_balance', 'available_funds_after'])
const TYPES: Record<string, 'string' | 'number' | 'boolean'> = {client_id: 'string', user_id: 'number', transaction_id: 'string', api_key: 'string', client_secret: 'string'}
/** Names the scheme replaced: each thing has one name everywhere. */
const RETIRED = new Set(['partner', 'key_id', 'member_id', 'country', 'specialty'])

function check(value: unknown, where: string, problems: string[]): void {
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) check(item, `${where}[${i}]`, problems)
    return
  }
  if (value === null || typeof value !== 'object') return
  for (const [key, child] of Object.entries(value)) {
    const at = `${where}.${key}`
    if (RETIRED.has(key)) problems.push(`${at}: a retired name`)
    if (MONEY.has(key) && child !== null && typeof child !== 'number') problems.push(`${at}: money must be a JSON number, got ${JSON.stringify(child)}`)
    const type = TYPES[key]
    if (type && child !== null && typeof child !== type) problems.push(`${at}: must be a ${type}, got ${JSON.stringify(child)}`)
    check(child, at, problems)
  }
}

/** The names and types `outputs` break, each as "COMMAND.path: what is wrong". */
function problemsOf(outputs: Record<string, unknown>): string[] {
  const problems: string[] = []
  for (const [name, output] of Object.entries(outputs)) check(output, name, problems)
  return problems
}

describe('one naming scheme across every --json output', () => {
  // One realistic scenario on one store, a few commands a test, in order: each test checks the
  // outputs of the commands it ran (names and types agree: client_id, user_id, transaction_id,
  // money as numbers, no retired names).
  const dir = tempDir()
  const db = ['--db', join(dir, 'names.db')]
  const run = (args: string[]) => cliJson([...args, ...db])
  let partner: {client_id: string}
  let member: {user_id: number}
  const setup: Record<string, unknown> = {}

  beforeAll(() => {
    setup.demo = run(['demo'])
    partner = setup['register-client'] = run([
      'register-client',
      '--name',
      'P',
      '--url',
      'https://p.example',
      '--logo-url',
      'https://p.example/l.png',
      '--grant',
      'partner,signon',
      '--redirect-uri',
      'https://p.example/cb',
      '--partner-url',
      'http://127.0.0.1:9',
      '--partner-username',
      'u',
      '--partner-password',
      'p',
    ])
    member = setup['add-member'] = run([
      'add-member',
      '--email',
      'n@clinic.example',
      '--password',
      'long enough password',
      '--first-name',
      'N',
      '--last-name',
      'M',
      '--country',
      'US',
      '--specialty',
      'Oncology',
    ])
  })

  it('demo, register-client and add-member: names and types agree, money as numbers', () => {
    expect(problemsOf(setup)).toEqual([])
    expect((setup.demo as {parts: {balance: {accounts: {available_funds: unknown}[]}}}).parts.balance.accounts[0]!.available_funds).toBe(178)
  })

  it('show-member, list-members, show-client and list-clients: names and types agree', () => {
    const outputs = {
      'show-member': run(['show-member', String(member.user_id)]),
      'list-members': run(['list-members']),
      'show-client': run(['show-client', partner.client_id]),
      'list-clients': run(['list-clients']),
    }
    expect(problemsOf(outputs)).toEqual([])
  })

  it('issue-token, revoke-consent and issue-api-key: names and types agree', () => {
    const outputs = {
      'issue-token': run(['issue-token', '--member', String(member.user_id), '--client', partner.client_id]),
      'revoke-consent': run(['revoke-consent', String(member.user_id), '--client', partner.client_id]),
      'issue-api-key': run(['issue-api-key', 'demo-client']),
    }
    expect(problemsOf(outputs)).toEqual([])
  })

  it('credit, debit, withdraw and update-transaction: names and types agree, money as numbers', () => {
    const details = join(dir, 'details.json')
    writeFileSync(details, JSON.stringify({first_name: 'N', last_name: 'M', address_line1: '1 Main St', city: 'Springfield', region: 'US-IL', postal_code: '62701', country: 'US'}))
    const outputs: Record<string, unknown> = {
      credit: run(['credit', 'user_id', String(member.user_id), '--amount', '100.5', '--type', 'honorarium']),
      debit: run(['debit', 'user_id', String(member.user_id), '--amount', '0.5']),
    }
    const withdrawal = run(['withdraw', 'user_id', String(member.user_id), '--type', 'check', '--amount', '30', '--details', details]) as {transaction_id: string}
    outputs.withdraw = withdrawal
    outputs['update-transaction'] = run(['update-transaction', withdrawal.transaction_id, '--status', 'completed'])
    expect(problemsOf(outputs)).toEqual([])
  })

  it('show-balance, list-transactions and list-withdrawal-types: names and types agree, and the exact money a withdrawal leaves', () => {
    const outputs = {
      'show-balance': run(['show-balance', 'user_id', String(member.user_id)]),
      'list-transactions': run(['list-transactions', 'user_id', String(member.user_id)]),
      'list-withdrawal-types': run(['list-withdrawal-types', 'user_id', String(member.user_id)]),
    }
    expect(problemsOf(outputs)).toEqual([])
    // The money a withdrawal leaves, exactly: 100.5 - 0.5 - 30 - 2.50 fee.
    expect(outputs['show-balance']).toMatchObject({available_funds: 67.5})
  })

  it('push-project, list-deliveries, list-pulses and status: names and types agree', () => {
    const outputs = {
      'push-project': run(['push-project', '--project-id', 'P1', '--name', 'Names', '--duration', '5', '--status', 'active', '--type', 'custom', '--partner', partner.client_id]),
      'list-deliveries': run(['list-deliveries']),
      'list-pulses': run(['list-pulses']),
      status: run(['status']),
    }
    expect(problemsOf(outputs)).toEqual([])
  })
})
