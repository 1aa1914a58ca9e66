#!/usr/bin/env node
// Bulk loading of interface E, against its ceiling. Generates a data-call document (what
// GET /conversations/data answers, and what an operator imports from a community's archive) of
// --posts posts with --comments-per-post comments each, then times, in alternating rounds and
// each in a fresh temporary store:
//   import   `medpanel import-posts --file` of that document, through the built CLI (dist/), with
//            the process's peak RSS (/usr/bin/time);
//   seed     `medpanel seed-posts` of the same number of posts and comments per post;
//   ceiling  the same rows inserted by plain SQLite (better-sqlite3 in this process, prepared
//            statements) into tables of the same shape with the same two FTS5 indexes (external
//            content, `unicode61 remove_diacritics 0`, filled by the same triggers), in one
//            transaction with synchronous = FULL: what the indexes alone cost. The per-day term
//            statistics are not in it: they are part of what the CLI is measured doing.
// Prints posts/s of each, their ratio to the ceiling (goal: within 4x) and medians over rounds.
// Usage:
//   node bench/import.mjs [--posts 50000] [--comments-per-post 4] [--rounds 3] [--skip-seed] [--write FILE]
// --write FILE only writes the document to FILE (to import or profile by hand) and measures nothing.
// The issue's large size: node bench/import.mjs --posts 200000 --comments-per-post 5 --rounds 1
import {spawnSync} from 'node:child_process'
import {createWriteStream, mkdtempSync, readFileSync, rmSync, statSync} from 'node:fs'
import {createRequire} from 'node:module'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {once} from 'node:events'
import {tsImport} from 'tsx/esm/api'
import {BIN, fmt, machineLine, median, usageError, wholeNumber} from './lib.mjs'

/** The product's own seeded generator, so the document is the same on every run. */
const {mulberry32: prng} = await tsImport('../src/lib/prng.ts', import.meta.url)

const require = createRequire(import.meta.url)
const Database = require('better-sqlite3')
const vocabulary = JSON.parse(readFileSync(new URL('../data/conversations/vocabulary.json', import.meta.url), 'utf8'))

const arg = (name, fallback, min = 1) => {
  const i = process.argv.indexOf(`--${name}`)
  return i > 0 ? wholeNumber(name, process.argv[i + 1], min) : fallback
}
const POSTS = arg('posts', 50_000)
const COMMENTS = arg('comments-per-post', 4, 0)
const ROUNDS = arg('rounds', 3)
const SKIP_SEED = process.argv.includes('--skip-seed')
const writeAt = process.argv.indexOf('--write')
const WRITE = writeAt > 0 ? process.argv[writeAt + 1] : undefined
if (writeAt > 0 && !WRITE) usageError('--write needs a file name')
const FROM = Date.parse('2021-01-01T00:00:00Z')
const TO = Date.parse('2025-12-31T23:59:59Z')
if (COMMENTS > 100) usageError('--comments-per-post must be at most 100 (what seed-posts takes)')
const log = (line) => process.stderr.write(`${line}\n`)
const dir = mkdtempSync(join(tmpdir(), 'medpanel-bench-import-'))

/**
 * The document's conversations, in published order as a data call answers them: text from the
 * vocabulary seed-posts writes with, comments after their post, authors from a pool that grows
 * with the posts (one for every 15 of them).
 */
