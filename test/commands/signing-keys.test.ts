import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {signingKey} from '../../src/interfaces/signon/signing-keys.js'
import {cli, cliJson, tempDir} from '../helpers/cli.js'
import {makeStoreFile, openCliStore} from '../helpers/store.js'

interface Rotation {
  current: {kid: string; alg: string; signs_from: string}[]
  retired: {kid: string; published_until: string}[]
}
interface KeyView {
  kid: string
  alg: string
  status: string
  created_at: string
  retired_at: string | null
  published_until: string | null
}

/** A retired key stays published an ID token's hour plus a minute of clock skew. */
const GRACE_MS = (3600 + 60) * 1000
const T0 = '2026-03-01T09:00:00.000Z'
const T1 = '2026-03-01T09:10:00.000Z'
const UNTIL = new Date(Date.parse(T1) + GRACE_MS).toISOString()
const at = (instant: string) => ({MEDPANEL_NOW: instant})
const kids = (keys: {kid: string}[]) => keys.map((key) => key.kid).sort()

describe('rotate-signing-key and list-signing-keys', () => {
  it('start new keys, keep the replaced ones published for one ID-token lifetime plus the skew, then drop them', async () => {
    const db = join(tempDir(), 'keys.db')
    const store = ['--db', db]
    await makeStoreFile(db)
    expect(cliJson<KeyView[]>(['list-signing-keys', ...store])).toEqual([])
    expect(cli(['list-signing-keys', ...store]).stdout).toMatch(/^No signing keys yet/)

    const first = cliJson<Rotation>(['rotate-signing-key', ...store], at(T0))
    expect(first.current.map((key) => key.alg)).toEqual(['RS256', 'ES256'])
    expect(first.retired).toEqual([])

    // --now: a leak; the old keys stop signing at once.
    const second = cliJson<Rotation>(['rotate-signing-key', ...store, '--now'], at(T1))
    expect(kids(second.retired)).toEqual(kids(first.current))
    expect(second.retired.every((key) => key.published_until === UNTIL)).toBe(true)
    expect(kids(second.current)).not.toEqual(kids(first.current))

    const listed = cliJson<KeyView[]>(['list-signing-keys', ...store], at(T1))
    expect(listed).toHaveLength(4)
    for (const key of second.current) expect(listed).toContainEqual({kid: key.kid, alg: key.alg, status: 'current', created_at: T1, retired_at: null, published_until: null})
    for (const key of first.current) expect(listed).toContainEqual({kid: key.kid, alg: key.alg, status: 'published', created_at: T0, retired_at: T1, published_until: UNTIL})
    const human = cli(['list-signing-keys', ...store], at(T1)).stdout
    expect(human).toMatch(/^kid\s+alg\s+status\s+created_at\s+retired_at\s+published_until$/m)
    expect(human).toContain(`${first.current[0]!.kid}  ${first.current[0]!.alg}  published`)
    // Never a private half, sealed or not.
    expect(JSON.stringify(listed)).not.toMatch(/sealed:|PRIVATE|"d"/)

    // Once the last ID token of the old keys has expired they are out of jwks_uri...
    const later = cliJson<KeyView[]>(['list-signing-keys', ...store], at(UNTIL))
    expect(kids(later.filter((key) => key.status === 'expired'))).toEqual(kids(first.current))
    // ...and the next rotation deletes them as it retires the second pair.
    const third = cli(['rotate-signing-key', ...store, '--now'], at(UNTIL))
    expect(third.status, third.stderr).toBe(0)
    expect(third.stdout).toMatch(/^New ID-token signing keys, published now: \S+ \(RS256\), \S+ \(ES256\)\.$/m)
    for (const key of second.current) expect(third.stdout).toContain(`${key.kid}  signs until ${UNTIL}, published until ${new Date(Date.parse(UNTIL) + GRACE_MS).toISOString()}`)
    const after = cliJson<KeyView[]>(['list-signing-keys', ...store], at(UNTIL))
    expect(after.map((key) => key.status).sort()).toEqual(['current', 'current', 'published', 'published'])
    expect(after.some((key) => first.current.some((old) => old.kid === key.kid))).toBe(false)

    // The keys the CLI made are the ones the service signs with.
    const opened = await openCliStore(db)
    try {
      const current = after.filter((key) => key.status === 'current')
      for (const key of current) expect((await signingKey(opened, key.alg as 'RS256' | 'ES256', new Date(UNTIL))).kid).toBe(key.kid)
    } finally {
      await opened.close()
    }
  })

  it('without --now, the new keys are listed as next and take over ten minutes later', () => {
    const store = ['--db', join(tempDir(), 'lead.db')]
    const first = cliJson<Rotation>(['rotate-signing-key', ...store], at(T0))
    const second = cliJson<Rotation>(['rotate-signing-key', ...store], at(T0))
    expect(second.current.every((key) => key.signs_from === T1)).toBe(true)
    const status = (instant: string) => Object.fromEntries(cliJson<KeyView[]>(['list-signing-keys', ...store], at(instant)).map((key) => [key.kid, key.status]))
    const before = status(T0)
    for (const key of first.current) expect(before[key.kid]).toBe('current')
    for (const key of second.current) expect(before[key.kid]).toBe('next')
    const after = status(T1)
    for (const key of first.current) expect(after[key.kid]).toBe('published')
    for (const key of second.current) expect(after[key.kid]).toBe('current')
  })

  it('rotate-secret-key re-seals the signing keys too, and they still sign afterwards', async () => {
    const db = join(tempDir(), 'reseal.db')
    const store = ['--db', db]
    const made = cliJson<Rotation>(['rotate-signing-key', ...store])
    const rotation = cliJson<{resealed: number}>(['rotate-secret-key', ...store])
    expect(rotation.resealed).toBe(2)
    // This test process never opened these keys: signing needs the re-sealed private halves.
    const opened = await openCliStore(db)
    try {
      for (const key of made.current) expect((await signingKey(opened, key.alg as 'RS256' | 'ES256', new Date())).kid).toBe(key.kid)
    } finally {
      await opened.close()
    }
  })

  it('refuses what it does not take with one Error line, changing nothing', () => {
    const db = join(tempDir(), 'refuse.db')
    const store = ['--db', db]
    const made = cliJson<Rotation>(['rotate-signing-key', ...store])
    for (const args of [
      ['rotate-signing-key', ...store, 'RS256'],
      ['rotate-signing-key', ...store, '--alg', 'RS256'],
      ['list-signing-keys', ...store, '--all'],
    ]) {
      const result = cli(args)
      expect(result.status, args.join(' ')).toBe(1)
      expect(result.stdout).toBe('')
      expect(result.stderr).toMatch(/^Error: [^\n]+\n$/)
    }
    const listed = cliJson<KeyView[]>(['list-signing-keys', ...store])
    expect(kids(listed)).toEqual(kids(made.current))
    expect(listed.every((key) => key.status === 'current')).toBe(true)
  })
})
