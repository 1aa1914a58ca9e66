import {spawn} from 'node:child_process'
import {narrow, narrowParts} from '../../src/store/database.js'
import {readdirSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {type Kysely, sql} from 'kysely'
import {beforeAll, describe, expect, it} from 'vitest'
import {signIn} from '../../src/interfaces/signon/sign-in.js'
import {publishedKeys, rotateSigningKeys, signingKey} from '../../src/interfaces/signon/signing-keys.js'
import {systemClock} from '../../src/lib/clock.js'
import {authenticateClient} from '../../src/registry/service.js'
import {openStore} from '../../src/schema.js'
import {SEALED_COLUMNS} from '../../src/store/key-rotation.js'
import {type Keyring, loadKeyring, unseal} from '../../src/store/secrets.js'
import {cli, cliArgv, cliCwd, cliJson, memberRegistration, partnerRegistration, tempDir} from '../helpers/cli.js'
import {freshDatabaseUrl, onPostgres} from '../helpers/store.js'

// Moving an operator's SQLite store to PostgreSQL. Needs a cluster, so it runs in the suites'
// PostgreSQL run; the SQLite side is given through MEDPANEL_DB, which no test helper rewrites.
describe.skipIf(!onPostgres)('copy-store: a SQLite store into an empty PostgreSQL database', () => {
  describe('copies every row with its id, re-seals secrets, moves the id sequences on, and refuses a second copy', () => {
    // One SQLite store (the demo, a partner with a sealed password, a credit, two signing-key
    // pairs) copied once into one database; the tests run in order on the copy.
    const file = join(tempDir(), 'old.db')
    const sqlite = {MEDPANEL_DB: file}
    let partner: {client_id: string}
    let keys: Awaited<ReturnType<typeof rotateSigningKeys>>
    let url: string
    let pg: string[]

    beforeAll(async () => {
      cliJson(['demo'], sqlite)
      partner = cliJson<{client_id: string}>(
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
      keys = await rotateSigningKeys(narrowParts(source), new Date()).then(() => rotateSigningKeys(narrowParts(source), new Date(), {immediately: true}))
      await source.close()
      url = await freshDatabaseUrl()
      pg = ['--database-url', url]
    })

    it('copies every table, its rows counted, and re-seals the secrets', () => {
      const copied = cliJson<{rows: number; resealed: number; tables: {table: string; rows: number}[]}>(['copy-store', '--to', url], sqlite)
      expect(copied.resealed).toBeGreaterThanOrEqual(1)
      const sourceCount = (table: string) => copied.tables.find((t) => t.table === table)?.rows
      expect(sourceCount('members')).toBe(3)
      expect(sourceCount('pulse_answers')).toBeGreaterThan(1000)
      expect(sourceCount('conversation_posts')).toBeGreaterThan(100)
      expect(sourceCount('signing_keys')).toBe(4)
      expect(copied.resealed).toBeGreaterThanOrEqual(5)
    })

    // The same commands read the same answers, byte for byte, from either store: one test each.
    for (const command of [['list-clients'], ['list-members'], ['list-transactions', 'user_id', '1'], ['show-balance', 'npi', '1234567893'], ['list-pulses']]) {
      it(`${command.join(' ')} answers the same, byte for byte, from either store`, () => {
        const before = cli([...command, '--json'], sqlite)
        expect(before.status, before.stderr).toBe(0)
        expect(cli([...command, ...pg, '--json']).stdout, command.join(' ')).toBe(before.stdout)
      })
    }

    it("builds the search columns of the copied posts; the partner password and the signing keys open under the target's key", async () => {
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
        expect(unseal(store.keys, row.partner_password!)).toBe('partner-secret-1')
        // The signing keys opened under the target's key: the same keys sign there.
        for (const key of keys.current) expect((await signingKey(narrowParts(store), key.alg, new Date())).kid).toBe(key.kid)
        expect((await publishedKeys(narrowParts(store), new Date())).keys).toHaveLength(4)
      } finally {
        await store.close()
      }
    })

    it('moves the id sequences on: the next member added on the target gets the next id', () => {
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
    })

    it('refuses a second copy into a database that holds data, changing nothing', () => {
      const again = cli(['copy-store', '--to', url], sqlite)
      expect(again.status).toBe(1)
      expect(again.stderr).toMatch(/^Error: the target already holds data \(table \w+ has rows\)/)
      expect(cliJson<unknown[]>(['list-members', ...pg])).toHaveLength(4)
    })

    it('refuses a --to that is not a postgres:// URL', () => {
      const notPostgres = cli(['copy-store', '--to', join(tempDir(), 'x.db')], sqlite)
      expect(notPostgres.status).toBe(1)
      expect(notPostgres.stderr).toMatch(/^Error: --to must be a postgres:\/\/ URL/)
    })
  })

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

/**
 * Every row of `table` as sorted JSON lines, with each sealed column opened by `keys`. Generated
 * columns are left out: they follow from the others (and node:sqlite cannot read the search key's
 * 63-bit numbers as JavaScript numbers).
 */
async function tableRows(db: Kysely<any>, table: string, keys: Keyring): Promise<string[]> {
  const columns = (await sql<{name: string}>`select name from pragma_table_xinfo(${table}) where hidden = 0`.execute(db)).rows.map((c) => sql.ref(c.name))
  const rows = (await sql<Record<string, unknown>>`select ${sql.join(columns)} from ${sql.table(table)}`.execute(db)).rows
  for (const row of rows) for (const column of SEALED_COLUMNS[table]?.columns ?? []) if (typeof row[column] === 'string') row[column] = unseal(keys, row[column] as string)
  return rows.map((row) => JSON.stringify(row, (_key, value) => (typeof value === 'bigint' ? String(value) : value))).sort()
}

/** The ordinary tables of a SQLite store but its own bookkeeping and the search index's (built from rows). */
async function dataTables(db: Kysely<any>): Promise<string[]> {
  const all = (await sql<{name: string; sql: string}>`select name, sql from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(db)).rows
  const virtual = all.filter((t) => /^create virtual/i.test(t.sql)).map((t) => t.name)
  return all
    .map((t) => t.name)
    .filter((name) => name !== 'kysely_migration' && !virtual.some((v) => name === v || name.startsWith(`${v}_`)))
    .sort()
}

describe.skipIf(!onPostgres)('copy-store: a PostgreSQL database into a new SQLite file', () => {
  /** A SQLite store with a sealed partner password and a member who signs in, copied to PostgreSQL. */
  let first: string
  let url: string
  let clientId: string
  beforeAll(async () => {
    first = join(tempDir(), 'first.db')
    const env = {MEDPANEL_DB: first}
    cliJson(['demo'], env)
    const partner = cliJson<{client_id: string}>(
      [...partnerRegistration([], 'http://127.0.0.1:9/panel'), '--partner-username', 'mp', '--partner-password', 'partner-secret-1'],
      env,
    )
    cliJson(memberRegistration([], {email: 'laptop@clinic.example', password: 'a long enough password'}), env)
    const source = await openStore({file: first})
    await rotateSigningKeys(narrowParts(source), new Date())
    await source.close()
    url = await freshDatabaseUrl()
    cliJson(['copy-store', '--to', url], env)
    clientId = partner.client_id
  })

  it('copies every row back, equal to the store it came from, with the secrets under a new key file and the credentials working', async () => {
    const dir = tempDir()
    const second = join(dir, 'laptop.db')
    const copied = cliJson<{rows: number; resealed: number; file: string; key_file: string; tables: {table: string; rows: number}[]}>([
      'copy-store',
      '--database-url',
      url,
      '--to',
      `sqlite:${second}`,
    ])
    expect(copied.file).toBe(second)
    expect(copied.key_file).toBe(`${second}.key`)
    expect(copied.resealed).toBeGreaterThanOrEqual(3)
    // Only the store and its key file: the temporary name is gone, and the log was folded in.
    expect(readdirSync(dir).sort()).toEqual(['laptop.db', 'laptop.db.key'])
    expect(statSync(second).mode & 0o777).toBe(0o600)
    expect(statSync(`${second}.key`).mode & 0o777).toBe(0o600)

    const a = await openStore({file: first})
    const b = await openStore({file: second})
    try {
      // The first store was sealed under MEDPANEL_SECRET_KEY (set for the PostgreSQL run), the copy under its key file.
      const firstKeys = a.keys
      const secondKeys = loadKeyring(second, null)
      const tables = await dataTables(a.db)
      expect(copied.tables.map((t) => t.table).sort()).toEqual(tables)
      for (const table of tables) expect(await tableRows(b.db, table, secondKeys), table).toEqual(await tableRows(a.db, table, firstKeys))
      const stored = await b.db.selectFrom('clients').select('partner_password').where('id', '=', clientId).executeTakeFirstOrThrow()
      expect(stored.partner_password).toMatch(new RegExp(`^sealed:v1:${secondKeys.current.id}:`))
      expect(unseal(secondKeys, stored.partner_password!)).toBe('partner-secret-1')
      expect(await authenticateClient(narrowParts(b), 'demo-client', 'demo-client-secret')).toBeDefined()
      expect((await signIn(narrow(b.db), 'laptop@clinic.example', 'a long enough password', {clock: systemClock})).email).toBe('laptop@clinic.example')
    } finally {
      await a.close()
      await b.close()
    }
    // Without MEDPANEL_SECRET_KEY the copy opens with its own key file, as on a laptop.
    // (MEDPANEL_DB, not --db: on the PostgreSQL run the helpers turn --db into a database.)
    const listed = cli(['list-clients', '--json'], {MEDPANEL_DB: second, MEDPANEL_SECRET_KEY: undefined as unknown as string})
    expect(listed.status, listed.stderr).toBe(0)
    expect(JSON.parse(listed.stdout).map((c: {client_id: string}) => c.client_id)).toContain(clientId)
  })

  it('says, on Ctrl-C mid-copy, that nothing was kept, exits 130, and leaves no file', async () => {
    const dir = tempDir()
    const holder = await openStore({url})
    let release: () => void = () => undefined
    const held = new Promise<void>((resolve) => (release = resolve))
    // The copy reads tables in foreign-key order: it copies members, then waits at the posts.
    const locking = holder.db.transaction().execute(async (trx) => {
      await sql`lock table conversation_posts in access exclusive mode`.execute(trx)
      await held
    })
    try {
      const [command, ...argv] = cliArgv(['copy-store', '--database-url', url, '--to', join(dir, 'laptop.db')])
      const child = spawn(command, argv, {cwd: cliCwd(), env: process.env, stdio: ['ignore', 'pipe', 'pipe']})
      let stderr = ''
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
      await new Promise<void>((resolve) => {
        child.stderr.on('data', (chunk) => {
          stderr += chunk
          if (/^ {2}members: \d+ rows$/m.test(stderr)) resolve()
        })
      })
      child.kill('SIGINT')
      expect(await exited).toBe(130)
      expect(stderr).toMatch(/\nInterrupted: nothing was kept \(the partial copy was removed; \S+laptop\.db was not made\)/)
    } finally {
      release()
      await locking
      await holder.close()
    }
    expect(readdirSync(dir)).toEqual([])
  })
})

// Refused before any store is opened: no cluster needed (the URL names none).
describe('copy-store into a SQLite file that is there already', () => {
  it('is refused with one Error line, exit 1, and nothing changed', () => {
    const dir = tempDir()
    const file = join(dir, 'laptop.db')
    writeFileSync(file, 'a file the operator keeps\n', {mode: 0o600})
    const url = 'postgres://medpanel@127.0.0.1:1/none'
    for (const to of [file, `sqlite:${file}`]) {
      const result = cli(['copy-store', '--database-url', url, '--to', to])
      expect(result.status).toBe(1)
      expect(result.stdout).toBe('')
      expect(result.stderr).toBe(`Error: ${file} already exists; copy-store makes a new SQLite store: give a path where there is none\n`)
    }
    expect(readdirSync(dir)).toEqual(['laptop.db'])
    expect(readFileSync(file, 'utf8')).toBe('a file the operator keeps\n')

    // A key file left beside the path would be replaced: refused the same way.
    const other = join(dir, 'other.db')
    writeFileSync(`${other}.key`, 'a key\n', {mode: 0o600})
    const keyed = cli(['copy-store', '--database-url', url, '--to', other])
    expect(keyed.stderr).toBe(`Error: ${other}.key already exists; copy-store makes a new SQLite store: give a path where there is none\n`)
    expect(readdirSync(dir).sort()).toEqual(['laptop.db', 'other.db.key'])
  })
})
