import vocabulary from '../../../data/conversations/vocabulary.json' with {type: 'json'}
import {badRequest} from '../../errors.js'
import type {ConversationsDb as Db} from './tables.js'
import {writeTransaction} from '../../store/transactions.js'
import {sql} from 'kysely'
import {Rng} from '../../lib/prng.js'
import * as repo from './repository.js'
import {isIsoDateTime} from './schema.js'
import type {NewAuthorRow, NewCommentRow, NewPostRow} from './tables.js'
import {TermDayCounts} from './term-days.js'

/** The largest --count, and so the size of the block of post ids each seed owns. */
export const MAX_SEED_POSTS = 5_000_000
/** Seeds whose blocks of post ids fit below 2^31 (ids are the low 31 bits of the search key). */
export const MAX_SEED = Math.floor((2 ** 31 - 1) / MAX_SEED_POSTS) - 1

export interface SeedOptions {
  count: number
  /** Average comments per post; each post gets between 0 and twice this many. */
  comments: number
  from: string
  to: string
  seed: number
}

export interface SeedResult {
  /** Posts this run added (those of the seed's first --count not yet in the store). */
  posts: number
  /** Comments this run added, with those posts. */
  comments: number
  /** Posts of the seed's first --count that were already stored: left as they are. */
  skipped: number
  /** Authors of the seed's posts seen by this run. */
  authors: number
  first_post_id: number
  last_post_id: number
  from: string
  to: string
  seed: number
  /** True when the run was asked to stop (Ctrl-C) before it reached --count. */
  interrupted: boolean
}

type Topic = (typeof vocabulary.topics)[number]

class Writer {
  constructor(readonly random: () => number) {}
  int(min: number, max: number): number {
    return min + Math.floor(this.random() * (max - min + 1))
  }
  pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.random() * list.length)]!
  }
  chance(p: number): boolean {
    return this.random() < p
  }
  fill(template: string, topic: Topic): string {
    const drug = this.pick(topic.drugs)
    const others = topic.drugs.filter((d) => d !== drug)
    const values: Record<string, () => string> = {
      condition: () => topic.condition,
      drug: () => drug,
      drug2: () => (others.length ? this.pick(others) : drug),
      device: () => this.pick(topic.devices),
      test: () => this.pick(topic.tests),
      specialty: () => topic.specialty,
      age: () => String(this.int(19, 92)),
      sex: () => this.pick(vocabulary.sexes),
      number: () => String(this.int(2, 12)),
    }
    return template.replace(/\{(\w+)\}/g, (_, name: string) => values[name]?.() ?? name)
  }
  zip(pattern: string): string {
    return pattern.replace(/[#A]/g, (c) => (c === '#' ? String(this.int(0, 9)) : String.fromCharCode(65 + this.int(0, 25))))
  }
}

function sentenceCase(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1)
}

/** The id of the seed's post `index` (0-based): every seed owns a block of MAX_SEED_POSTS ids. */
export function seedPostId(seed: number, index: number): number {
  return seed * MAX_SEED_POSTS + index + 1
}

/** Author `index` of a seed's pool, drawn from its own stream, so it never depends on --count. */
function seedAuthor(seed: number, index: number, countryWeights: readonly (typeof vocabulary.countries)[number][]): NewAuthorRow {
  const r = new Rng(`${seed}:author:${index}`)
  const w = new Writer(() => r.next())
  const country = w.pick(countryWeights)
  return {
    id: `${seed}-${String(index + 1).padStart(6, '0')}`,
    specialty: w.pick(vocabulary.specialties),
    country_of_practice: country.code,
    zipcode: w.zip(country.zip),
    post_badge: 0,
    comment_badge: 0,
  }
}

/** The checked options' window, in milliseconds since the epoch. */
function seedWindow(options: SeedOptions): {from: number; to: number} {
  if (!Number.isInteger(options.count) || options.count < 1 || options.count > MAX_SEED_POSTS) throw badRequest(`count: must be a whole number from 1 to ${MAX_SEED_POSTS}`)
  if (!Number.isFinite(options.comments) || options.comments < 0 || options.comments > 100) throw badRequest('comments: must be between 0 and 100')
  if (!Number.isInteger(options.seed) || options.seed < 0 || options.seed > MAX_SEED) throw badRequest(`seed: must be a whole number from 0 to ${MAX_SEED}`)
  for (const name of ['from', 'to'] as const) {
    if (!isIsoDateTime(options[name])) throw badRequest(`${name}: must be an ISO 8601 datetime with a time zone, such as 2024-01-01T00:00:00Z`)
  }
  const from = new Date(options.from).getTime()
  const to = new Date(options.to).getTime()
  if (from > to) throw badRequest('from: must not be after to')
  if (from < 0 || to >= Date.UTC(2101, 0, 1)) throw badRequest('from, to: posts must be published between 1970 and 2100')
  return {from, to}
}

