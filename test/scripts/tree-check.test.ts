import {execFileSync} from 'node:child_process'
import {mkdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {isStrayStore, parseStatus, snapshotTree, treeChanges} from '../../scripts/tree-check.mjs'
import {tempDir} from '../helpers/cli.js'

describe("npm test's work tree check (scripts/tree-check.mjs)", () => {
  it('reads git status -z, renames included', () => {
    expect(parseStatus(' M a.ts\0?? b c.txt\0R  new.ts\0old.ts\0!! x.db\0')).toEqual(
      new Map([
        ['a.ts', ' M'],
        ['b c.txt', '??'],
        ['new.ts', 'R '],
        ['x.db', '!!'],
      ]),
    )
  })

  it('counts ignored stores and keys outside node_modules and dist', () => {
    for (const path of ['medpanel.db', 'medpanel.db.key', 'medpanel.db-wal', 'medpanel.db-shm', 'sub/partner.db', 'x.key']) expect(isStrayStore(path), path).toBe(true)
    for (const path of ['node_modules/pkg/test.db', 'dist/x.key', 'oclif.manifest.json', 'coverage/index.html']) expect(isStrayStore(path), path).toBe(false)
  })

  it('in a real checkout: reports only what appeared or changed since the first snapshot', () => {
    const root = tempDir('medpanel-tree-')
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], {cwd: root, stdio: 'pipe'})
    git('init', '-q')
    writeFileSync(join(root, '.gitignore'), '*.db\n*.key\nnode_modules/\n')
    writeFileSync(join(root, 'tracked.txt'), 'one\n')
    writeFileSync(join(root, 'mine.txt'), 'committed\n')
    git('add', '.')
    git('commit', '-q', '-m', 'start')
    // The developer's own state before the run: an edit, a new file, their own store.
    writeFileSync(join(root, 'mine.txt'), 'edited before the run\n')
    writeFileSync(join(root, 'draft.txt'), 'mine\n')
    writeFileSync(join(root, 'own.db'), 'a store of their own\n')
    const before = snapshotTree(root)!
    expect(treeChanges(before, snapshotTree(root)!)).toEqual([])

    // What a careless test leaves.
    writeFileSync(join(root, 'tracked.txt'), 'two\n')
    mkdirSync(join(root, 'deep'))
    writeFileSync(join(root, 'deep', 'left.txt'), 'x\n')
    writeFileSync(join(root, 'medpanel.db'), 'store\n')
    writeFileSync(join(root, 'medpanel.db.key'), 'key\n')
    writeFileSync(join(root, 'own.db'), 'rewritten by a test run\n')
    mkdirSync(join(root, 'node_modules'))
    writeFileSync(join(root, 'node_modules', 'cache.db'), 'not ours\n')
    expect(treeChanges(before, snapshotTree(root)!)).toEqual([' M tracked.txt', '!! medpanel.db', '!! medpanel.db.key', '!! own.db', '?? deep/left.txt'])
  })

  it('is skipped outside a git checkout', () => {
    expect(snapshotTree(tempDir('medpanel-not-git-'))).toBeUndefined()
  })
})
