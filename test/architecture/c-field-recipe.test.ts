import {readdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, expectTypeOf, it} from 'vitest'
import type {z} from 'zod'
import {createApp} from '../../src/app.js'
import {withdrawalRequest} from '../../src/interfaces/balance/body.js'
import {Money} from '../../src/interfaces/balance/money.js'
import {withdrawalBodySchema, type WithdrawalRequest} from '../../src/interfaces/balance/schema.js'
import {ManualClock} from '../../src/lib/clock.js'
import {openTestStore} from '../helpers/store.js'

/*
 * The recipe for adding a field to C's withdrawal, and what keeps it short. A field is added in
 * these places only, tried once with a throwaway optional field (`reference`, kept in the
 * withdrawal's properties): 3 source files, within the goal of 5.
 *
 * 1. schema.ts: the field in withdrawalBodySchema. The route's document, the edge parser's check,
 *    the WithdrawalRequest type and the Idempotency-Key fingerprint all follow from it.
 * 2. decide.ts: what the decision does with it (withdrawalLines writes the ledger lines).
 * 3. commands/withdraw.ts: its flag, handed to withdrawalRequest with the others.
 *
 * A field that needs a column of its own adds a migration (migrations/ and its index) and the
 * column's type in tables.ts.
 */
const RECIPE = [
  {file: 'src/interfaces/balance/schema.ts', holds: 'export const withdrawalBodySchema = z'},
  {file: 'src/interfaces/balance/decide.ts', holds: 'function withdrawalLines('},
  {file: 'commands/withdraw.ts', holds: 'withdrawalRequest({'},
]

const root = join(import.meta.dirname, '../..')
const read = (file: string) => readFileSync(join(root, file), 'utf8')
const sources = (dir: string): string[] =>
  readdirSync(join(root, dir), {recursive: true, encoding: 'utf8'})
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(dir, file))

describe("the recipe for adding a field to C's withdrawal", () => {
  it('names at most 5 source files, each still holding what the recipe changes there', () => {
    expect(RECIPE.length).toBeLessThanOrEqual(5)
    for (const {file, holds} of RECIPE) expect(read(file), file).toContain(holds)
  })

  it('types the request from the schema, so a field added there needs no type of its own', () => {
    type Fields = keyof z.output<typeof withdrawalBodySchema>
    expectTypeOf<Exclude<Fields, keyof WithdrawalRequest>>().toEqualTypeOf<never>()
    expectTypeOf<WithdrawalRequest['amount']>().toEqualTypeOf<Money>()
    const request = withdrawalRequest({type: 'paypal', amount: '10.10', member_details: {}})
    expect(request.amount).toBeInstanceOf(Money)
    expect(request.amountWritten).toBe('10.10')
  })

  it("documents the schema's own fields, so /openapi.json follows a new one", async () => {
    const store = await openTestStore()
    try {
      const app = createApp({store, clock: new ManualClock(), log: () => {}})
      const doc = (await (await app.request('/openapi.json')).json()) as {components: {schemas: Record<string, {properties: object}>}}
      expect(Object.keys(doc.components.schemas.WithdrawalRequest!.properties)).toEqual(Object.keys(withdrawalBodySchema.shape))
    } finally {
      await store.close()
    }
  })
})

describe('one edge parser for a withdrawal body', () => {
  const files = [...sources('src'), ...sources('commands')]

  it('reads the schema only in the edge (body.ts), the document (openapi.ts) and where it is declared', () => {
    const users = files.filter((file) => /\bwithdrawalBodySchema\b/.test(read(file)))
    expect(users.sort()).toEqual(['src/interfaces/balance/body.ts', 'src/interfaces/balance/openapi.ts', 'src/interfaces/balance/schema.ts'])
  })

  it('has no second JSON reader: no lossless-json, no JSON.parse of a body in the balance routes, the exact reader used by the edge alone', () => {
    expect(files.filter((file) => read(file).includes("from 'lossless-json'"))).toEqual([])
    expect(read('src/interfaces/balance/routes.ts')).not.toContain('JSON.parse')
    const readers = files.filter((file) => /import \{[^}]*\breadExactJson\b/.test(read(file)))
    expect(readers).toEqual(['src/interfaces/balance/body.ts'])
  })
})
