import {OpenAPIHono} from '@hono/zod-openapi'
import {type ContextVariableMap, Hono} from 'hono'
import {describe, expect, expectTypeOf, it} from 'vitest'
import type {LiveToken} from '../../src/grants/service.js'
import {bearerToken} from '../../src/http/bearer-auth.js'
import type {HttpEnv, TokenEnv} from '../../src/http/env.js'

// These checks are types: `npm run typecheck` (tsc over test/ too) fails when one no longer holds,
// e.g. when a global ContextVariableMap gives every route a token again. The handlers never run.

describe('the context variables a route can read', () => {
  it('are no global map: none names the token', () => {
    expectTypeOf<'token' extends keyof ContextVariableMap ? true : false>().toEqualTypeOf<false>()
    expectTypeOf<'requestId' extends keyof ContextVariableMap ? true : false>().toEqualTypeOf<false>()
  })

  it('a route that did not authenticate a token cannot read one', () => {
    const plain = new Hono<HttpEnv>()
    plain.get('/', (c) => {
      // @ts-expect-error no bearerToken in front of this route: no token to read
      c.get('token')
      expectTypeOf(c.get('requestId')).toEqualTypeOf<string>()
      return c.text('ok')
    })
    const untyped = new OpenAPIHono()
    untyped.get('/', (c) => {
      // @ts-expect-error a sub-app without an Env has no variables at all
      c.get('token')
      return c.text('ok')
    })
    expect(plain).toBeDefined()
  })

  it('a route behind bearer auth reads the token it authenticated', () => {
    const authed = new OpenAPIHono<TokenEnv>()
    authed.use('*', bearerToken({verify: async () => ({}) as LiveToken, origin: () => 'https://panel.example'}))
    authed.get('/', (c) => {
      expectTypeOf(c.get('token')).toEqualTypeOf<LiveToken>()
      return c.text(c.get('token').clientId)
    })
    expect(authed).toBeDefined()
  })
})
