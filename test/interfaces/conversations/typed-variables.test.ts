import {Hono} from 'hono'
import {describe, expect, expectTypeOf, it} from 'vitest'
import type {AnswerFormat} from '../../../src/interfaces/conversations/format.js'
import type {ConversationEnv} from '../../../src/interfaces/conversations/routes.js'
import type {ApiKeyRow} from '../../../src/interfaces/conversations/tables.js'

/*
 * Interface E's variables (the negotiated format, the authenticated key) are typed on E's own
 * sub-app (ConversationEnv), not in Hono's global ContextVariableMap: another app's routes cannot
 * name them. `npm run typecheck` checks the @ts-expect-error below.
 */

describe("interface E's context variables", () => {
  it('are typed on E’s sub-app', () => {
    const e = new Hono<ConversationEnv>()
    e.get('/', (c) => {
      expectTypeOf(c.get('conversationFormat')).toEqualTypeOf<AnswerFormat>()
      expectTypeOf(c.get('conversationKey')).toEqualTypeOf<ApiKeyRow>()
      return c.text('ok')
    })
    expect(e.routes).toHaveLength(1)
  })

  it('are unknown to any other app', () => {
    const other = new Hono()
    other.get('/', (c) => {
      // @ts-expect-error: only ConversationEnv declares it
      c.get('conversationFormat')
      // @ts-expect-error: only ConversationEnv declares it
      c.get('conversationKey')
      return c.text('ok')
    })
    expect(other.routes).toHaveLength(1)
  })
})
