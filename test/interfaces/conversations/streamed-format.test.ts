import fc from 'fast-check'
import {describe, expect, it} from 'vitest'
import {JSON_TAIL, jsonConversations, jsonHead, toJson} from '../../../src/interfaces/conversations/format-json.js'
import {toXml, xmlConversations, xmlHead, xmlTail} from '../../../src/interfaces/conversations/format-xml.js'
import type {Conversation, DataResult, SummaryResult} from '../../../src/interfaces/conversations/views.js'

/*
 * A data answer is written in pieces as its conversations are read. The pieces must join to
 * exactly the text the whole-answer serialisers (toJson, toXml) make, whatever the page size.
 */

const text = fc.string({unit: fc.constantFrom('a', 'Z', ' ', '"', '\\', '<', '&', ']]>', ']', '>', '\u0007', '\n', 'é', '\uD83D\uDE00', '\uD800'), maxLength: 12})
const author = fc.record({id: text, specialty: text, country_of_practice: text, zipcode: text, post_badge: fc.boolean(), comment_badge: fc.boolean()})
const stamp = fc.constantFrom('2025-01-01T00:00:00Z', '2025-06-01T10:00:00.250Z')
const conversation: fc.Arbitrary<Conversation> = fc.record({
  matched_terms: fc.array(text, {minLength: 1, maxLength: 3}),
  post: fc.record({
    id: fc.nat(),
    author,
    published_at: stamp,
    rating: fc.constantFrom('0', '4.25', '3', '2.5312'),
    iconsult: fc.boolean(),
    solved_at: fc.option(stamp, {nil: null}),
    title: text,
    content: text,
    comments: fc.array(fc.record({id: fc.nat(), author, published_at: stamp, content: text, helpful_count: fc.nat()}), {maxLength: 3}),
  }),
})
const head: fc.Arbitrary<SummaryResult> = fc.record({
  id: fc.uuid(),
  data_calls_remaining: fc.nat(),
  query: fc.record({start: stamp, end: stamp, terms: fc.array(text, {minLength: 1, maxLength: 3})}),
  summary: fc.record({
    terms: fc.array(fc.record({term: text, matches: fc.nat(), posts: fc.nat(), comments: fc.nat()}), {maxLength: 3}),
    uniques: fc.record({posts: fc.nat(), comments: fc.nat()}),
  }),
})

function pages<T>(list: readonly T[], size: number): T[][] {
  const out: T[][] = []
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size))
  return out
}

describe('a data answer written in pieces', () => {
  it('joins to exactly the whole answer, in JSON and XML, for any page size', () => {
    fc.assert(
      fc.property(head, fc.array(conversation, {maxLength: 7}), fc.integer({min: 1, max: 4}), (summary, conversations, size) => {
        const whole: DataResult = {...summary, conversations}
        const json =
          jsonHead(summary) +
          pages(conversations, size)
            .map((page, i) => jsonConversations(page, i === 0))
            .join('') +
          JSON_TAIL
        expect(json).toBe(JSON.stringify(toJson(whole)))
        const xml =
          xmlHead(summary, conversations.length) +
          pages(conversations, size)
            .map((page) => xmlConversations(page))
            .join('') +
          xmlTail(conversations.length)
        expect(xml).toBe(toXml(whole))
      }),
      {numRuns: 300, seed: 20261124},
    )
  })
})
