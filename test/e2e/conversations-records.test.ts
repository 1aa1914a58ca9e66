import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {DEMO_API_KEY} from '../../src/demo-data.js'
import {startCli, tempDir, type RunningCli} from '../helpers/cli.js'
import {onPostgres, openCliStore, storeFlags} from '../helpers/store.js'
import {holdWriteLock} from '../helpers/write-lock.js'

/*
 * A summary call's record (conversation_calls) is written after its answer, not before it
 * (docs/conversations.md, "Ids"): the answer never waits for the store's write lock, and a clean
 * stop of serve still commits every record of a call it answered.
 */

const running: RunningCli[] = []

afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.stop('SIGKILL')))
})

const summary = (url: string, term: string) =>
  fetch(`${url}/conversations/summary?terms%5B%5D=${term}&start=2000-01-01T00:00:00Z&end=2100-01-01T00:00:00Z`, {
    headers: {Accept: 'application/vnd.service-v1+json', 'X-Service-Conversation-API-Key': DEMO_API_KEY},
  })

async function demoServe(): Promise<{server: RunningCli; file: string}> {
  const file = join(tempDir('medpanel-e-records-'), 'demo.db')
  const server = await startCli(['serve', '--demo', '--port', '0', '--no-worker', ...storeFlags(file)])
  running.push(server)
  return {server, file}
}

async function recordedIds(file: string): Promise<string[]> {
  const store = await openCliStore(file)
  try {
    return (await store.db.selectFrom('conversation_calls').select('id').where('method', '=', 'summary').execute()).map((row) => row.id as string)
  } finally {
    await store.close()
  }
}

describe('the records of summary calls', () => {
  it('are written after the answers, and every answered call is recorded by a clean stop', async () => {
    const {server, file} = await demoServe()
    const ids: string[] = []
    // Answers back to back, SIGTERM straight after the last: records still queued are committed before serve exits.
    for (const term of ['chest', 'pain', 'metformin', 'fibrillation', 'zzqxjv']) {
      const answer = await summary(server.url, term)
      expect(answer.status).toBe(200)
      ids.push(((await answer.json()) as {id: string}).id)
    }
    expect(await server.stop('SIGTERM')).toBe(0)
    expect((await recordedIds(file)).sort()).toEqual([...ids].sort())
  })

  it.skipIf(onPostgres)('answer while another process holds the write lock, and the record follows once it is free', async () => {
    const {server, file} = await demoServe()
    // The search threads and caches are warm before the lock is taken.
    expect((await summary(server.url, 'chest')).status).toBe(200)
    const lock = await holdWriteLock(file, [], 3_000)
    let lockReleased = false
    void lock.done.then(() => {
      lockReleased = true
    })
    const answer = await summary(server.url, 'pain')
    expect(answer.status).toBe(200)
    const {id} = (await answer.json()) as {id: string}
    // The answer came while the lock was held: the call did not wait for its record's commit.
    expect(lockReleased).toBe(false)
    expect(await lock.done).toBe(0)
    expect(await server.stop('SIGTERM')).toBe(0)
    expect(await recordedIds(file)).toContain(id)
  })
})
