import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {startCli, tempDir} from '../helpers/cli.js'
import {makeStoreFile, storeFlags} from '../helpers/store.js'

/** The line serve logs on stopping about what it wrote to the store, parsed from --log-format json. */
function writeSummary(stderr: string): {msg: string; writes: number; commits: number} | undefined {
  for (const line of stderr.split('\n')) {
    if (!line.startsWith('{')) continue
    const entry = JSON.parse(line) as {msg?: string; writes?: number; commits?: number}
    if (entry.msg === 'store write transactions') return entry as {msg: string; writes: number; commits: number}
  }
  return undefined
}

describe('an idle serve', () => {
  it('polls its delivery outbox without writing to the store, and says so when it stops', async () => {
    const dir = tempDir()
    const file = join(dir, 'medpanel.db')
    await makeStoreFile(file)
    const serve = await startCli(['serve', ...storeFlags(file), '--port', '0', '--log-format', 'json'])
    // The worker polls every 500 ms: a few seconds are several polls, each of which used to commit
    // a claim transaction even with nothing to send.
    expect((await fetch(`${serve.url}/healthz`)).status).toBe(200)
    await new Promise((resolve) => setTimeout(resolve, 3000))
    expect(await serve.stop('SIGTERM')).toBe(0)
    expect(writeSummary(serve.stderr()), serve.stderr()).toMatchObject({writes: 0, commits: 0})
  })

  it('reads as text what the count is', async () => {
    const dir = tempDir()
    const file = join(dir, 'medpanel.db')
    await makeStoreFile(file)
    const serve = await startCli(['serve', ...storeFlags(file), '--port', '0', '--log-format', 'text'])
    await new Promise((resolve) => setTimeout(resolve, 1200))
    expect(await serve.stop('SIGTERM')).toBe(0)
    expect(serve.stderr()).toContain('store: since start, 0 write transactions (nothing changed)')
  })
})
