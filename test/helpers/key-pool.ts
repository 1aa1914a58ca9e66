import {beforeEach, vi} from 'vitest'

/*
 * RSA signing keys, reused from one test to the next in a test worker (the `shared` project's
 * setup file: see vitest.config.ts). Every store a test opens makes its own ID-token keys on first
 * use, and an RSA 2048 key pair takes 100-250 ms of a core to generate: three dozen of them were
 * several seconds of `npm run test:fast`. Here the n-th RSA pair a test asks for is the n-th one
 * this worker generated, for real, by jose; so within a test every key is new (a rotation still
 * gets another key), and only a later test in the same worker meets the same keys again, in
 * another store. EC keys cost little and are made anew. test/interfaces/signon/signing-keys.test.ts
 * runs isolated, without this, as does every CLI and `serve` a test starts.
 */
const pool: (Promise<unknown> | undefined)[] = []
let used = 0

beforeEach(() => {
  used = 0
})

vi.mock('jose', async (importOriginal) => {
  const real = await importOriginal<typeof import('jose')>()
  return {
    ...real,
    generateKeyPair: ((alg: string, options?: Parameters<typeof real.generateKeyPair>[1]) => {
      if (alg !== 'RS256' || options?.modulusLength !== 2048 || options.extractable !== true) return real.generateKeyPair(alg, options)
      const index = used++
      if (!pool[index]) {
        const made = real.generateKeyPair(alg, options)
        pool[index] = made
        // A failure is not kept: the next test to need this key tries again.
        made.catch(() => {
          if (pool[index] === made) pool[index] = undefined
        })
      }
      return pool[index]!
    }) as typeof real.generateKeyPair,
  }
})
