import fc from 'fast-check'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, afterEach, beforeEach, describe, expect, it} from 'vitest'
import {documentConversations, NotADocument} from '../../../src/interfaces/conversations/document-stream.js'
import {importConversations, importPosts, textChunks} from '../../../src/interfaces/conversations/import.js'
import {countEveryDocument} from '../../../src/interfaces/conversations/term-days.js'
import type {ConversationsDb} from '../../../src/interfaces/conversations/tables.js'
import {freshApp, type TestContext} from '../../helpers/app.js'
import {cli, cliJson} from '../../helpers/cli.js'
import {openCliStore, storeFlags} from '../../helpers/store.js'
import {conversationOf, words} from './helpers.js'

// import-posts reads its document as a stream (document-stream.ts), twice: every conversation
// checked first, then written a chunk at a time with the per-day statistics added up in memory.

/** The elements the stream yields for `text` read in chunks of `size` characters. */
async function streamed(text: string, size: number): Promise<unknown[]> {
  const out: unknown[] = []
  const chunks = async function* () {
    for (let i = 0; i < text.length; i += size) yield text.slice(i, i + size)
  }
  for await (const value of documentConversations(chunks())) out.push(value)
  return out
}

const post = (id: number, published: string, title: string, content: string, comments: {content: string; published: string}[] = [], commentBase = id * 100) =>
  conversationOf({title, content, published, comments}, id, (j) => commentBase + j)

describe('the streamed document', () => {
  it('yields exactly the conversations JSON.parse finds, whatever the chunk size', async () => {
    const text = fc.string({unit: fc.constantFrom('a', ' ', '"', '\\', '[', ']', '{', '}', ',', ':', 'é', '😀', '\n', 'u')})
    const value = fc.letrec((tie) => ({
      any: fc.oneof({depthSize: 'small'}, text, fc.integer(), fc.boolean(), fc.constant(null), fc.array(tie('any'), {maxLength: 3}), fc.dictionary(text, tie('any'), {maxKeys: 3})),
    })).any
    await fc.assert(
      fc.asyncProperty(
        fc.array(value, {maxLength: 6}),
        fc.dictionary(fc.string(), value, {maxKeys: 3}),
        fc.boolean(),
        fc.integer({min: 1, max: 9}),
        async (list, others, bare, size) => {
          const document = bare ? JSON.stringify(list, null, size % 2 ? 1 : undefined) : JSON.stringify({...others, conversations: list}, null, size % 2 ? 2 : undefined)
          expect(await streamed(document, size)).toEqual(list)
        },
      ),
      {numRuns: 300},
    )
  })

  it('refuses what is not JSON, and says what stands where the conversations should be', async () => {
    await expect(streamed('{"conversations": [{"a": 1}, {"b": 2}', 4)).rejects.toThrow(SyntaxError)
    await expect(streamed('{"conversations": [{"a": 1}} ]}', 4)).rejects.toThrow(SyntaxError)
    await expect(streamed('{"conversations": [1,]}', 4)).rejects.toThrow(SyntaxError)
    await expect(streamed('{"id": tru, "conversations": []}', 3)).rejects.toThrow(SyntaxError)
    await expect(streamed('[] x', 3)).rejects.toThrow(SyntaxError)
    await expect(streamed('{"conversations": 5}', 3)).rejects.toEqual(new NotADocument({conversations: 5}))
    await expect(streamed('{"id": "x"}', 3)).rejects.toEqual(new NotADocument({}))
    await expect(streamed('42', 1)).rejects.toEqual(new NotADocument(42))
    // What stood there, whole, however it was split.
    await expect(streamed('{"conversations": {"a": {"b": [1]}, "c": 2}}', 2)).rejects.toEqual(new NotADocument({conversations: {a: {b: [1]}, c: 2}}))
    await expect(streamed('{"conversations": [1], "conversations": [2]}', 5)).rejects.toThrow('the document holds "conversations" twice')
    // JSON.parse refuses a byte order mark; so does the stream, though the library would skip it.
    await expect(streamed('\uFEFF{"conversations": []}', 4)).rejects.toThrow(SyntaxError)
    // The message names the character, its byte and the conversations read before it, not the
    // parser's internal states.
    await expect(streamed('{"conversations": [{"a": 1}} ]}', 100)).rejects.toThrow(/^unexpected "}" at byte 27, after conversation 1$/)
    await expect(streamed('{"é": tru, "conversations": []}', 3)).rejects.toThrow(/^unexpected "," at byte 10, before the first conversation$/) // é is two bytes
    await expect(streamed('{"conversations": [{"a": 1}', 100)).rejects.toThrow(/^the document ends before it is complete$/)
    // In the schema's own words, as when the document was parsed whole.
    await expect(importConversations(undefined as never, textChunks('{"conversations": 5}'))).rejects.toThrow(/^conversations: /)
  })

  it("hands each chunk's conversations on before reading the next chunk", async () => {
    const handed: number[] = []
    const asked: number[] = []
    const chunks = async function* () {
      yield '{"id": "x", "conversations": ['
      for (let i = 0; i < 50; i++) {
        asked.push(handed.length)
        yield `${i ? ',' : ''}{"n": ${i}, "text": "${'x'.repeat(100)}"}`
      }
      yield ']}'
    }
    for await (const value of documentConversations(chunks())) handed.push((value as {n: number}).n)
    expect(handed).toEqual(Array.from({length: 50}, (_, i) => i))
    // When chunk i+1 is asked for, conversation i is already out: nothing waits for the document's end.
    expect(asked).toEqual(Array.from({length: 50}, (_, i) => i))
  })
})

