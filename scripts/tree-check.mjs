// What `npm test` left behind in the work tree (scripts/test.mjs): tests write only in temporary
// directories, and a store or key file written in the checkout is how a key once got committed.
// A snapshot is taken before the runs and another after; only what is new or changed in between
// counts, so a developer's own uncommitted edits do not.
import {spawnSync} from 'node:child_process'
import {statSync} from 'node:fs'
import {join} from 'node:path'

/** Ignored files that are stores or keys: .gitignore hides them from `git status`, not from this. */
const STORE_FILE = /(\.db|\.db-wal|\.db-shm|\.key)$/
/** Ignored trees that builds and installs write, where such names are not ours. */
const BUILD_TREES = /^(node_modules|dist)\//

/**
 * `git status --porcelain -z` output as {path: status}. Entries are NUL-separated "XY path"; a
 * rename or copy carries its source as one more field, skipped here.
 */
export function parseStatus(text) {
  const entries = new Map()
  const fields = text.split('\0')
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]
    if (field.length < 4) continue
    const status = field.slice(0, 2)
    entries.set(field.slice(3), status)
    if (status[0] === 'R' || status[0] === 'C') i++
  }
  return entries
}

/** Whether an ignored path is a store or key file written in the tree (not under node_modules/ or dist/). */
export function isStrayStore(path) {
  return STORE_FILE.test(path) && !BUILD_TREES.test(path)
}

function git(root, args) {
  return spawnSync('git', args, {cwd: root, encoding: 'utf8', maxBuffer: 64 << 20})
}

/**
 * The tree as `git status` sees it (untracked files one by one), plus every ignored store or key
 * file with its size and modification time, so a store rewritten in place counts as changed.
 * Undefined outside a git checkout (a tarball, an exported tree): nothing to compare there.
 */
export function snapshotTree(root) {
  const inside = git(root, ['rev-parse', '--is-inside-work-tree'])
  if (inside.status !== 0 || inside.stdout.trim() !== 'true') return undefined
  const visible = git(root, ['status', '--porcelain', '-z', '--untracked-files=all'])
  const ignored = git(root, ['status', '--porcelain', '-z', '--untracked-files=all', '--ignored=matching'])
  if (visible.status !== 0 || ignored.status !== 0) return undefined
  const entries = parseStatus(visible.stdout)
  for (const [path, status] of parseStatus(ignored.stdout)) {
    if (status !== '!!' || !isStrayStore(path)) continue
    let signature = 'gone'
    try {
      const stat = statSync(join(root, path))
      signature = `${stat.size}:${stat.mtimeMs}`
    } catch {
      // removed between the listing and the stat
    }
    entries.set(path, `!! ${signature}`)
  }
  return entries
}

/** Paths new or changed from `before` to `after`, each with its status (`?? x`, ` M y`, `!! z.db`). */
export function treeChanges(before, after) {
  const changes = []
  for (const [path, status] of after) {
    if (before.get(path) === status) continue
    changes.push(`${status.startsWith('!!') ? '!!' : status} ${path}`)
  }
  return changes.sort()
}
