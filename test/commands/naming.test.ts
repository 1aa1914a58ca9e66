import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
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

describe('one naming scheme across every --json output', () => {
  it('names and types agree: client_id, user_id, transaction_id, money as numbers, no retired names', () => {
    const dir = tempDir()
    const db = ['--db', join(dir, 'names.db')]
    const outputs: Record<string, unknown> = {}
    const run = (name: string, args: string[]) => (outputs[name] = cliJson([...args, ...db]))
    run('demo', ['demo'])
    const partner = run('register-client', [
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
    ]) as {client_id: string}
    const member = run('add-member', [
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
    ]) as {user_id: number}
    run('show-member', ['show-member', String(member.user_id)])
    run('list-members', ['list-members'])
    run('show-client', ['show-client', partner.client_id])
    run('list-clients', ['list-clients'])
    run('issue-token', ['issue-token', '--member', String(member.user_id), '--client', partner.client_id])
    run('revoke-consent', ['revoke-consent', String(member.user_id), '--client', partner.client_id])
    run('issue-api-key', ['issue-api-key', 'demo-client'])
    run('credit', ['credit', 'user_id', String(member.user_id), '--amount', '100.5', '--type', 'honorarium'])
    run('debit', ['debit', 'user_id', String(member.user_id), '--amount', '0.5'])
    const details = join(dir, 'details.json')
    writeFileSync(details, JSON.stringify({first_name: 'N', last_name: 'M', address_line1: '1 Main St', city: 'Springfield', region: 'US-IL', postal_code: '62701', country: 'US'}))
    const withdrawal = run('withdraw', ['withdraw', 'user_id', String(member.user_id), '--type', 'check', '--amount', '30', '--details', details]) as {transaction_id: string}
    run('update-transaction', ['update-transaction', withdrawal.transaction_id, '--status', 'completed'])
    run('show-balance', ['show-balance', 'user_id', String(member.user_id)])
    run('list-transactions', ['list-transactions', 'user_id', String(member.user_id)])
    run('list-withdrawal-types', ['list-withdrawal-types', 'user_id', String(member.user_id)])
    run('push-project', ['push-project', '--project-id', 'P1', '--name', 'Names', '--duration', '5', '--status', 'active', '--type', 'custom', '--partner', partner.client_id])
    run('list-deliveries', ['list-deliveries'])
    run('list-pulses', ['list-pulses'])
    run('status', ['status'])

    const problems: string[] = []
    for (const [name, output] of Object.entries(outputs)) check(output, name, problems)
    expect(problems).toEqual([])
    // The money a withdrawal leaves, exactly: 100.5 - 0.5 - 30 - 2.50 fee.
    expect(outputs['show-balance']).toMatchObject({available_funds: 67.5})
    expect((outputs.demo as {parts: {balance: {accounts: {available_funds: unknown}[]}}}).parts.balance.accounts[0]!.available_funds).toBe(178)
    // Some twenty-five CLI runs in a row: about 10 s alone, near 30 s on a loaded machine.
  }, 120_000)
})
