import {spawn} from 'node:child_process'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {prepareExport} from '../../src/interfaces/pulse/service.js'
import type {Db} from '../../src/schema.js'
import {cli, cliArgv, cliCwd, cliJson, tempDir} from '../helpers/cli.js'
import {makeStoreFile, openCliStore} from '../helpers/store.js'

/*
 * Seeding is something operators repeat: the same --seed must give the same data whatever else
 * differs between stores, a second run must add only what is missing, a run stopped with Ctrl-C
 * must say what it kept and be completed by running it again, and an empty import is refused
 * unless asked for, as push-members refuses an empty member file.
 */

const register = (db: string[]) =>
  cliJson<{client_id: string}>(['register-client', ...db, '--name', 'P', '--url', 'https://p.example', '--logo-url', 'https://p.example/l.png', '--grant', 'pulses'])

/** Runs a CLI command to its end while the test can signal it, resolving on exit. */
function startSeed(args: string[]) {
  const [command, ...argv] = cliArgv(args)
  const child = spawn(command, argv, {cwd: cliCwd(), env: process.env, stdio: ['ignore', 'pipe', 'pipe']})
  let stdout = ''
  let stderr = ''
  const listeners: (() => void)[] = []
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => {
    stderr += d
    for (const l of listeners.splice(0)) l()
  })
  const exit = new Promise<number | string | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)))
  /** Resolves once stderr matches (or the child ended). */
  const stderrMatches = async (pattern: RegExp) => {
    while (!pattern.test(stderr) && child.exitCode === null) {
      await Promise.race([new Promise<void>((r) => listeners.push(r)), exit])
    }
  }
  return {child, exit, stderrMatches, out: () => ({stdout, stderr})}
}

