import {copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {basename, dirname, join} from 'node:path'
import {type SeedOptions, seedPosts} from '../../src/interfaces/conversations/seed.js'
import {openStore} from '../../src/schema.js'
import {narrow} from '../../src/store/database.js'
import {checkpointStore} from '../../src/store/handle.js'

/*
 * Large seeded store files, made once per test run and copied for each test that asks: seeding
 * 20,000 posts took two minutes a runtime, copying the file takes milliseconds. `npm test`
 * (scripts/test.mjs) names one cache directory for all its runtimes in MEDPANEL_TEST_CACHE and
 * removes it at the end; a file run alone keeps its seeds in a directory of its own process.
 * The SQLite file format is the same under better-sqlite3 and node:sqlite, so a store seeded
 * under one runtime opens under the next.
 */

let own: string | undefined

function cacheDir(): string {
  const given = process.env.MEDPANEL_TEST_CACHE
  if (given) {
    mkdirSync(given, {recursive: true})
    return given
  }
  own ??= mkdtempSync(join(tmpdir(), 'medpanel-seed-cache-'))
  return own
}

/** The store file and what lives beside it (its key, a write-ahead log if one was left). */
function storeFiles(dir: string, name: string): string[] {
  return readdirSync(dir).filter((file) => file === name || file.startsWith(`${name}-`) || file.startsWith(`${name}.`))
}

/**
 * A store file at `target` holding the posts `seed` describes (seedPosts, as `seed-posts` does):
 * a copy of the run's one seeded file, made first if this run has none yet.
 */
export async function seededStoreFile(target: string, seed: SeedOptions): Promise<string> {
  const dir = cacheDir()
  const name = `posts-${seed.count}-${seed.comments}-${Date.parse(seed.from)}-${Date.parse(seed.to)}-${seed.seed}.db`
  if (!existsSync(join(dir, name))) {
    // Seeded in a directory of its own and moved in whole, so a reader never finds half a file.
    const scratch = mkdtempSync(join(dir, 'seeding-'))
    const store = await openStore({file: join(scratch, name)})
    await seedPosts(narrow(store.db), seed)
    await checkpointStore(store.db)
    await store.close()
    // The store file last: its presence is what says the seed is complete.
    for (const file of storeFiles(scratch, name).filter((file) => file !== name)) renameSync(join(scratch, file), join(dir, file))
    renameSync(join(scratch, name), join(dir, name))
    rmSync(scratch, {recursive: true, force: true})
  }
  for (const file of storeFiles(dir, name)) copyFileSync(join(dir, file), join(dirname(target), basename(target) + file.slice(name.length)))
  return target
}