/** A seed's authors by index, each made once per run (`size` says how many were). */
function authorPool(seed: number): {at: (index: number) => NewAuthorRow; size: () => number} {
  const countryWeights = vocabulary.countries.flatMap((c) => Array<typeof c>(c.weight).fill(c))
  const authors = new Map<number, NewAuthorRow>()
  return {
    at: (index) => {
      const known = authors.get(index)
      if (known) return known
      const made = seedAuthor(seed, index, countryWeights)
      authors.set(index, made)
      return made
    },
    size: () => authors.size,
  }
}

/** One batch of seeded posts to write: the posts, their comments (ids given at write time), their authors. */
interface SeedBatch {
  posts: NewPostRow[]
  comments: Omit<NewCommentRow, 'id'>[]
  authors: Map<string, NewAuthorRow>
}

/** Post `index`'s own stream of draws: its content depends on nothing else. */
function postWriter(seed: number, index: number): Writer {
  const r = new Rng(`${seed}:post:${index}`)
  return new Writer(() => r.next())
}

/** When post `index` is published: always the first draw of its stream. */
function drawPublished(w: Writer, window: {from: number; to: number}): number {
  return window.from + Math.floor(w.random() * (window.to - window.from + 1))
}

/** Adds the seed's post `index` and its comments to `batch`, drawn from the post's own stream. */
function seedPost(batch: SeedBatch, seed: number, index: number, window: {from: number; to: number}, averageComments: number, authorAt: (index: number) => NewAuthorRow): void {
  const {to} = window
  const postId = seedPostId(seed, index)
  const w = postWriter(seed, index)
  // The pool of authors grows with the post's index (as it grew with --count before), and a
  // few prolific authors write most posts, as in real communities.
  const pool = Math.max(20, Math.round((index + 1) / 15))
  const author = () => {
    const a = authorAt(Math.floor((pool * w.pick([0.02, 0.1, 0.3, 1]) * w.int(0, 999)) / 1000))
    batch.authors.set(a.id, a)
    return a
  }
  // Every draw below comes in a fixed order, which fixes each seed's posts: keep it.
  const published = drawPublished(w, window)
  const topic = w.pick(vocabulary.topics)
  const by = author()
  const iconsult = w.chance(0.2)
  const votes = w.int(0, 25)
  const stars = Array.from({length: votes}, () => w.int(1, 5)).reduce((a, b) => a + b, 0)
  const sentences = Array.from({length: w.int(2, 5)}, () => w.fill(w.pick(vocabulary.sentences), topic))
  batch.posts.push({
    id: postId,
    author_id: by.id,
    published_at: new Date(published).toISOString(),
    rating: votes === 0 ? '0' : (Math.round((stars / votes) * 100) / 100).toFixed(2).replace(/\.?0+$/, ''),
    iconsult: iconsult ? 1 : 0,
    solved_at: iconsult && w.chance(0.6) ? new Date(Math.min(to, published + w.int(1, 96) * 3_600_000)).toISOString() : null,
    title: (iconsult ? 'iConsult: ' : '') + sentenceCase(w.fill(w.pick(vocabulary.titles).replace(/^iConsult: /, ''), topic)),
    content: [w.fill(w.pick(vocabulary.openings), topic), ...sentences].join(' '),
  })
  const many = Math.round(w.random() * 2 * averageComments)
  let at = published
  for (let i = 0; i < many; i++) {
    at = Math.min(to, at + w.int(60, 3 * 86_400) * 1000)
    batch.comments.push({
      post_id: postId,
      author_id: author().id,
      published_at: new Date(Math.floor(at / 1000) * 1000).toISOString(),
      content: Array.from({length: w.int(1, 3)}, () => w.fill(w.pick(vocabulary.comments), topic)).join(' '),
      helpful_count: Math.floor(w.random() ** 3 * 40),
    })
  }
}

/** The ids among the seed's first `count` posts that the store already holds. */
async function storedSeedPosts(db: Db, seed: number, count: number): Promise<Set<number>> {
  const rows = await db
    .selectFrom('conversation_posts')
    .select('id')
    .where('id', '>=', seedPostId(seed, 0))
    .where('id', '<=', seedPostId(seed, count - 1))
    .execute()
  return new Set(rows.map((row) => Number(row.id)))
}

/**
 * The seed's first `count` post indexes in order of publication (index order within one
 * millisecond). Each batch then covers a stretch of the window rather than all of it, and the
 * per-day term statistics a batch rewrites are those of its own days only: 20,000 posts seeded in
 * batches drawn in index order rewrote nearly every day's rows ten times, and took 28.6 s against
 * 23.0 s in this order (medians of three; docs/benchmarks.md, bench:import).
 */
