import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import ts from 'typescript'
import {describe, expect, it} from 'vitest'
import {filesUnder} from '../helpers/tree.js'

/*
 * Time limits in tests only catch hangs (vitest.config.ts: 5 minutes a test, 10 a hook), so no
 * `it`, `test` or hook sets a limit of its own: one that did was a wall-clock budget, which a test
 * that takes 10 s alone overran on a loaded 2-core machine (docs/architecture.md, Tests).
 */

const root = fileURLToPath(new URL('../..', import.meta.url))
const RUNNERS = new Set(['it', 'test', 'beforeAll', 'beforeEach', 'afterAll', 'afterEach'])

/** The name a call starts with: `it` for it(…), it.each(…)(…) and it.skipIf(…)(…). */
function rootName(expression: ts.Expression): string | undefined {
  if (ts.isIdentifier(expression)) return expression.text
  if (ts.isPropertyAccessExpression(expression) || ts.isCallExpression(expression)) return rootName(expression.expression)
  return undefined
}

/** `file:line` of every test or hook given a time limit after its function. */
function ownLimits(file: string, text = readFileSync(join(root, file), 'utf8')): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const found: string[] = []
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && RUNNERS.has(rootName(node.expression) ?? '')) {
      const [body, limit] = node.arguments.slice(-2)
      if (body && limit && (ts.isArrowFunction(body) || ts.isFunctionExpression(body)) && !ts.isArrowFunction(limit) && !ts.isFunctionExpression(limit)) {
        found.push(`${file}:${source.getLineAndCharacterOfPosition(limit.getStart()).line + 1}`)
      }
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

describe('time limits in tests', () => {
  it("are vitest.config.ts's alone: no test or hook sets its own", () => {
    expect(filesUnder('test', /\.test\.tsx?$/).flatMap((file) => ownLimits(file))).toEqual([])
  })

  it('finds a limit however the test is written, and only after a test or hook', () => {
    const probe = [
      "it('a', async () => {}, 60_000)",
      "it.each([1])('b', async () => {}, 1000)",
      'beforeAll(() => {}, 5000)',
      'setTimeout(() => {}, 1000)',
      "it('c', async () => { await waitFor(() => true, 5000) })",
    ].join('\n')
    expect(ownLimits('probe.ts', probe)).toEqual(['probe.ts:1', 'probe.ts:2', 'probe.ts:3'])
  })
})
