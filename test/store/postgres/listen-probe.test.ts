import pg from 'pg'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {CacheVersion, listenForChanges, listenerName, PROBE_CHANNEL} from '../../../src/store/postgres/listen.js'
import {freshDatabaseUrl, onPostgres} from '../../helpers/store.js'

/*
 * A listener on a URL of its own (serve --listen-url) caches only once it has heard the store's
 * own test notification there (src/store/postgres/listen.ts). A URL that never hears it leaves
 * the caches off for good; but once a URL has been heard, a later probe that cannot finish (the
 * store unreachable for a moment, the connection lost while probing) is a lost session like any
 * other: the listener tries again and caches once a probe is heard, instead of giving up.
 */
describe.skipIf(!onPostgres)('the listen URL probe', () => {
  let url: string
  let admin: pg.Client
  const until = async (what: string, check: () => boolean | Promise<boolean>, limitMs = 20_000) => {
    const started = performance.now()
    while (!(await check())) {
      if (performance.now() - started > limitMs) throw new Error(`${what}: not within ${limitMs} ms`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }
  const killListener = () => admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and application_name = $1', [listenerName()])

  beforeAll(async () => {
    url = await freshDatabaseUrl()
    admin = new pg.Client({connectionString: url})
    await admin.connect()
  })
  afterAll(async () => {
    await admin?.end()
  })

  /**
   * Hears the URL once, then breaks the probe and kills the listener: the listener must keep
   * probing, caching nothing meanwhile, and cache again once a probe is heard. A probe that
   * `throws` cannot reach the store; one `unheard` is sent to nowhere this listener hears, as when
   * the answer comes after `probeTimeoutMs` (a busy moment).
   */
  async function retriedUntilHeard(broken: 'throws' | 'unheard', probeTimeoutMs: number) {
    let breaking = false
    let sent = 0
    const probe = async (token: string) => {
      sent++
      if (breaking && broken === 'throws') throw new Error('the store cannot be reached right now')
      if (!breaking) await admin.query('select pg_notify($1, $2)', [PROBE_CHANNEL, token])
    }
    const version = new CacheVersion()
    const stop = listenForChanges(url, version, {probe, probeTimeoutMs, minRetryMs: 20, maxRetryMs: 200})
    try {
      await until('the first probe is heard', () => version.current() !== undefined)
      breaking = true
      const before = sent
      await killListener()
      // The listener reconnects and probes again, and again, while probes fail: no caching.
      await until('two more probes were tried', () => sent >= before + 2)
      expect(version.current()).toBeUndefined()
      expect(version.off).toBeUndefined()
      breaking = false
      await until('caching resumes', () => version.current() !== undefined)
      expect(version.off).toBeUndefined()
    } finally {
      await stop()
    }
  }

  it('after the URL was heard once, a probe that fails is retried, and caching resumes once one is heard', async () => {
    await retriedUntilHeard('throws', 2_000)
  })

  it('after the URL was heard once, a probe sent but not heard in time (a busy moment) is retried too', async () => {
    await retriedUntilHeard('unheard', 300)
  })

  it('a URL on which the probe is never heard leaves the caches off for good', async () => {
    // The probe goes nowhere the listener hears: as a URL that reaches another database.
    const version = new CacheVersion()
    const stop = listenForChanges(url, version, {probe: async () => undefined, probeTimeoutMs: 300, minRetryMs: 20, maxRetryMs: 200})
    try {
      await until('the listener gives up', () => version.off === 'unheard')
      expect(version.current()).toBeUndefined()
    } finally {
      await stop()
    }
  })
})
