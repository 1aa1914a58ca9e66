import {readdirSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

/** The repository's root, which the tests that read the tree name files from. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** Every file under `dir` (a path from the root) whose name matches `keep`, as paths from the root. */
export function filesUnder(dir: string, keep: RegExp): string[] {
  return readdirSync(join(ROOT, dir), {withFileTypes: true}).flatMap((entry) => {
    const path = `${dir}/${entry.name}`
    if (entry.isDirectory()) return filesUnder(path, keep)
    return keep.test(entry.name) ? [path] : []
  })
}
