import {existsSync, readdirSync, readFileSync, statSync} from 'node:fs'
import {basename, dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {filesUnder} from '../helpers/tree.js'
import {describe, expect, it} from 'vitest'
import {MODULES, mutatedParts} from '../../scripts/mutation-modules.mjs'
import * as lists from '../../scripts/test-lists.mjs'

/*
 * The lists that say which run takes which test file (scripts/test-lists.mjs) and which tests
 * guard which mutated code (scripts/mutation-modules.mjs) name files by path: a file moved or
 * renamed without them would silently drop out of a run. Each entry must still name something.
 */
const root = fileURLToPath(new URL('../..', import.meta.url))

/** Whether a list entry names anything: a file, a folder (`dir/`, `dir/**`), or files by `*`. */
function names(entry: string): boolean {
  const path = entry.replace(/\/\*\*$/, '/')
  if (path.endsWith('/')) return existsSync(join(root, path)) && statSync(join(root, path)).isDirectory()
  if (!path.includes('*')) return existsSync(join(root, path)) && statSync(join(root, path)).isFile()
  const folder = join(root, dirname(path))
  const pattern = new RegExp(`^${basename(path).replace(/[.]/g, '\\.').replace(/\*/g, '[^/]*')}$`)
  return existsSync(folder) && readdirSync(folder).some((file) => pattern.test(file))
}

describe('the run lists', () => {
  it.each(Object.entries(lists))('%s names only test files and folders that exist', (_name, entries) => {
    expect(entries.filter((entry) => !names(entry))).toEqual([])
  })
})

describe('the isolated files', () => {
  it('include every test file that mocks a module, re-imports the sources or fakes the timers', () => {
    // In the shared project a module is imported once per worker: a mock made after another file
    // imported the real one would not take, and the test would pass or fail by the order of files.
    const needs = filesUnder('test', /\.test\.tsx?$/).filter((file) => /vi\.(mock|resetModules|useFakeTimers)\(/.test(readFileSync(join(root, file), 'utf8')))
    expect(needs.filter((file) => !lists.ISOLATED.includes(file))).toEqual([])
  })
})

describe('the mutation modules', () => {
  it.each(Object.entries(MODULES))('%s names test files that exist, code that exists, and a score to keep', (_name, module) => {
    expect(module.tests.filter((file) => !names(file))).toEqual([])
    expect(module.mutate.filter((file) => !names(file))).toEqual([])
    // Each named function found exactly once, as lines of today's source.
    for (const part of mutatedParts(root, module)) expect(part).toMatch(/^src\/.+\.ts(:\d+-\d+)?$/)
    expect(module.break).toBeGreaterThanOrEqual(75)
  })
})
