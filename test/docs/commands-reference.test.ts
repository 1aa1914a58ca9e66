import {spawnSync} from 'node:child_process'
import {copyFileSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import {tempDir} from '../helpers/cli.js'
import {onPostgres} from '../helpers/store.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
/** The line naming the Node that generated the file: not part of what the file documents. */
const withoutRuntime = (text: string) => text.replace(/^medpanel\/\S+ \S+ node-v\S+$/m, 'medpanel/VERSION')

// What the reference says does not depend on the runtime or the store: checked once, on Node with
// better-sqlite3 (any plain vitest run included).
describe.skipIf(onPostgres || process.env.MEDPANEL_SQLITE_DRIVER === 'node:sqlite')('docs/commands.md', () => {
  it('is what `oclif readme` generates from the commands as they are, with the install note (npm run docs:commands)', () => {
    const copy = join(tempDir('medpanel-docs-'), 'commands.md')
    copyFileSync(join(root, 'docs/commands.md'), copy)
    const run = spawnSync(process.execPath, [join(root, 'scripts/docs-commands.mjs'), copy], {cwd: root, encoding: 'utf8', timeout: 120_000})
    expect(run.status, run.stderr).toBe(0)
    const committed = withoutRuntime(readFileSync(join(root, 'docs/commands.md'), 'utf8'))
    const fresh = withoutRuntime(readFileSync(copy, 'utf8'))
    expect(fresh, 'docs/commands.md is stale: run npm run docs:commands').toBe(committed)
    // The package is private: the reference says how medpanel is really installed.
    expect(committed).not.toContain('npm install -g')
    expect(committed).toContain('npm ci')
  })
})