function publicationOrder(seed: number, count: number, window: {from: number; to: number}): Uint32Array {
  const published = new Float64Array(count)
  for (let index = 0; index < count; index++) published[index] = drawPublished(postWriter(seed, index), window)
  return Uint32Array.from({length: count}, (_, index) => index).sort((a, b) => published[a]! - published[b]! || a - b)
}

/** Writes one batch in one transaction, its rows in time order. */
async function writeSeedBatch(db: Db, batch: SeedBatch): Promise<void> {
  const {posts, comments} = batch
  // Time order within the batch: the per-day statistics and the search index take rows in
  // key order faster.
  posts.sort((a, b) => (a.published_at < b.published_at ? -1 : a.published_at > b.published_at ? 1 : a.id - b.id))
  comments.sort((a, b) => (a.published_at < b.published_at ? -1 : a.published_at > b.published_at ? 1 : a.post_id - b.post_id))
  await writeTransaction(db, async (trx) => {
    // Comment ids are taken inside the transaction, after the highest stored, so another
    // writer's comments never collide with these.
    const first = (await repo.maxIds(trx)).comment + 1
    // A seeded author is the same row on every run: one already stored keeps its badges.
    const newAuthors = [...batch.authors.values()]
    for (let i = 0; i < newAuthors.length; i += 400) {
      await trx
        .insertInto('conversation_authors')
        .values(newAuthors.slice(i, i + 400))
        .onConflict((oc) => oc.column('id').doNothing())
        .execute()
    }
    // The batch's per-day term statistics are added up over all its posts and comments and
    // written once, in key order.
    const counts = new TermDayCounts()
    await repo.insertPosts(trx, posts, counts)
    await repo.insertComments(
      trx,
      comments.map((c, i) => ({id: first + i, ...c})),
      counts,
    )
    await counts.write(trx, 1)
  })
}

/**
 * Badges follow what the store holds (this run's posts and any earlier run's): more than 100
 * posts, more than 100 comments. Only this seed's authors are touched; imported ones keep theirs.
 */
async function updateSeedBadges(db: Db, seed: number): Promise<void> {
  await writeTransaction(db, async (trx) => {
    const prefix = `${seed}-%`
    await sql`update conversation_authors set
        post_badge = case when id in (select author_id from conversation_posts where author_id like ${prefix} group by author_id having count(*) > 100) then 1 else 0 end,
        comment_badge = case when id in (select author_id from conversation_comments where author_id like ${prefix} group by author_id having count(*) > 100) then 1 else 0 end
      where id like ${prefix}`.execute(trx)
  })
}

/** Posts of a seed written per transaction. */
const SEED_BATCH = 2_000

/**
 * Generates realistic physician-community posts and comments, deterministic from the seed, with
 * publication dates spread over [from, to]. Post i of a seed always gets the same id and the same
 * content (drawn from a stream of its own, never from --count), so a second run with the same
 * options skips what is stored and a larger --count adds only the rest. Comments get ids after the
 * highest in the store. Each batch of posts is one transaction, and `shouldStop` is asked between
 * batches: an interrupted run leaves whole posts with all their comments, and running it again
 * completes it. `onProgress` hears how many of the --count posts are done (added or found).
 */
export async function seedPosts(db: Db, options: SeedOptions, onProgress?: (done: number, total: number) => void, shouldStop?: () => boolean): Promise<SeedResult> {
  const window = seedWindow(options)
  const seed = options.seed
  const authors = authorPool(seed)
  let added = 0
  let skipped = 0
  let comments = 0
  let interrupted = false

  const order = publicationOrder(seed, options.count, window)
  const stored = await storedSeedPosts(db, seed, options.count)
  for (let offset = 0; offset < options.count; offset += SEED_BATCH) {
    // A store that answers synchronously never lets the event loop run, and a signal is only
    // heard there: yield to it before asking.
    if (shouldStop) await new Promise((resolve) => setImmediate(resolve))
    if (shouldStop?.()) {
      interrupted = true
      break
    }
    const end = Math.min(options.count, offset + SEED_BATCH)
    const batch: SeedBatch = {posts: [], comments: [], authors: new Map()}
    for (const index of order.subarray(offset, end)) {
      if (stored.has(seedPostId(seed, index))) skipped += 1
      else seedPost(batch, seed, index, window, options.comments, authors.at)
    }
    if (batch.posts.length > 0) await writeSeedBatch(db, batch)
    added += batch.posts.length
    comments += batch.comments.length
    onProgress?.(end, options.count)
  }
  if (added > 0) await updateSeedBadges(db, seed)

  return {
    posts: added,
    comments,
    skipped,
    authors: authors.size(),
    first_post_id: seedPostId(seed, 0),
    last_post_id: seedPostId(seed, options.count - 1),
    from: new Date(window.from).toISOString(),
    to: new Date(window.to).toISOString(),
    seed,
    interrupted,
  }
}
