import {vi} from 'vitest'

/*
 * Password hashing, remembered per test worker (the `shared` project's setup file: see
 * vitest.config.ts). Every hash and verdict is still real scrypt, made by src/lib/hashing.ts;
 * only a repeat of the same input in the same worker is answered from memory. Hundreds of tests
 * add the same few members and sign them in again and again, and each scrypt at the tests' cost
 * (2^14) takes about 85 ms of a core: 409 of them were a fifth of `npm run test:fast`'s CPU.
 * Two members given one password share its hash (salt included), which nothing a test checks
 * depends on; the hashing itself is tested without this (test/lib/hashing.test.ts runs isolated),
 * and every CLI and `serve` a test starts hashes for real.
 */
vi.mock('../../src/lib/hashing.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/lib/hashing.js')>()
  const hashes = new Map<string, Promise<string>>()
  const verdicts = new Map<string, Promise<boolean>>()
  const remembered = <T>(memo: Map<string, Promise<T>>, key: string, make: () => Promise<T>): Promise<T> => {
    let value = memo.get(key)
    if (!value) {
      value = make()
      memo.set(key, value)
      // A failure is not remembered: the next call tries again.
      value.catch(() => memo.delete(key))
    }
    return value
  }
  return {
    ...real,
    // Keyed by the parameters new hashes are made with too: a test may change the cost.
    hashPassword: (password: string) => remembered(hashes, `${real.decoyHash()}\n${password}`, () => real.hashPassword(password)),
    verifyPassword: (password: string, stored: string) => remembered(verdicts, `${stored}\n${password}`, () => real.verifyPassword(password, stored)),
  }
})
