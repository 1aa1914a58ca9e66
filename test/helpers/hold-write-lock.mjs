// Another process writing the store: opens the SQLite file on its own connection, takes the write
// lock (BEGIN IMMEDIATE), runs the SQL statements given, prints "locked", holds the lock for the
// given milliseconds, commits and prints "committed". Run by test/helpers/write-lock.ts as
//   RUNTIME hold-write-lock.mjs FILE HOLD_MS [SQL…]
// on the runtime running the tests, with the SQLite library MEDPANEL_SQLITE_DRIVER names.
const [file, holdMs, ...statements] = process.argv.slice(2)

async function open() {
  const forced = process.env.MEDPANEL_SQLITE_DRIVER
  const [major = 0, minor = 0] = (process.versions.node ?? '0.0').split('.').map(Number)
  const nodeSqlite = forced ? forced === 'node:sqlite' : 'Deno' in globalThis || major > 22 || (major === 22 && minor >= 13)
  if (nodeSqlite) {
    const {DatabaseSync} = await import('node:sqlite')
    return new DatabaseSync(file)
  }
  const {default: Database} = await import('better-sqlite3')
  return new Database(file, {fileMustExist: true})
}

const db = await open()
db.exec('pragma busy_timeout = 5000')
db.exec('begin immediate')
for (const statement of statements) db.exec(statement)
process.stdout.write('locked\n')
await new Promise((resolve) => setTimeout(resolve, Number(holdMs)))
db.exec('commit')
db.close()
process.stdout.write('committed\n')
