import {describe, expect, it} from 'vitest'
import {readEnvironment, rereadEnvironment} from '../../src/config.js'
import {DEFAULT_PASSWORD_COST, hashPassword, matchesDigest, needsRehash, sha256, verifyPassword} from '../../src/lib/hashing.js'

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

describe('matchesDigest', () => {
  it('is true only for the value whose SHA-256 the hex digest is, and false for a digest that is not one', () => {
    // SHA-256 of "abc" (FIPS 180-2, appendix B.1), written out rather than computed by the code under test.
    const abc = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'
    expect(sha256('abc')).toBe(abc)
    expect(matchesDigest('abc', abc)).toBe(true)
    expect(matchesDigest('abd', abc)).toBe(false)
    expect(matchesDigest('', abc)).toBe(false)
    for (const notADigest of ['', abc.slice(0, 62), `${abc}00`, 'x'.repeat(64), abc.replace(/a/g, 'g')]) expect(matchesDigest('abc', notADigest)).toBe(false)
  })
})