function* conversations() {
  const random = prng(42)
  const int = (min, max) => min + Math.floor(random() * (max - min + 1))
  const pick = (list) => list[Math.floor(random() * list.length)]
  const fill = (template, topic) =>
    template.replace(/\{(\w+)\}/g, (_, name) => {
      switch (name) {
        case 'condition':
          return topic.condition
        case 'drug':
        case 'drug2':
          return pick(topic.drugs)
        case 'device':
          return pick(topic.devices)
        case 'test':
          return pick(topic.tests)
        case 'specialty':
          return topic.specialty
        case 'age':
          return String(int(19, 92))
        case 'sex':
          return pick(vocabulary.sexes)
        default:
          return String(int(2, 12))
      }
    })
  const pool = Math.max(20, Math.ceil(POSTS / 15))
  const author = (index) => {
    const r = prng(index + 1)
    const country = vocabulary.countries[Math.floor(r() * vocabulary.countries.length)]
    return {
      id: `bench-${index}`,
      specialty: vocabulary.specialties[Math.floor(r() * vocabulary.specialties.length)],
      country_of_practice: country.code,
      zipcode: country.zip.replace(/[#A]/g, (c) => (c === '#' ? String(Math.floor(r() * 10)) : String.fromCharCode(65 + Math.floor(r() * 26)))),
      post_badge: false,
      comment_badge: false,
    }
  }
  let commentId = 0
  for (let i = 0; i < POSTS; i++) {
    const published = FROM + Math.floor(((i + random()) * (TO - FROM - 30 * 86_400_000)) / POSTS)
    const topic = pick(vocabulary.topics)
    const iconsult = random() < 0.2
    const comments = []
    let at = published
    for (let c = 0; c < COMMENTS; c++) {
      at += int(60, 3 * 86_400) * 1000
      comments.push({
        id: ++commentId,
        author: author(int(0, pool - 1)),
        published_at: new Date(at).toISOString(),
        content: Array.from({length: int(1, 3)}, () => fill(pick(vocabulary.comments), topic)).join(' '),
        helpful_count: int(0, 40),
      })
    }
    yield {
      post: {
        id: i + 1,
        author: author(int(0, pool - 1)),
        published_at: new Date(published).toISOString(),
        rating: String(int(0, 500) / 100),
        iconsult,
        solved_at: iconsult && random() < 0.6 ? new Date(published + int(1, 96) * 3_600_000).toISOString() : null,
        title: fill(pick(vocabulary.titles).replace(/^iConsult: /, ''), topic),
        content: [fill(pick(vocabulary.openings), topic), ...Array.from({length: int(2, 5)}, () => fill(pick(vocabulary.sentences), topic))].join(' '),
        comments,
      },
    }
  }
}

/** Writes the document to `file` as a data call would answer it (one JSON object), streamed. */
async function writeDocument(file) {
  const out = createWriteStream(file)
  const write = async (text) => {
    if (!out.write(text)) await once(out, 'drain')
  }
  await write('{"id":"bench","data_calls_remaining":0,"query":{"start":"2021-01-01T00:00:00Z","end":"2025-12-31T23:59:59Z","terms":["a"]},"conversations":[\n')
  let first = true
  for (const conversation of conversations()) {
    await write(`${first ? '' : ',\n'}${JSON.stringify({matched_terms: ['a'], ...conversation})}`)
    first = false
  }
  await write('\n]}\n')
  out.end()
  await once(out, 'finish')
}

/** Runs the built CLI under /usr/bin/time; returns seconds, CPU seconds (user + system), its --json output and peak RSS in MB. */
function medpanel(args) {
  const rssFile = join(dir, 'rss.txt')
  const t0 = performance.now()
  const result = spawnSync('/usr/bin/time', ['-f', '%M %U %S', '-o', rssFile, process.execPath, BIN, ...args, '--json'], {encoding: 'utf8', maxBuffer: 1 << 26})
  const seconds = (performance.now() - t0) / 1000
  if (result.status !== 0) throw new Error(`medpanel ${args[0]} failed: ${result.stderr}`)
  const [rss, user, system] = readFileSync(rssFile, 'utf8').trim().split('\n').at(-1).split(' ').map(Number)
  return {seconds, cpu: user + system, output: JSON.parse(result.stdout), rssMb: rss / 1024}
}

/** The conversations schema as its migrations make it on SQLite, without the statistics. */
const SCHEMA = `
  create table conversation_authors (id text primary key, specialty text not null, country_of_practice text not null, zipcode text not null,
    post_badge integer not null default 0, comment_badge integer not null default 0);
  create table conversation_posts (id integer primary key, author_id text not null references conversation_authors (id), published_at text not null,
    rating text not null, iconsult integer not null default 0, solved_at text, title text not null, content text not null,
    search_key integer not null generated always as (((cast(strftime('%s', published_at) as integer) << 31) | id)) stored);
  create unique index conversation_posts_search_key on conversation_posts (search_key);
  create index conversation_posts_published on conversation_posts (published_at);
  create table conversation_comments (id integer primary key, post_id integer not null references conversation_posts (id) on delete cascade,
    author_id text not null references conversation_authors (id), published_at text not null, content text not null, helpful_count integer not null default 0,
    search_key integer not null generated always as (((cast(strftime('%s', published_at) as integer) << 31) | id)) stored);
  create unique index conversation_comments_search_key on conversation_comments (search_key);
  create index conversation_comments_published on conversation_comments (published_at);
  create index conversation_comments_post on conversation_comments (post_id, published_at);
  create virtual table conversation_post_index using fts5(title, content, content='conversation_posts', content_rowid='search_key', tokenize='unicode61 remove_diacritics 0');
  create virtual table conversation_comment_index using fts5(content, content='conversation_comments', content_rowid='search_key', tokenize='unicode61 remove_diacritics 0');
  create trigger conversation_posts_ai after insert on conversation_posts begin
    insert into conversation_post_index(rowid, title, content) values (new.search_key, new.title, new.content);
  end;
  create trigger conversation_comments_ai after insert on conversation_comments begin
    insert into conversation_comment_index(rowid, content) values (new.search_key, new.content);
  end;
`

/**
 * The ceiling: the document's rows by plain SQLite, one transaction, synchronous = FULL. Seconds
 * spent in SQLite, wall and CPU (user + system of this process over the same stretches).
 */
function ceiling() {
  const db = new Database(join(dir, `ceiling-${Date.now()}.db`))
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = FULL')
  db.pragma('foreign_keys = ON')
  db.exec(SCHEMA)
  const author = db.prepare('insert or ignore into conversation_authors values (?, ?, ?, ?, ?, ?)')
  const post = db.prepare('insert into conversation_posts (id, author_id, published_at, rating, iconsult, solved_at, title, content) values (?, ?, ?, ?, ?, ?, ?, ?)')
  const comment = db.prepare('insert into conversation_comments (id, post_id, author_id, published_at, content, helpful_count) values (?, ?, ?, ?, ?, ?)')
  const addAuthor = (a) => author.run(a.id, a.specialty, a.country_of_practice, a.zipcode, 0, 0)
  let spent = 0
  let cpu = 0
  const timed = (fn) => {
    const t0 = performance.now()
    const c0 = process.cpuUsage()
    fn()
    const c = process.cpuUsage(c0)
    cpu += (c.user + c.system) / 1e6
    spent += performance.now() - t0
  }
  let chunk = []
  const flush = () => {
    for (const {post: p} of chunk) {
      addAuthor(p.author)
      post.run(p.id, p.author.id, p.published_at, p.rating, p.iconsult ? 1 : 0, p.solved_at, p.title, p.content)
      for (const c of p.comments) {
        addAuthor(c.author)
        comment.run(c.id, p.id, c.author.id, c.published_at, c.content, c.helpful_count)
      }
    }
    chunk = []
  }
  timed(() => db.exec('begin immediate'))
  // Generated in chunks between the timed parts: only SQLite's own work is counted.
  for (const conversation of conversations()) {
    chunk.push(conversation)
    if (chunk.length === 1000) timed(flush)
  }
  timed(flush)
  timed(() => db.exec('commit'))
  db.close()
  return {seconds: spent / 1000, cpu}
}

if (WRITE) {
  await writeDocument(WRITE)
  log(`wrote ${fmt(POSTS)} posts with ${COMMENTS} comments each to ${WRITE} (${fmt(statSync(WRITE).size / 1e6, 1)} MB)`)
  rmSync(dir, {recursive: true, force: true})
  process.exit(0)
}

try {
  const file = join(dir, 'conversations.json')
  log(`generating ${fmt(POSTS)} posts with ${COMMENTS} comments each into ${file} …`)
  await writeDocument(file)
  log(`  ${fmt(statSync(file).size / 1e6, 1)} MB`)
  const sqliteVersion = new Database(':memory:').prepare('select sqlite_version() as v').get().v
  const times = {import: [], seed: [], ceiling: []}
  const cpu = {import: [], seed: [], ceiling: []}
  const rss = []
  let imported
  let seeded
  for (let round = 1; round <= ROUNDS; round++) {
    log(`round ${round} of ${ROUNDS}: ceiling …`)
    const top = ceiling()
    times.ceiling.push(top.seconds)
    cpu.ceiling.push(top.cpu)
    log(`round ${round} of ${ROUNDS}: import-posts …`)
    const run = medpanel(['import-posts', '--db', join(dir, `import-${round}.db`), '--file', file])
    times.import.push(run.seconds)
    cpu.import.push(run.cpu)
    rss.push(run.rssMb)
    imported = run.output
    if (!SKIP_SEED) {
      log(`round ${round} of ${ROUNDS}: seed-posts …`)
      const seed = medpanel([
        'seed-posts',
        '--db',
        join(dir, `seed-${round}.db`),
        '--count',
        String(POSTS),
        '--comments',
        String(COMMENTS),
        '--from',
        new Date(FROM).toISOString(),
        '--to',
        new Date(TO).toISOString(),
        '--seed',
        '7',
      ])
      times.seed.push(seed.seconds)
      cpu.seed.push(seed.cpu)
      seeded = seed.output
    }
    for (const name of [`import-${round}.db`, `seed-${round}.db`]) for (const tail of ['', '-wal', '-shm', '.key']) rmSync(join(dir, name + tail), {force: true})
  }
  const ceilingS = median(times.ceiling)
  const ceilingCpu = median(cpu.ceiling)
  const line = (name, kind, rows, extra = '') => {
    const seconds = median(times[kind])
    const used = median(cpu[kind])
    return `  ${name.padEnd(8)} ${fmt(seconds, 1).padStart(7)} s ${fmt(POSTS / seconds).padStart(8)} posts/s ${fmt(rows / seconds).padStart(9)} rows/s ${(seconds / ceilingS).toFixed(2).padStart(6)}x ceiling | CPU ${fmt(used, 1).padStart(6)} s ${(used / ceilingCpu).toFixed(2).padStart(6)}x${extra}`
  }
  console.log(machineLine())
  console.log(
    `import bench: ${fmt(POSTS)} posts, ${fmt(imported.comments)} comments (${fmt(statSync(file).size / 1e6, 1)} MB document), median of ${ROUNDS} round(s); SQLite ${sqliteVersion}`,
  )
  console.log(`  wall time, and CPU time (user + system: what a busy machine's other work changes least)`)
  const rounds = (kind) => `rounds: ${times[kind].map((s) => s.toFixed(1)).join(', ')} s`
  console.log(line('ceiling', 'ceiling', POSTS + POSTS * COMMENTS, `  (${rounds('ceiling')})`))
  console.log(line('import', 'import', imported.posts + imported.comments, `  (${rounds('import')}; peak RSS ${fmt(Math.max(...rss))} MB)`))
  if (!SKIP_SEED) console.log(line('seed', 'seed', seeded.posts + seeded.comments, `  (${rounds('seed')}; ${fmt(seeded.comments)} comments)`))
  const goal = (kind) => `${median(times[kind]) / ceilingS <= 4 ? 'met' : 'missed'} (CPU ${median(cpu[kind]) / ceilingCpu <= 4 ? 'met' : 'missed'})`
  console.log(`  goal within 4x the ceiling: import ${goal('import')}${SKIP_SEED ? '' : `, seed ${goal('seed')}`}`)
} finally {
  rmSync(dir, {recursive: true, force: true})
}
