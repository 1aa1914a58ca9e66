import {spawnSync} from 'node:child_process'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {cliArgv, tempDir} from '../helpers/cli.js'

/**
 * A real full disk: a 2 MB tmpfs (room for the migrated schema, not for the seed) mounted in a user and mount namespace of its own (no root needed
 * on the machine), holding the store. Where namespaces are not allowed the test says so and fails
 * rather than passing without having tried.
 */
describe('the CLI on a full disk', () => {
  it('answers with one Error line naming the store file, exit 1, nothing on stdout', () => {
    const mountPoint = tempDir('medpanel-full-')
    const store = join(mountPoint, 'store.db')
    const argv = cliArgv(['seed-posts', '--db', store, '--count', '20000', '--comments', '3', '--json'])
    const run = spawnSync(
      'unshare',
      ['--user', '--map-root-user', '--mount', 'sh', '-c', 'mount -t tmpfs -o size=2m tmpfs "$1" && shift && exec "$@"', 'sh', mountPoint, ...argv],
      {
        encoding: 'utf8',
        timeout: 120_000,
      },
    )
    if (/Operation not permitted|unshare failed/i.test(run.stderr) && run.stdout === '') {
      throw new Error(`this machine does not allow user namespaces, so a full disk cannot be simulated here: ${run.stderr.trim()}`)
    }
    expect(run.status).toBe(1)
    expect(run.stdout).toBe('')
    const lines = run.stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toBe(`Error: the store ${store} is full (no space left on its disk, or at its size limit); the write that failed was not saved`)
  })
})
