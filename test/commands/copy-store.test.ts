import {spawn} from 'node:child_process'
import {join} from 'node:path'
import {sql} from 'kysely'
import {describe, expect, it} from 'vitest'
import {publishedKeys, rotateSigningKeys, signingKey} from '../../src/interfaces/signon/signing-keys.js'
import {openStore} from '../../src/schema.js'
import {openSecret} from '../../src/store/db.js'
import {cli, cliArgv, cliCwd, cliJson, tempDir} from '../helpers/cli.js'
import {freshDatabaseUrl, onPostgres} from '../helpers/store.js'

// Moving an operator's SQLite store to PostgreSQL. Needs a cluster, so it runs in the suites'
// PostgreSQL run; the SQLite side is given through MEDPANEL_DB, which no test helper rewrites.
describe.skipIf(!onPostgres)('copy-store: a SQLite store into an empty PostgreSQL database', () => {
  it('copies every row with its id, re-seals secrets, moves the id sequences on, and refuses a second copy', async () => {
    const file = join(tempDir(), 'old.db')
    const sqlite = {MEDPANEL_DB: file}
    cliJson(['demo'], sqlite)
    const partner = cliJson<{client_id: string}>(
      [
        'register-client',
        '--name',
        'Panel Co',
        '--url',
        'https://panel.example',
        '--logo-url',
        'https://panel.example/l.png',
        '--redirect-uri',
        'https://panel.example/cb',
        '--grant',
        'partner',
        '--partner-url',
        'http://127.0.0.1:9/panel',
        '--partner-username',
        'mp',
        '--partner-password',
        'partner-secret-1',
      ],
      sqlite,
    )
    cliJson(['credit', 'user_id', '1', '--amount', '12.34', '--type', 'INCENTIVE'], sqlite)
    // ID-token signing keys: a retired pair still published, and the current pair.
    const source = await openStore({file})
    const keys = await rotateSigningKeys(source.db, new Date()).then(() => rotateSigningKeys(source.db, new Date(), {immediately: true}))
    await source.close()
    const url = await freshDatabaseUrl()
    const pg = ['--database-url', url]

    const copied = cliJson<{rows: number; resealed: number; tables: {table: string; rows: number}[]}>(['copy-store', '--to', url], sqlite)
    expect(copied.resealed).toBeGreaterThanOrEqual(1)
    const sourceCount = (table: string) => copied.tables.find((t) => t.table === table)?.rows
    expect(sourceCount('members')).toBe(3)
    expect(sourceCount('pulse_answers')).toBeGreaterThan(1000)
    expect(sourceCount('conversation_posts')).toBeGreaterThan(100)
    expect(sourceCount('signing_keys')).toBe(4)
    expect(copied.resealed).toBeGreaterThanOrEqual(5)

    // The same commands read the same answers, byte for byte, from either store.
    for (const command of [['list-clients'], ['list-members'], ['list-transactions', 'user_id', '1'], ['show-balance', 'npi', '1234567893'], ['list-pulses']]) {
      const before = cli([...command, '--json'], sqlite)
      expect(before.status, before.stderr).toBe(0)
      expect(cli([...command, ...pg, '--json']).stdout, command.join(' ')).toBe(before.stdout)
    }

    const store = await openStore({url})
    try {
      // E's search columns were built on the target: the copied posts can be searched.
      const untokenized = await store.db
        .selectFrom('conversation_posts')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where(sql`title_tokens`, 'is', null)
        .executeTakeFirstOrThrow()
      expect(Number(untokenized.n)).toBe(0)
      const row = await store.db.selectFrom('clients').select('partner_password').where('id', '=', partner.client_id).executeTakeFirstOrThrow()
      expect(row.partner_password).not.toContain('partner-secret-1')
      expect(openSecret(store.db, row.partner_password!)).toBe('partner-secret-1')
      // The signing keys opened under the target's key: the same keys sign there.
      for (const key of keys.current) expect((await signingKey(store.db, key.alg, new Date())).kid).toBe(key.kid)
      expect((await publishedKeys(store.db, new Date())).keys).toHaveLength(4)
    } finally {
      await store.close()
    }

    const next = cliJson<{user_id: number}>([
      'add-member',
      ...pg,
      '--email',
      'new.doctor@clinic.example',
      '--password',
      'a long enough password',
      '--first-name',
      'New',
      '--last-name',
      'Doctor',
      '--country',
      'US',
      '--specialty',
      'Cardiology',
    ])
    expect(next.user_id).toBe(4)

    const again = cli(['copy-store', '--to', url], sqlite)
    expect(again.status).toBe(1)
    expect(again.stderr).toMatch(/^Error: the target already holds data \(table \w+ has rows\)/)
    expect(cliJson<unknown[]>(['list-members', ...pg])).toHaveLength(4)

    const notPostgres = cli(['copy-store', '--to', join(tempDir(), 'x.db')], sqlite)
    expect(notPostgres.status).toBe(1)
    expect(notPostgres.stderr).toMatch(/^Error: --to must be a postgres:\/\/ URL/)
    // A dozen CLI runs, each starting Node and opening a store: a minute or more on a loaded machine.
  }, 240_000)

  it('says, on Ctrl-C mid-copy, that nothing was copied, exits 130, and leaves the target empty', async () => {
    const file = join(tempDir(), 'big.db')
    const sqlite = {MEDPANEL_DB: file}
    cliJson(['demo'], sqlite)
    const url = await freshDatabaseUrl()
    // Migrate the target, then hold its posts table so the copy stops there, mid-transaction.
    const target = await openStore({url})
    await target.close()
    const holder = await openStore({url})
    let release: () => void = () => undefined
    const held = new Promise<void>((resolve) => (release = resolve))
    const locking = holder.db.transaction().execute(async (trx) => {
      await sql`lock table conversation_posts in share mode`.execute(trx)
      await held
    })
    try {
      const [command, ...argv] = cliArgv(['copy-store', '--to', url])
      const child = spawn(command, argv, {cwd: cliCwd(), env: {...process.env, ...sqlite}, stdio: ['ignore', 'pipe', 'pipe']})
      let stderr = ''
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
      await new Promise<void>((resolve) => {
        child.stderr.on('data', (chunk) => {
          stderr += chunk
          // A table copied: the copy is under way, and waits at the held one.
          if (/^ {2}members: 3 rows$/m.test(stderr)) resolve()
        })
      })
      child.kill('SIGINT')
      expect(await exited).toBe(130)
      expect(stderr).toMatch(/\nInterrupted: nothing was copied \(the copy is one transaction, rolled back\)/)
    } finally {
      release()
      await locking
      await holder.close()
    }
    const after = await openStore({url})
    try {
      const members = await sql<{n: string}>`select count(*) as n from members`.execute(after.db)
      expect(Number(members.rows[0]!.n)).toBe(0)
    } finally {
      await after.close()
    }
  })
})
