import {statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {cli, cliJson, partnerRegistration, tempDir} from '../helpers/cli.js'

const oneLineError = (result: {status: number; stdout: string; stderr: string}, pattern: RegExp) => {
  expect(result.status).toBe(1)
  expect(result.stdout).toBe('')
  expect(result.stderr.trim().split('\n')).toHaveLength(1)
  expect(result.stderr).toMatch(pattern)
}

describe('no silent data loss from the CLI', () => {
  it('refuses an empty --db, MEDPANEL_DB or --database-url instead of writing a store nobody finds again', () => {
    const client = ['register-client', '--name', 'X', '--url', 'https://x.example', '--logo-url', 'https://x.example/l.png', '--redirect-uri', 'https://x.example/cb', '--json']
    oneLineError(cli([...client, '--db', '']), /^Error: --db \(or MEDPANEL_DB\) is empty/)
    oneLineError(cli(client, {MEDPANEL_DB: ''}), /^Error: MEDPANEL_DB is set but empty/)
    oneLineError(cli([...client, '--database-url', '']), /^Error: --database-url \(or MEDPANEL_DATABASE_URL\) is empty/)
  })

  describe('restore asks (or needs --force) before replacing a store, and keeps the store it replaced, with its key', () => {
    // One store with a member, a backup of it, then a credit the backup lacks; the tests run in order.
    const dir = tempDir()
    const db = ['--db', join(dir, 'medpanel.db')]
    let savedAs: string
    beforeAll(() => {
      cliJson([
        'add-member',
        ...db,
        '--email',
        'kept@clinic.example',
        '--password',
        'long-enough-1',
        '--first-name',
        'K',
        '--last-name',
        'Ept',
        '--country',
        'US',
        '--specialty',
        'Oncology',
      ])
      cliJson(['backup', ...db, '--to', join(dir, 'backup.db')])
      // A credit made after the backup: the restore would lose it, but for the copy kept.
      cliJson(['credit', 'user_id', '1', ...db, '--amount', '12.5', '--type', 'INCENTIVE'])
    })

    it('without --force, refuses in one line that says where the replaced store would be saved, and changes nothing', () => {
      oneLineError(
        cli(['restore', ...db, '--from', join(dir, 'backup.db')]),
        /^Error: restore replaces the store .*medpanel\.db: give --force to go ahead \(it is saved first as .*medpanel\.before-restore-\d{8}T\d{6}Z\.db\)/,
      )
      expect(cliJson(['show-balance', 'user_id', '1', ...db]).available_funds).toBe(12.5)
    })

    it('with --force, restores the backup and saves the store it replaced, owner-only, with its key', () => {
      const restored = cliJson(['restore', ...db, '--from', join(dir, 'backup.db'), '--force'], {MEDPANEL_NOW: '2026-11-28T12:45:00Z'})
      savedAs = restored.replaced_saved_as
      expect(savedAs).toBe(join(dir, 'medpanel.before-restore-20261128T124500Z.db'))
      expect(statSync(savedAs).mode & 0o777).toBe(0o600)
      expect(statSync(`${savedAs}.key`).mode & 0o777).toBe(0o600)
      expect(cliJson(['show-balance', 'user_id', '1', ...db]).available_funds).toBe(0)
    })

    it('the saved store opens with its own key and still holds the credit', () => {
      expect(cliJson(['show-balance', 'user_id', '1', '--db', savedAs]).available_funds).toBe(12.5)
    })

    it('a restore into a place where no store is asks nothing and saves nothing', () => {
      expect(cliJson(['restore', '--db', join(dir, 'fresh.db'), '--from', join(dir, 'backup.db')]).replaced_saved_as).toBeNull()
    })
  })

  describe('push-members refuses an empty or header-only file unless --allow-empty, queueing nothing', () => {
    const dir = tempDir()
    const db = ['--db', join(dir, 'm.db')]
    let before: number
    beforeAll(() => {
      cliJson([...partnerRegistration(db, 'http://127.0.0.1:9'), '--partner-username', 'u', '--partner-password', 'p'])
      cliJson(['push-project', ...db, '--project-id', 'P1', '--name', 'X', '--duration', '5', '--status', 'active', '--type', 'custom'])
      writeFileSync(join(dir, 'quota.json'), JSON.stringify({quota_id: 'Q1', status: 'open', limit: 5, incidence_rate: 0.5, closes_at: '2027-01-01T00:00:00Z'}))
      cliJson(['push-quota', ...db, '--project-id', 'P1', '--file', join(dir, 'quota.json')])
      before = cliJson<unknown[]>(['list-deliveries', ...db]).length
    })

    // One test per empty file.
    for (const [name, content] of [
      ['empty.csv', ''],
      ['header.csv', 'npi,honoraria,url\n'],
      ['empty.json', '[]'],
    ] as const) {
      it(`refuses ${name} in one line naming it, and queues nothing`, () => {
        const file = join(dir, name)
        writeFileSync(file, content)
        oneLineError(
          cli(['push-members', ...db, '--project-id', 'P1', '--quota-id', 'Q1', '--file', file, '--json']),
          new RegExp(`^Error: .*${name.replace('.', '\\.')}.*(no members|allow-empty)`),
        )
        expect(cliJson<unknown[]>(['list-deliveries', ...db]).length).toBe(before)
      })
    }

    it('pushes an empty member list with --allow-empty', () => {
      writeFileSync(join(dir, 'empty.json'), '[]')
      const emptied = cliJson<{members: number; total: number}>([
        'push-members',
        ...db,
        '--project-id',
        'P1',
        '--quota-id',
        'Q1',
        '--file',
        join(dir, 'empty.json'),
        '--allow-empty',
      ])
      expect(emptied).toMatchObject({members: 0, total: 0})
    })
  })

  it('issue-token refuses a client without the signon grant, and token info refuses such member tokens', () => {
    const db = ['--db', join(tempDir(), 't.db')]
    const client = cliJson<{client_id: string}>([
      'register-client',
      ...db,
      '--name',
      'C',
      '--url',
      'https://c.example',
      '--logo-url',
      'https://c.example/l.png',
      '--grant',
      'balance',
    ])
    const member = cliJson<{user_id: number}>([
      'add-member',
      ...db,
      '--email',
      'm@clinic.example',
      '--password',
      'member password',
      '--first-name',
      'M',
      '--last-name',
      'N',
      '--country',
      'US',
      '--specialty',
      'Oncology',
    ])
    oneLineError(cli(['issue-token', ...db, '--member', String(member.user_id), '--client', client.client_id, '--json']), /^Error: client \S+ does not have the signon grant/)
  })
})

describe('register-client and strict OAuth libraries', () => {
  it('prints no warning for a client without a token lifetime: OpenID requests answer without expires_in', () => {
    const db = ['--db', join(tempDir(), 'ttl.db')]
    const base = ['register-client', ...db, '--url', 'https://n.example', '--logo-url', 'https://n.example/l.png', '--redirect-uri', 'https://n.example/cb', '--json']
    const forever = cli([...base, '--name', 'Forever'])
    expect(forever.status).toBe(0)
    expect(JSON.parse(forever.stdout)).toMatchObject({token_ttl: null})
    expect(forever.stderr).not.toMatch(/never expire|expires_in|--token-ttl/)
  })
})

describe('stores the operator may only read, and files that are not stores', () => {
  it('serves read commands from a read-only store, refuses writes naming it, and names a non-store file', async () => {
    const {chmodSync, writeFileSync: write} = await import('node:fs')
    const {spawnSync} = await import('node:child_process')
    const {cliArgv} = await import('../helpers/cli.js')
    const dir = tempDir()
    chmodSync(dir, 0o755)
    const file = join(dir, 'readonly.db')
    cliJson(['register-client', '--db', file, '--name', 'R', '--url', 'https://r.example', '--logo-url', 'https://r.example/l.png', '--redirect-uri', 'https://r.example/cb'])
    chmodSync(file, 0o400)
    // In a user namespace the process keeps its owner but loses the power to override file modes:
    // the 0400 store is read-only for it, as for an operator without write permission.
    const asNobody = (args: string[]) => spawnSync('unshare', ['--user', ...cliArgv(args)], {encoding: 'utf8', env: process.env})
    const list = asNobody(['list-clients', '--db', file, '--json'])
    if (/unshare/.test(list.stderr) && list.status !== 0) throw new Error(`user namespaces are not allowed here: ${list.stderr}`)
    expect(list.status, list.stderr).toBe(0)
    expect(JSON.parse(list.stdout)).toHaveLength(1)
    const write1 = asNobody([
      'register-client',
      '--db',
      file,
      '--name',
      'W',
      '--url',
      'https://w.example',
      '--logo-url',
      'https://w.example/l.png',
      '--redirect-uri',
      'https://w.example/cb',
      '--json',
    ])
    expect(write1.status).toBe(1)
    expect(write1.stderr.trim().split('\n')).toHaveLength(1)
    expect(write1.stderr).toContain(`Error: cannot write the store: the file ${file} is not writable by this user`)

    const notAStore = join(dir, 'notes.db')
    write(notAStore, 'these are not the droids\n'.repeat(100), {mode: 0o600})
    oneLineError(cli(['list-clients', '--db', notAStore, '--json']), new RegExp(`^Error: cannot open ${notAStore.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: file is not a database`))
  })
})

describe('secrets kept out of ps', () => {
  it('take a password from standard input or the environment, and refuse both a flag and stdin', async () => {
    const {spawnSync} = await import('node:child_process')
    const {cliArgv} = await import('../helpers/cli.js')
    const {openStore} = await import('../../src/schema.js')
    const {verifyPassword} = await import('../../src/lib/hashing.js')
    const file = join(tempDir(), 'secrets.db')
    const member = (email: string) => [
      'add-member',
      '--db',
      file,
      '--email',
      email,
      '--first-name',
      'S',
      '--last-name',
      'T',
      '--country',
      'US',
      '--specialty',
      'Oncology',
      '--json',
    ]
    const [command, ...args] = cliArgv([...member('stdin@clinic.example'), '--password-stdin'])
    const piped = spawnSync(command, args, {input: 'piped password 1\n', encoding: 'utf8'})
    expect(piped.status, piped.stderr).toBe(0)
    expect(cli(member('env@clinic.example'), {MEDPANEL_MEMBER_PASSWORD: 'from the environment'}).status).toBe(0)
    oneLineError(cli([...member('both@clinic.example'), '--password', 'x'.repeat(10), '--password-stdin']), /^Error: give one of --password, --password-stdin, not several/)

    const store = await openStore({file})
    try {
      const hashes = Object.fromEntries((await store.db.selectFrom('members').select(['email', 'password_hash']).execute()).map((r) => [r.email, r.password_hash]))
      expect(await verifyPassword('piped password 1', hashes['stdin@clinic.example']!)).toBe(true)
      expect(await verifyPassword('from the environment', hashes['env@clinic.example']!)).toBe(true)
    } finally {
      await store.close()
    }
    expect(cli(['add-member', '--help']).stdout).toMatch(/MEDPANEL_MEMBER_PASSWORD/)
  })
})
