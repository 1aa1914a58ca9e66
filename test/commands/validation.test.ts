import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {cli, tempDir} from '../helpers/cli.js'
import {CORPUS} from '../interfaces/conversations/fixtures.js'

const refused = (args: string[], message: string | RegExp) => {
  const result = cli(args)
  expect(result.status, args.join(' ')).toBe(1)
  expect(result.stdout).toBe('')
  expect(result.stderr.trim().split('\n')).toHaveLength(1)
  if (typeof message === 'string') expect(result.stderr).toBe(`Error: ${message}\n`)
  else expect(result.stderr).toMatch(message)
}

describe('what the CLI refuses, and how it says so', () => {
  const dir = tempDir()
  const db = ['--db', join(dir, 'v.db')]
  const member = ['add-member', ...db, '--email', 'v@clinic.example', '--password', 'long enough password', '--last-name', 'B', '--specialty', 'Oncology']

  it('a PostgreSQL setting given for a SQLite store, as a flag or from the environment', () => {
    // A sqlite: URL, which the PostgreSQL run leaves as it is (it gives each --db a database).
    const sqlite = ['--database-url', `sqlite:${join(dir, 'v.db')}`]
    const why = (flag: string, variable: string) => `--${flag} (or ${variable}) applies to a PostgreSQL store: give --database-url postgres://… too, or leave it out`
    refused(['list-clients', ...sqlite, '--pool-size', '5'], why('pool-size', 'MEDPANEL_POOL_SIZE'))
    refused(['list-clients', ...sqlite, '--write-lanes', '2'], why('write-lanes', 'MEDPANEL_WRITE_LANES'))
    const fromEnvironment = cli(['list-clients', ...sqlite], {MEDPANEL_WRITE_LANES: '2'})
    expect([fromEnvironment.status, fromEnvironment.stderr]).toEqual([1, `Error: ${why('write-lanes', 'MEDPANEL_WRITE_LANES')}\n`])
  })

  it('a country outside ISO 3166-1 and control characters in names', () => {
    refused([...member, '--first-name', 'A', '--country', 'XX'], 'country: is not a country of the ISO 3166-1 list (US, CA, GB, …; see GET /balance/countries)')
    refused([...member, '--first-name', 'A\u001b[31m', '--country', 'US'], 'first_name: must not contain control characters (escape sequences, line breaks)')
  })

  it('a negative duration, a token lifetime past its maximum, a base URL that is not one', () => {
    refused(['push-project', ...db, '--project-id', 'P', '--name', 'N', '--duration', '-3', '--status', 'active', '--type', 'custom'], 'duration: must be greater than 0')
    refused(
      [
        'register-client',
        ...db,
        '--name',
        'N',
        '--url',
        'https://n.example',
        '--logo-url',
        'https://n.example/l.png',
        '--redirect-uri',
        'https://n.example/cb',
        '--token-ttl',
        '99999999999',
      ],
      /^Error: token_ttl: .*315360000/,
    )
    refused(
      ['serve', ...db, '--base-url', 'notaurl', '--port', '0'],
      /^Error: --base-url must be the service's public address, as http\(s\):\/\/host\[:port\] with no path \(got "notaurl"\)/,
    )
  })

  it('both --db and --database-url, and an unknown key in an imported file, named by its path', () => {
    refused(
      ['list-clients', ...db, '--database-url', `sqlite:${join(dir, 'v.db')}`],
      'give the store once: --db (or MEDPANEL_DB) or --database-url (or MEDPANEL_DATABASE_URL), not both',
    )
    const extra = structuredClone(CORPUS) as unknown as Record<string, unknown>[]
    ;(extra[1] as {post: Record<string, unknown>}).post.mood = 'sunny'
    const file = join(dir, 'extra.json')
    writeFileSync(file, JSON.stringify({conversations: extra}))
    refused(['import-posts', ...db, '--file', file], 'conversations[1].post.mood: is not a known field')
  })
})

describe('one rule for enumerated values: any case in, the canonical spelling out', () => {
  it('on the command line and over HTTP alike', async () => {
    const {cliJson} = await import('../helpers/cli.js')
    const {freshApp} = await import('../helpers/app.js')
    const {seedClients, seedMember, AUTH, PAYPAL_DETAILS} = await import('../interfaces/balance/setup.js')
    const {postCredit} = await import('../../src/interfaces/balance/service.js')
    const {getMemberRow} = await import('../../src/registry/service.js')
    const db = ['--db', join(tempDir(), 'case.db')]
    const member = cliJson<{user_id: number}>([
      'add-member',
      ...db,
      '--email',
      'c@clinic.example',
      '--password',
      'long enough password',
      '--first-name',
      'C',
      '--last-name',
      'D',
      '--country',
      'us',
      '--specialty',
      'Oncology',
    ])
    expect(cliJson(['credit', 'user_id', String(member.user_id), ...db, '--amount', '10', '--type', 'honorarium'])).toMatchObject({type: 'HONORARIUM'})
    expect(
      cliJson<{project: {status: string; project_type: string}}>([
        'push-project',
        ...db,
        '--project-id',
        'P',
        '--name',
        'N',
        '--duration',
        '5',
        '--status',
        'ACTIVE',
        '--type',
        'Real-Time',
      ]).project,
    ).toMatchObject({status: 'active', project_type: 'real-time'})

    const ctx = await freshApp()
    try {
      await seedClients(ctx.store, ctx.clock.now())
      const m = await seedMember(ctx.db, ctx.clock.now())
      await postCredit(ctx.db, await getMemberRow(ctx.db, m.user_id), {type: 'incentive', amount: '50'}, ctx.clock.now())
      const res = await ctx.app.request(`/balance/user_id/${m.user_id}/withdrawals`, {
        method: 'POST',
        headers: {...AUTH, 'content-type': 'application/json'},
        body: JSON.stringify({type: 'paypal', amount: 10, member_details: PAYPAL_DETAILS}),
      })
      expect(res.status).toBe(201)
      const {transaction_id: id} = (await res.json()) as {transaction_id: string}
      expect(await (await ctx.app.request(`/balance/transactions/${id}`, {headers: AUTH})).json()).toMatchObject({properties: {withdrawal_type: 'PAYPAL'}})
    } finally {
      await ctx.store.close()
    }
  })
})
