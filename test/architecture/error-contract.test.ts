import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {filesUnder} from '../helpers/tree.js'
import {describe, expect, it} from 'vitest'

/*
 * What docs/architecture.md says about errors, checked over the sources: one place writes a
 * challenge header, every zod default hook comes from one factory, and the `any`s outside the
 * store's driver plumbing are the ones it lists.
 */

const root = fileURLToPath(new URL('../..', import.meta.url))

const files = filesUnder('src', /\.tsx?$/).map((file) => ({file, text: readFileSync(join(root, file), 'utf8')}))
const matching = (pattern: RegExp) =>
  files
    .filter(({text}) => pattern.test(text))
    .map(({file}) => file)
    .sort()

describe('the error contract in the sources', () => {
  it('writes WWW-Authenticate in one place: the error shape, from the challenge an AppError carries', () => {
    expect(files.length).toBeGreaterThan(100)
    expect(matching(/['"`]www-authenticate['"`]/i)).toEqual(['src/http/error-shape.ts'])
  })

  it('makes every zod default hook with the one factory', () => {
    const hooks = files.flatMap(({file, text}) => [...text.matchAll(/defaultHook: *([\w.]+)(\()?/g)].map((match) => `${file}: ${match[1]}${match[2] ?? ''}`))
    expect(hooks.length).toBeGreaterThanOrEqual(4)
    for (const hook of hooks) expect(hook).toMatch(/: schemaHook\($/)
  })

  it('keeps an `any` outside src/store only where docs/architecture.md says', () => {
    const exempt = matching(/biome-ignore lint\/suspicious\/noExplicitAny/).filter((file) => !file.startsWith('src/store/'))
    expect(exempt).toEqual([
      'src/http/env.ts',
      'src/http/swagger-ui.ts',
      'src/http/validation.ts',
      'src/interfaces/conversations/term-days.ts',
      'src/interfaces/partner/openapi.ts',
    ])
    const docs = readFileSync(join(root, 'docs/architecture.md'), 'utf8')
    for (const file of exempt) expect(docs).toContain(file.replace(/^src\//, 'src/'))
  })
})
