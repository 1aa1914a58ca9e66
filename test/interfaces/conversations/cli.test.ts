import {COMMENT_COLUMNS, POST_COLUMNS} from '../../../src/interfaces/conversations/repository.js'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cli, cliJson, startCli, tempDir} from '../../helpers/cli.js'
import {CORPUS} from './fixtures.js'
import {JSON_TYPE, query} from './helpers.js'
import {openCliStore} from '../../helpers/store.js'

describe('interface E from the command line', () => {
  const dir = tempDir('medpanel-conversations-')
  const db = join(dir, 'store.db')
  let clientId: string

  beforeAll(() => {
    clientId = cliJson([
      'register-client',
      '--db',
      db,
      '--name',
      'Insight Co',
      '--url',
      'https://insight.example',
      '--logo-url',
      'https://insight.example/l.png',
      '--grant',
      'conversations',
    ]).client_id
  })

  it('issues a key shown once, stored only as a hash, and refuses clients without the grant', async () => {
    const key = cliJson(['issue-api-key', clientId, '--db', db, '--methods', 'summary', '--data-calls', '5', '--subscription-ends', '2030-01-01T00:00:00Z'])
    expect(key).toMatchObject({client_id: clientId, methods: ['summary'], data_call_allowance: 5, data_calls_remaining: 5, subscription_ends_at: '2030-01-01T00:00:00.000Z'})
    expect(key.api_key).toMatch(/^mpk_[A-Za-z0-9_-]{43}$/)
    const store = await openCliStore(db)
    const rows = await store.db.selectFrom('conversation_api_keys').selectAll().execute()
    await store.close()
    expect(JSON.stringify(rows)).not.toContain(key.api_key)

    const updated = cliJson(['update-api-key', key.api_key, '--db', db, '--data-calls', '2', '--methods', 'summary,data', '--no-subscription-end'])
    expect(updated).toMatchObject({id: key.id, methods: ['summary', 'data'], data_calls_remaining: 2, subscription_ends_at: null})

    const other = cliJson(['register-client', '--db', db, '--name', 'Other', '--url', 'https://o.example', '--logo-url', 'https://o.example/l.png', '--grant', 'balance'])
    const refused = cli(['issue-api-key', other.client_id, '--db', db, '--json'])
    expect(refused.status).toBe(1)
    expect(refused.stderr).toBe(`Error: client "${other.client_id}" does not hold the conversations grant (update-client ${other.client_id} --grant …,conversations)\n`)
    expect(refused.stdout).toBe('')
  })

  it('seeds the same posts from the same seed', async () => {
    const a = join(dir, 'a.db')
    const b = join(dir, 'b.db')
    const flags = ['--count', '40', '--comments', '2', '--from', '2024-01-01T00:00:00Z', '--to', '2024-12-31T23:59:59Z', '--seed', '9']
    expect(cliJson(['seed-posts', '--db', a, ...flags])).toMatchObject({posts: 40, first_post_id: 45_000_001, last_post_id: 45_000_040, seed: 9})
    cliJson(['seed-posts', '--db', b, ...flags])
    const read = async (file: string) => {
      const store = await openCliStore(file)
      const posts = await store.db.selectFrom('conversation_posts').select(POST_COLUMNS).orderBy('id').execute()
      const comments = await store.db.selectFrom('conversation_comments').select(COMMENT_COLUMNS).orderBy('id').execute()
      await store.close()
      return {posts, comments}
    }
    const [left, right] = [await read(a), await read(b)]
    expect(left).toEqual(right)
    expect(left.posts.every((p) => p.published_at >= '2024-01-01' && p.published_at <= '2024-12-31T23:59:59.000Z')).toBe(true)
    expect(left.posts.some((p) => p.iconsult === 1)).toBe(true)
  })

  it('imports a data-call document, rejecting a bad one whole and naming the bad field', () => {
    const bad = structuredClone(CORPUS)
    ;(bad[2]!.post.comments[1] as {published_at: string}).published_at = 'last tuesday'
    const badFile = join(dir, 'bad.json')
    writeFileSync(badFile, JSON.stringify({id: 'x', conversations: bad}))
    const rejected = cli(['import-posts', '--db', db, '--file', badFile])
    expect(rejected.status).toBe(1)
    expect(rejected.stderr).toBe('Error: conversations[2].post.comments[1].published_at: must be an ISO 8601 datetime with a time zone, such as 2024-05-01T09:30:00Z\n')
    const goodFile = join(dir, 'good.json')
    writeFileSync(goodFile, JSON.stringify({conversations: CORPUS}))
    expect(cliJson(['import-posts', '--db', db, '--file', goodFile])).toEqual({posts: 4, comments: 5, authors: 4, replaced_posts: 0})
    expect(cliJson(['import-posts', '--db', db, '--file', goodFile])).toEqual({posts: 4, comments: 5, authors: 4, replaced_posts: 4})
  })

  describe('two servers on one store', () => {
    const shared = join(dir, 'shared.db')
    let key: string
    let servers: Awaited<ReturnType<typeof startCli>>[] = []

    beforeAll(async () => {
      const client = cliJson([
        'register-client',
        '--db',
        shared,
        '--name',
        'Race',
        '--url',
        'https://r.example',
        '--logo-url',
        'https://r.example/l.png',
        '--grant',
        'conversations',
      ])
      key = cliJson(['issue-api-key', client.client_id, '--db', shared, '--data-calls', '1']).api_key
      servers = await Promise.all([startCli(['serve', '--db', shared, '--port', '0']), startCli(['serve', '--db', shared, '--port', '0'])])
    })
    afterAll(async () => {
      await Promise.all(servers.map((s) => s.stop()))
    })

    it('let exactly one of many concurrent data calls spend the last call', async () => {
      const path = `/conversations/data?${query(['pain'], '2025-01-01T00:00:00Z', '2025-12-31T23:59:59Z')}`
      const answers = await Promise.all(Array.from({length: 8}, (_, i) => fetch(servers[i % 2]!.url + path, {headers: {Accept: JSON_TYPE, 'X-Service-Conversation-API-Key': key}})))
      const statuses = answers.map((r) => r.status).sort()
      expect(statuses).toEqual([200, 429, 429, 429, 429, 429, 429, 429])
    })
  })
})