async function postCounts(file: string) {
  const store = await openCliStore(file)
  const db: Db = store.db
  try {
    const posts = await db
      .selectFrom('conversation_posts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
    const comments = await db
      .selectFrom('conversation_comments')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
    const orphans = await db
      .selectFrom('conversation_comments')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('post_id', 'not in', (eb) => eb.selectFrom('conversation_posts').select('id'))
      .executeTakeFirstOrThrow()
    return {posts: Number(posts.n), comments: Number(comments.n), orphans: Number(orphans.n)}
  } finally {
    await store.close()
  }
}

describe('seed-pulses with the same --seed on two fresh stores', () => {
  it('gives the same pulse content whatever client ids register-client drew', async () => {
    const env = {MEDPANEL_NOW: '2026-03-01T09:00:00Z'}
    const run = async () => {
      const file = join(tempDir(), 'pulses.db')
      const db = ['--db', file]
      const {client_id} = register(db)
      const seeded = cli(['seed-pulses', ...db, '--client', client_id, '--count', '3', '--respondents', '15', '--seed', '7', '--json'], env)
      expect(seeded.status, seeded.stderr).toBe(0)
      const created = JSON.parse(seeded.stdout).created as {project_id: string}[]
      const exports: string[] = []
      const store = await openCliStore(file)
      try {
        for (const pulse of created) {
          const prepared = await prepareExport(store.db, {clientId: client_id, admin: false}, pulse.project_id)
          const parts: Uint8Array[] = []
          for await (const chunk of prepared.chunks()) parts.push(chunk)
          exports.push(Buffer.concat(parts).toString('utf8'))
        }
      } finally {
        await store.close()
      }
      // Ids may differ with the client; everything else must not.
      let text = JSON.stringify({seeded: seeded.stdout, exports}).replaceAll(client_id, '<client>')
      for (const [i, p] of created.entries()) text = text.replaceAll(p.project_id, `<pulse ${i}>`)
      return {client_id, ids: created.map((p) => p.project_id), text}
    }
    const first = await run()
    const second = await run()
    expect(second.client_id).not.toBe(first.client_id)
    expect(second.ids).not.toEqual(first.ids)
    expect(second.text).toEqual(first.text)
    expect(first.text).toContain('Questions')
    expect(first.text).toContain('Answers')
  })
})

describe('seed-posts run again with the same --seed', () => {
  const flags = ['--comments', '2', '--from', '2024-01-01T00:00:00Z', '--to', '2024-06-30T23:59:59Z', '--seed', '4']

  describe('adds nothing the second time, and only the difference with a larger --count', () => {
    // One store, a run a test, in order.
    const file = join(tempDir(), 'posts.db')
    const db = ['--db', file]
    let afterFirst: {posts: number; comments: number; orphans: number}
    let moreComments: number

    it('the first run seeds 300 whole posts from its own first id on', async () => {
      const first = cliJson(['seed-posts', ...db, '--count', '300', ...flags])
      expect(first).toMatchObject({posts: 300, skipped: 0, interrupted: false, first_post_id: 20_000_001, last_post_id: 20_000_300})
      afterFirst = await postCounts(file)
      expect(afterFirst).toMatchObject({posts: 300, orphans: 0})
      expect(afterFirst.comments).toBe(first.comments)
    })

    it('the same run again adds nothing, and says so', async () => {
      const again = cli(['seed-posts', ...db, '--count', '300', ...flags])
      expect(again.status, again.stderr).toBe(0)
      expect(again.stdout).toContain('Nothing added: all 300 posts of seed 4 are already stored.')
      expect(await postCounts(file)).toEqual(afterFirst)
    })

    it('a larger --count adds only the difference', async () => {
      const more = cliJson(['seed-posts', ...db, '--count', '450', ...flags])
      expect(more).toMatchObject({posts: 150, skipped: 300})
      moreComments = more.comments
      expect(await postCounts(file)).toEqual({posts: 450, comments: afterFirst.comments + more.comments, orphans: 0})
    })

    it('leaves the same 450 posts, and the same per-day term statistics, as one run of --count 450', async () => {
      const whole = join(tempDir(), 'whole.db')
      expect(cliJson(['seed-posts', '--db', whole, '--count', '450', ...flags])).toMatchObject({posts: 450, comments: afterFirst.comments + moreComments})
      const read = async (f: string) => {
        const store = await openCliStore(f)
        try {
          return {
            posts: await store.db
              .selectFrom('conversation_posts')
              .select(['id', 'author_id', 'published_at', 'rating', 'iconsult', 'solved_at', 'title', 'content'])
              .orderBy('id')
              .execute(),
            // Comment ids follow the order the runs wrote them in; the rest must match.
            comments: await store.db
              .selectFrom('conversation_comments')
              .select(['post_id', 'author_id', 'published_at', 'content', 'helpful_count'])
              .orderBy('post_id')
              .orderBy('published_at')
              .orderBy('content')
              .execute(),
            authors: await store.db.selectFrom('conversation_authors').selectAll().orderBy('id').execute(),
            terms: await store.db.selectFrom('conversation_term_days').selectAll().orderBy('term').orderBy('kind').orderBy('day').execute(),
          }
        } finally {
          await store.close()
        }
      }
      const [stepwise, once] = [await read(file), await read(whole)]
      expect(stepwise.terms.length).toBeGreaterThan(100)
      expect(stepwise).toEqual(once)
    })
  })

  it('keeps each seed in its own ids, and refuses a seed outside them', () => {
    const db = ['--db', join(tempDir(), 'two.db')]
    expect(cliJson(['seed-posts', ...db, '--count', '20', ...flags])).toMatchObject({posts: 20})
    expect(cliJson(['seed-posts', ...db, '--count', '20', ...flags.slice(0, -1), '5'])).toMatchObject({posts: 20, skipped: 0, first_post_id: 25_000_001})
    const refused = cli(['seed-posts', ...db, '--count', '20', '--seed', '429'])
    expect(refused.status).toBe(1)
    expect(refused.stderr).toMatch(/^Error: .*429.*\n$/)
  })
})

// Not checked when the suite itself runs under Deno: a SIGINT sent by a Deno parent (its node:child_process
// kill) ends the child outright, before its listener runs, whatever the child is. Sent from a
// shell (kill -INT, or Ctrl-C at a terminal), the same Deno-run command says what it kept and
// exits 130 (tried by hand); the Node-run suites check it here with the CLI under Node.
describe.skipIf('Deno' in globalThis)('Ctrl-C during a seed', () => {
  describe('seed-posts says what it kept, exits 130, and the same command completes it', () => {
    const file = join(tempDir(), 'interrupted.db')
    const args = ['seed-posts', '--db', file, '--count', '5000', '--comments', '1', '--from', '2024-01-01T00:00:00Z', '--to', '2024-12-31T23:59:59Z', '--seed', '2']
    let kept: number
    beforeAll(() => makeStoreFile(file))

    it('on SIGINT, says how many whole posts it kept and exits 130; the store holds exactly those', async () => {
      const run = startSeed(args)
      // Past the first write, so the command has long been listening for the signal.
      await run.stderrMatches(/seeding posts: [1-9]\d*\/5000\n/)
      run.child.kill('SIGINT')
      expect(await run.exit).toBe(130)
      const {stderr} = run.out()
      const line = stderr.match(/^Interrupted: kept (\d+) of 5000 posts \((\d+) added by this run\); run the same command again to finish\.$/m)
      expect(line, stderr).not.toBeNull()
      kept = Number(line![1])
      expect(kept).toBeGreaterThan(0)
      expect(kept).toBeLessThan(5000)
      expect(stderr).not.toMatch(/Error/)
      // Whole posts with all their comments: the store holds exactly what the line says.
      const partial = await postCounts(file)
      expect(partial).toMatchObject({posts: kept, orphans: 0})
    })

    it('the same command run again adds the rest and skips what was kept', async () => {
      const rest = cli([...args, '--json'])
      expect(rest.status, rest.stderr).toBe(0)
      expect(JSON.parse(rest.stdout)).toMatchObject({posts: 5000 - kept, skipped: kept, interrupted: false})
      expect(await postCounts(file)).toMatchObject({posts: 5000, orphans: 0})
    })
  })

  describe('seed-pulses says what it kept, exits 130, and the same command completes it', () => {
    const db = ['--db', join(tempDir(), 'interrupted-pulses.db')]
    let args: string[]
    let kept: number
    beforeAll(() => {
      const {client_id} = register(db)
      args = ['seed-pulses', ...db, '--client', client_id, '--count', '40', '--respondents', '300', '--seed', '3']
    })

    it('on SIGINT, says how many pulses it kept and exits 130; list-pulses lists exactly those', async () => {
      const run = startSeed(args)
      await run.stderrMatches(/seeding pulses: [1-9]\d*\/40\n/)
      run.child.kill('SIGINT')
      expect(await run.exit).toBe(130)
      const {stderr} = run.out()
      const line = stderr.match(/^Interrupted: kept (\d+) of 40 pulses \((\d+) created by this run\); run the same command again to finish\.$/m)
      expect(line, stderr).not.toBeNull()
      kept = Number(line![1])
      expect(kept).toBeGreaterThan(0)
      expect(kept).toBeLessThan(40)
      expect(cliJson<unknown[]>(['list-pulses', ...db])).toHaveLength(kept)
    })

    it('the same command run again creates the rest and skips what was kept', () => {
      const rest = cliJson<{created: unknown[]; skipped: unknown[]}>([...args])
      expect(rest.created).toHaveLength(40 - kept)
      expect(rest.skipped).toHaveLength(kept)
      expect(cliJson<unknown[]>(['list-pulses', ...db])).toHaveLength(40)
    })
  })
})

describe('import-posts with no posts', () => {
  // One test per empty document, each on a store of its own.
  for (const [name, body] of [
    ['empty-array.json', '[]'],
    ['empty-document.json', '{"conversations": []}'],
  ] as const) {
    it(`is refused in one line naming --allow-empty, and accepted with it: ${body}`, async () => {
      const dir = tempDir()
      const file = join(dir, 'store.db')
      await makeStoreFile(file)
      const input = join(dir, name)
      writeFileSync(input, body)
      const refused = cli(['import-posts', '--db', file, '--file', input])
      expect(refused.status).toBe(1)
      expect(refused.stderr).toBe(`Error: ${input} holds no posts; to accept that and import nothing, add --allow-empty\n`)
      expect(refused.stdout).toBe('')

      const accepted = cli(['import-posts', '--db', file, '--file', input, '--allow-empty'])
      expect(accepted.status, accepted.stderr).toBe(0)
      expect(accepted.stdout).toBe('No posts in the file: nothing imported.\n')
      expect(cliJson(['import-posts', '--db', file, '--file', input, '--allow-empty'])).toEqual({posts: 0, comments: 0, authors: 0, replaced_posts: 0})
      expect(await postCounts(file)).toEqual({posts: 0, comments: 0, orphans: 0})
    })
  }
})
