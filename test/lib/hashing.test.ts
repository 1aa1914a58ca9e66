import {describe, expect, it} from 'vitest'
import {readEnvironment, rereadEnvironment} from '../../src/config.js'
import {DEFAULT_PASSWORD_COST, hashPassword, needsRehash, verifyPassword} from '../../src/lib/hashing.js'

describe('password hashes', () => {
  it("ships at OWASP's floor for scrypt (N = 2^17, r = 8, p = 1) and verifies what it made", async () => {
    const saved = process.env.MEDPANEL_PASSWORD_COST
    delete process.env.MEDPANEL_PASSWORD_COST
    rereadEnvironment()
    try {
      expect(DEFAULT_PASSWORD_COST).toBe(17)
      const stored = await hashPassword('a long enough password')
      expect(stored).toMatch(/^scrypt\$131072\$8\$1\$/)
      expect(await verifyPassword('a long enough password', stored)).toBe(true)
      expect(await verifyPassword('a wrong password', stored)).toBe(false)
      expect(needsRehash(stored)).toBe(false)
    } finally {
      process.env.MEDPANEL_PASSWORD_COST = saved
      rereadEnvironment()
    }
  })

  it('refuses a cost outside 14 to 20 as the settings are read, and a damaged stored hash cannot demand gigabytes', async () => {
    for (const bad of ['13', '21', '30', '15.5', 'fast', '-17']) {
      expect(() => readEnvironment({MEDPANEL_PASSWORD_COST: bad})).toThrow(`MEDPANEL_PASSWORD_COST must be an integer from 14 to 20 (got "${bad}")`)
    }
    expect(readEnvironment({MEDPANEL_PASSWORD_COST: '14'}).passwordCost).toBe(14)
    expect(readEnvironment({MEDPANEL_PASSWORD_COST: '20'}).passwordCost).toBe(20)
    expect(readEnvironment({}).passwordCost).toBe(17)
    expect(await verifyPassword('x', 'scrypt$1073741824$8$1$AAAA$AAAA')).toBe(false)
  })
})
