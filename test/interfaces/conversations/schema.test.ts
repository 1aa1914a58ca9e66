import {describe, expect, it} from 'vitest'
import {importPosts} from '../../../src/interfaces/conversations/import.js'
import {isIsoDateTime} from '../../../src/interfaces/conversations/schema.js'
import {freshApp} from '../../helpers/app.js'
import {CORPUS} from './fixtures.js'

describe('datetimes', () => {
  it.each([
    ['2024-02-29T00:00:00Z', true],
    ['2025-12-31T23:59:59.999Z', true],
    ['2025-06-01T09:30:00+02:00', true],
    ['2025-02-29T00:00:00Z', false],
    ['2025-02-30T00:00:00+01:00', false],
    ['2025-01-01T24:00:00Z', false],
    ['2025-01-01T00:00:00+15:00', false],
    ['2025-13-01T00:00:00Z', false],
    ['2025-01-01', false],
    ['2025-01-01T00:00:00', false],
    ['next week', false],
  ])('%s is %s', (value, ok) => expect(isIsoDateTime(value)).toBe(ok))
})

describe('import-posts validation', () => {
  const withPost = (change: (post: any) => void) => {
    const copy = structuredClone(CORPUS) as any[]
    change(copy[1].post)
    return {conversations: copy}
  }

  it.each([
    [
      'a solved_at on a post that is not an iConsult',
      (p: any) => (p.solved_at = '2025-07-01T00:00:00Z'),
      'conversations[1].post.solved_at: must be null when the post is not an iConsult',
    ],
    ['an id too large for the search key', (p: any) => (p.id = 2 ** 31), 'conversations[1].post.id: must be below 2147483648'],
    ['a date before 1970', (p: any) => (p.published_at = '1969-12-31T23:59:59Z'), 'conversations[1].post.published_at: must fall between 1970 and 2100'],
    ['a rating above five', (p: any) => (p.rating = 5.5), 'conversations[1].post.rating: must be a decimal between 0 and 5 with at most 4 decimal places'],
    [
      'a missing author field (doc-2 first appears as a commenter)',
      (p: any) => delete p.author.zipcode,
      'conversations[0].post.comments[0].author.zipcode: Invalid input: expected string, received undefined',
    ],
    ['a comment id used twice', (p: any) => (p.comments[0].id = 11), 'conversations[1].post.comments[0].id: comment 11 appears twice in the file'],
  ])('rejects the whole file for %s, naming the path', async (_, change, message) => {
    const ctx = await freshApp()
    await expect(importPosts(ctx.db, withPost(change))).rejects.toThrow(message)
    expect(await ctx.db.selectFrom('conversation_posts').select('id').execute()).toEqual([])
    await ctx.store.close()
  })

  it('accepts the sample spelling "country of practice" and a bare conversations array', async () => {
    const ctx = await freshApp()
    const copy = structuredClone(CORPUS) as any[]
    const author = copy[0].post.author
    author['country of practice'] = author.country_of_practice
    delete author.country_of_practice
    expect(await importPosts(ctx.db, copy)).toMatchObject({posts: 4})
    const row = await ctx.db.selectFrom('conversation_authors').selectAll().where('id', '=', 'doc-1').executeTakeFirstOrThrow()
    expect(row.country_of_practice).toBe('US')
    await ctx.store.close()
  })
})
