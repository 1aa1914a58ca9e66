import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {seedDemo} from '../../../src/demo.js'
import {DEMO_API_KEY} from '../../../src/interfaces/conversations/demo.js'
import {freshApp, type TestContext} from '../../helpers/app.js'
import {JSON_TYPE, XML_TYPE, xmlAsJson} from './helpers.js'

describe('the demo data set for interface E', () => {
  let ctx: TestContext
  beforeEach(async () => {
    ctx = await freshApp()
  })
  afterEach(async () => ctx.store.close())

  it('seeds posts and the demo key once, and prints curl lines that work in both formats', async () => {
    const first = await seedDemo(ctx.store, 'http://127.0.0.1:8080', ctx.clock.now())
    const again = await seedDemo(ctx.store, 'http://127.0.0.1:8080', ctx.clock.now())
    const info = first.parts.conversations as {api_key: string; posts: number; comments: number; data_calls_remaining: number}
    expect(info).toMatchObject({api_key: DEMO_API_KEY, posts: 400, data_calls_remaining: 1000})
    expect(again.parts.conversations).toEqual(first.parts.conversations)
    const lines = first.part_lines.conversations!
    expect(lines).toHaveLength(5)
    for (const [index, line] of lines.slice(1).entries()) {
      const match = /^curl -s "http:\/\/127\.0\.0\.1:8080([^"]+)" -H "Accept: ([^"]+)" -H "X-Service-Conversation-API-Key: ([^"]+)"$/.exec(line)
      expect(match, line).not.toBeNull()
      const [, path, accept, key] = match!
      expect(accept).toBe(index % 2 === 0 ? JSON_TYPE : XML_TYPE)
      const res = await ctx.app.request(path!, {headers: {Accept: accept!, 'X-Service-Conversation-API-Key': key!}})
      expect(res.status).toBe(200)
      const body = accept === JSON_TYPE ? await res.json() : xmlAsJson(await res.text()).value
      expect(body.query.terms).toEqual(['atrial fibrillation', 'metformin', 'chest pain'])
      expect(body.summary.uniques.posts + body.summary.uniques.comments).toBeGreaterThan(0)
      if (path!.startsWith('/conversations/data')) expect(body.conversations.length).toBeGreaterThan(0)
    }
  })
})
