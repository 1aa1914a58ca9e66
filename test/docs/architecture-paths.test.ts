import {existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'

/*
 * docs/architecture.md names the files it describes; a file moved or removed without it would
 * leave the map pointing nowhere. Every path it names under the repository's folders must exist,
 * except a pattern (NAME, *) and a file it names as it was ("then src/…", "since split").
 */
const root = fileURLToPath(new URL('../..', import.meta.url))
const text = readFileSync(join(root, 'docs/architecture.md'), 'utf8')
const PATH = /(?<![A-Za-z0-9_./-])(?:src|test|scripts|commands|bench|deploy|docs|examples|bin)\/[A-Za-z0-9_./-]*[A-Za-z0-9_]/g

describe('docs/architecture.md', () => {
  it('names only files and folders that exist', () => {
    const missing = new Set<string>()
    for (const match of text.matchAll(PATH)) {
      const path = match[0]
      const before = text.slice(Math.max(0, match.index - 6), match.index)
      if (/NAME|\*/.test(path) || /\bthen\s$/.test(before)) continue
      if (!existsSync(join(root, path))) missing.add(path)
    }
    expect([...missing]).toEqual([])
  })
})