describe('importing in chunks', () => {
  let ctx: TestContext
  beforeEach(async () => {
    ctx = await freshApp()
  })
  afterEach(async () => ctx.store.close())

  // The helper's store is untyped (Store<any>): name the tables this reads.
  const statistics = () => (ctx.db as ConversationsDb).selectFrom('conversation_term_days').selectAll().orderBy('term').orderBy('kind').orderBy('day').execute()
  /**
   * The statistics as kept, as the store's own recount makes them, and as a brute-force count of
   * the stored documents makes them here (a recount shares the store's counting code; this does not).
   */
  async function recounted() {
    const kept = await statistics()
    const reference = new Map<string, {term: string; kind: number; day: number; docs: number; matches: number}>()
    const count = (kind: number, published: string, fields: string[]) => {
      const day = Math.floor(Date.parse(published) / 86_400_000)
      const seen = new Map<string, number>()
      for (const field of fields) {
        const tokens = words(field)
        tokens.forEach((token, i) => {
          for (const term of i + 1 < tokens.length ? [token, `${token} ${tokens[i + 1]}`] : [token]) seen.set(term, (seen.get(term) ?? 0) + 1)
        })
      }
      for (const [term, n] of seen) {
        const row = reference.get(`${term}|${kind}|${day}`) ?? {term, kind, day, docs: 0, matches: 0}
        row.docs += 1
        row.matches += n
        reference.set(`${term}|${kind}|${day}`, row)
      }
    }
    for (const p of await ctx.db.selectFrom('conversation_posts').select(['published_at', 'title', 'content']).execute()) count(0, p.published_at, [p.title, p.content])
    for (const c of await ctx.db.selectFrom('conversation_comments').select(['published_at', 'content']).execute()) count(1, c.published_at, [c.content])
    const expected = [...reference.values()].sort((a, b) => (a.term < b.term ? -1 : a.term > b.term ? 1 : a.kind - b.kind || a.day - b.day))
    const plain = (rows: readonly {term: string; kind: number; day: number; docs: number; matches: number}[]) =>
      rows.map((r) => ({term: r.term, kind: Number(r.kind), day: Number(r.day), docs: Number(r.docs), matches: Number(r.matches)}))
    expect(plain(kept)).toEqual(expected)
    await ctx.db.deleteFrom('conversation_term_days').execute()
    await countEveryDocument(ctx.db)
    return {kept, recount: await statistics()}
  }

  it('keeps the statistics exact across chunks, and when a replacement moves comments between posts of different chunks', async () => {
    const words = ['chest pain', 'pain', 'metformin dose', 'chest', 'dose pain chest']
    const day = (i: number) => `2025-0${1 + (i % 3)}-1${i % 10}T0${i % 10}:00:00Z`
    // 2,300 posts: three chunks of the import, days shared between chunks.
    const posts = Array.from({length: 2_300}, (_, i) =>
      post(i + 1, day(i), words[i % 5]!, `${words[(i * 3) % 5]} and ${words[(i * 7) % 5]}`, [{content: words[(i + 1) % 5]!, published: day(i + 1)}]),
    )
    expect(await importPosts(ctx.db, posts)).toEqual({posts: 2_300, comments: 2_300, authors: 1, replaced_posts: 0})
    let {kept, recount} = await recounted()
    expect(kept.length).toBeGreaterThan(0)
    expect(kept).toEqual(recount)
    // Post 5's comment (id 500) moves to post 2,250, in the document's last chunk; post 2,250 is
    // now written after post 5 has lost it. Texts change too.
    const moved = [
      post(5, day(5), 'chest chest pain', 'no comments now'),
      post(2_250, day(2_250), 'metformin', 'chest pain', [
        {content: 'pain pain', published: day(3)},
        {content: 'moved here', published: day(4)},
      ]),
    ]
    moved[1]!.post.comments[1]!.id = 500
    expect(await importPosts(ctx.db, moved)).toEqual({posts: 2, comments: 2, authors: 1, replaced_posts: 2})
    ;({kept, recount} = await recounted())
    expect(kept).toEqual(recount)
  })
})

