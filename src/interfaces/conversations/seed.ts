import vocabulary from '../../../data/conversations/vocabulary.json' with {type: 'json'}
import {badRequest} from '../../errors.js'
import type {Db} from '../../store/database.js'
import {writeTransaction} from '../../store/db.js'
import * as repo from './repository.js'
import {isIsoDateTime} from './schema.js'
import type {NewAuthorRow, NewCommentRow, NewPostRow} from './tables.js'

export interface SeedOptions {
  count: number
  /** Average comments per post; each post gets between 0 and twice this many. */
  comments: number
  from: string
  to: string
  seed: number
}

export interface SeedResult {
  posts: number
  comments: number
  authors: number
  first_post_id: number
  last_post_id: number
  from: string
  to: string
  seed: number
}

/** A small, fast, seedable generator (mulberry32): the same seed always gives the same data. */
export function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
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

/**
 * Generates realistic physician-community posts and comments, deterministic from the seed, with
 * publication dates spread over [from, to]. New posts and comments get ids after the highest in
 * the store. `onProgress` hears how many posts are written so far.
 */
export async function seedPosts(db: Db, options: SeedOptions, onProgress?: (done: number, total: number) => void): Promise<SeedResult> {
  if (!Number.isInteger(options.count) || options.count < 1 || options.count > 5_000_000) throw badRequest('count: must be a whole number from 1 to 5000000')
  if (!Number.isFinite(options.comments) || options.comments < 0 || options.comments > 100) throw badRequest('comments: must be between 0 and 100')
  if (!Number.isInteger(options.seed)) throw badRequest('seed: must be a whole number')
  for (const name of ['from', 'to'] as const) {
    if (!isIsoDateTime(options[name])) throw badRequest(`${name}: must be an ISO 8601 datetime with a time zone, such as 2024-01-01T00:00:00Z`)
  }
  const from = new Date(options.from).getTime()
  const to = new Date(options.to).getTime()
  if (from > to) throw badRequest('from: must not be after to')
  if (from < 0 || to >= Date.UTC(2101, 0, 1)) throw badRequest('from, to: posts must be published between 1970 and 2100')

  const w = new Writer(prng(options.seed))
  const countryWeights = vocabulary.countries.flatMap((c) => Array<typeof c>(c.weight).fill(c))
  const authorCount = Math.max(20, Math.round(options.count / 15))
  const authors: NewAuthorRow[] = Array.from({length: authorCount}, (_, i) => {
    const country = w.pick(countryWeights)
    return {
      id: `${options.seed}-${String(i + 1).padStart(6, '0')}`,
      specialty: w.pick(vocabulary.specialties),
      country_of_practice: country.code,
      zipcode: w.zip(country.zip),
      post_badge: 0,
      comment_badge: 0,
    }
  })
  // A few prolific authors write most posts, as in real communities.
  const author = () => authors[Math.floor((authorCount * w.pick([0.02, 0.1, 0.3, 1]) * w.int(0, 999)) / 1000)]!

  const dates = Array.from({length: options.count}, () => from + Math.floor(w.random() * (to - from + 1))).sort((a, b) => a - b)
  const start = await repo.maxIds(db)
  let postId = start.post
  let commentId = start.comment
  const postsBy = new Map<string, number>()
  const commentsBy = new Map<string, number>()
  const batch = 2_000
  let written = 0
  let comments = 0

  for (let offset = 0; offset < options.count; offset += batch) {
    const posts: NewPostRow[] = []
    const postComments: NewCommentRow[] = []
    for (const published of dates.slice(offset, offset + batch)) {
      const topic = w.pick(vocabulary.topics)
      const by = author()
      postsBy.set(by.id, (postsBy.get(by.id) ?? 0) + 1)
      const iconsult = w.chance(0.2)
      const votes = w.int(0, 25)
      const stars = Array.from({length: votes}, () => w.int(1, 5)).reduce((a, b) => a + b, 0)
      const sentences = Array.from({length: w.int(2, 5)}, () => w.fill(w.pick(vocabulary.sentences), topic))
      postId += 1
      posts.push({
        id: postId,
        author_id: by.id,
        published_at: new Date(published).toISOString(),
        rating: votes === 0 ? '0' : (Math.round((stars / votes) * 100) / 100).toFixed(2).replace(/\.?0+$/, ''),
        iconsult: iconsult ? 1 : 0,
        solved_at: iconsult && w.chance(0.6) ? new Date(Math.min(to, published + w.int(1, 96) * 3_600_000)).toISOString() : null,
        title: (iconsult ? 'iConsult: ' : '') + sentenceCase(w.fill(w.pick(vocabulary.titles).replace(/^iConsult: /, ''), topic)),
        content: [w.fill(w.pick(vocabulary.openings), topic), ...sentences].join(' '),
      })
      const many = Math.round(w.random() * 2 * options.comments)
      let at = published
      for (let i = 0; i < many; i++) {
        at = Math.min(to, at + w.int(60, 3 * 86_400) * 1000)
        const commenter = author()
        commentsBy.set(commenter.id, (commentsBy.get(commenter.id) ?? 0) + 1)
        commentId += 1
        postComments.push({
          id: commentId,
          post_id: postId,
          author_id: commenter.id,
          published_at: new Date(Math.floor(at / 1000) * 1000).toISOString(),
          content: Array.from({length: w.int(1, 3)}, () => w.fill(w.pick(vocabulary.comments), topic)).join(' '),
          helpful_count: Math.floor(w.random() ** 3 * 40),
        })
      }
    }
    await writeTransaction(db, async (trx) => {
      if (offset === 0) await repo.upsertAuthors(trx, authors)
      await repo.insertPosts(trx, posts)
      await repo.insertComments(trx, postComments)
    })
    written += posts.length
    comments += postComments.length
    onProgress?.(written, options.count)
  }

  // Badges follow what was written: more than 100 posts, more than 100 comments.
  for (const a of authors) {
    a.post_badge = (postsBy.get(a.id) ?? 0) > 100 ? 1 : 0
    a.comment_badge = (commentsBy.get(a.id) ?? 0) > 100 ? 1 : 0
  }
  await writeTransaction(db, (trx) => repo.upsertAuthors(trx, authors))

  return {
    posts: written,
    comments,
    authors: authorCount,
    first_post_id: start.post + 1,
    last_post_id: postId,
    from: new Date(from).toISOString(),
    to: new Date(to).toISOString(),
    seed: options.seed,
  }
}
