import {describe, expect, it} from 'vitest'
import {newTimeOrderedUuid, newUuid} from '../../src/lib/ids.js'

describe('ids', () => {
  it('makes v4 UUIDs for ids that must not be guessed', () => {
    expect(newUuid()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  })

  it('makes v7 UUIDs for the ledger: the time first, so later ids sort after earlier ones, and random after it', () => {
    const at = Date.UTC(2026, 10, 24, 12, 0, 0, 123)
    const id = newTimeOrderedUuid(at)
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(at)
    const ids = Array.from({length: 50}, (_, i) => newTimeOrderedUuid(at + i))
    expect([...ids].sort()).toEqual(ids)
    expect(new Set(Array.from({length: 1000}, () => newTimeOrderedUuid(at))).size).toBe(1000)
  })
})