describe('import-posts on a large file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'medpanel-import-stream-'))
  afterAll(() => rmSync(dir, {recursive: true, force: true}))

  it('refuses a file with a bad record thousands of rows in, names its path and writes nothing', async () => {
    const db = join(dir, 'store.db')
    const good = join(dir, 'good.json')
    writeFileSync(good, JSON.stringify({conversations: [post(1, '2025-01-01T00:00:00Z', 'kept', 'already here')]}))
    expect(cliJson(['import-posts', ...storeFlags(db), '--file', good])).toMatchObject({posts: 1})
    const conversations = Array.from({length: 4_000}, (_, i) =>
      post(i + 2, '2025-02-01T00:00:00Z', `post ${i}`, 'some text with "quotes" and \\ backslashes', [{content: 'a comment', published: '2025-02-02T00:00:00Z'}], 1_000_000 + i),
    )
    ;(conversations[3_500]!.post as {rating: unknown}).rating = 9
    const bad = join(dir, 'bad.json')
    writeFileSync(bad, JSON.stringify({id: 'x', conversations}))
    const rejected = cli(['import-posts', ...storeFlags(db), '--file', bad])
    expect(rejected.status).toBe(1)
    expect(rejected.stderr).toBe('Error: conversations[3500].post.rating: must be a decimal between 0 and 5 with at most 4 decimal places\n')
    const truncated = join(dir, 'truncated.json')
    writeFileSync(truncated, JSON.stringify({conversations: conversations.slice(0, 3_000)}).slice(0, -2))
    expect(cli(['import-posts', ...storeFlags(db), '--file', truncated]).stderr).toMatch(/^Error: --file: .*truncated\.json is not valid JSON \(/)
    const store = await openCliStore(db)
    try {
      const count = await store.db
        .selectFrom('conversation_posts')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
      expect(Number(count.n)).toBe(1)
    } finally {
      await store.close()
    }
  })
})
