import {readdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import ts from 'typescript'
import {describe, expect, it} from 'vitest'

/*
 * Functions at most 70 lines long and nested at most 4 deep, as TigerBeetle's style sets them
 * (docs/architecture.md, "Small functions"), over every source file the program runs or builds
 * with: src/ (shipped migrations aside: they stay as released), commands/, bin/ and scripts/.
 *
 * What is measured is each outermost function: a function declaration, a method, a constructor or
 * accessor, or a function literal that no other function encloses (`const f = () => …`, an
 * object literal's method at module level). A function inside it is part of it: its lines count
 * in the outer function's length and its body is one level deeper.
 *
 * - Length: lines from the function's first line (its signature, after any doc comment) to its
 *   last, both included.
 * - Nesting: how many of these enclose a statement, counted from the function's own body (level
 *   0): an `if` (its `else` and an `else if` chain are the same level), a loop (`for`, `for…in`,
 *   `for…of`, `while`, `do`), a `switch`, a `try` (its `catch` and `finally` too), and a nested
 *   function literal or method. Object literals, JSX, array literals and ternaries add no level:
 *   they are data, not control flow, and a flat page or a route table stays flat however large.
 *   A `case` adds nothing beyond its `switch`.
 *
 * A function past either bound fails the test unless it is in EXCEPTIONS below, with the reason.
 */

const MAX_LINES = 70
const MAX_NESTING = 4

/**
 * `file: function` → why it may exceed the bounds for now. Each entry must still exceed them, so
 * an entry goes as soon as its function is split.
 */
const EXCEPTIONS: Record<string, string> = {}

const root = fileURLToPath(new URL('../..', import.meta.url))

function walk(dir: string, keep: (name: string) => boolean): string[] {
  return readdirSync(join(root, dir), {withFileTypes: true}).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return walk(path, keep)
    return keep(entry.name) ? [path] : []
  })
}

/** The files checked: every source the program runs or builds with, the shipped migrations aside. */
function checkedFiles(): string[] {
  const shippedMigration = (file: string) => /\/migrations\/20[^/]*\.ts$/.test(file)
  return [
    ...walk('src', (name) => /\.tsx?$/.test(name) && !name.endsWith('.d.ts')).filter((file) => !shippedMigration(file)),
    ...walk('commands', (name) => name.endsWith('.ts')),
    ...walk('bin', () => true),
    ...walk('scripts', (name) => name.endsWith('.mjs')),
  ].sort()
}

interface Measured {
  /** `file: name`, as EXCEPTIONS names it. */
  id: string
  lines: number
  nesting: number
}

type FunctionNode = ts.FunctionLikeDeclaration

function isFunction(node: ts.Node): node is FunctionNode {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isFunctionExpression(node) ||
    ts.isArrowFunction(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node)
  )
}

/** Statements that open a level of nesting (an `else if` does not: see the header). */
function opensLevel(node: ts.Node): boolean {
  if (ts.isIfStatement(node)) return !(ts.isIfStatement(node.parent) && node.parent.elseStatement === node)
  return ts.isIterationStatement(node, false) || ts.isSwitchStatement(node) || ts.isTryStatement(node) || isFunction(node)
}

/** The deepest level inside a function's body (0 for a body of plain statements). */
function nestingOf(fn: FunctionNode): number {
  let deepest = 0
  const visit = (node: ts.Node, level: number): void => {
    const here = opensLevel(node) ? level + 1 : level
    deepest = Math.max(deepest, here)
    ts.forEachChild(node, (child) => visit(child, here))
  }
  if (fn.body) ts.forEachChild(fn.body, (child) => visit(child, 0))
  return deepest
}

/** A readable name: `Class.method`, the variable or property a literal is assigned to, else its line. */
function nameOf(fn: FunctionNode, source: ts.SourceFile): string {
  const line = source.getLineAndCharacterOfPosition(fn.getStart(source)).line + 1
  const owner = ts.isClassLike(fn.parent) && fn.parent.name ? `${fn.parent.name.text}.` : ''
  if (ts.isConstructorDeclaration(fn)) return `${owner}constructor`
  if (fn.name && (ts.isIdentifier(fn.name) || ts.isStringLiteral(fn.name))) return `${owner}${fn.name.text}`
  const parent = fn.parent
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && ts.isIdentifier(parent.name)) return parent.name.text
  return `function at line ${line}`
}

function measure(file: string, text: string): Measured[] {
  const kind = /\.tsx$/.test(file) ? ts.ScriptKind.TSX : /\.tsx?$/.test(file) ? ts.ScriptKind.TS : ts.ScriptKind.JS
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind)
  const found: Measured[] = []
  const visit = (node: ts.Node): void => {
    if (isFunction(node) && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line
      found.push({id: `${file}: ${nameOf(node, source)}`, lines: last - first + 1, nesting: nestingOf(node)})
      return // what it encloses is measured as part of it
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

const measured = checkedFiles().flatMap((file) => measure(file, readFileSync(join(root, file), 'utf8')))
const tooBig = measured.filter((m) => m.lines > MAX_LINES || m.nesting > MAX_NESTING)

describe('function size', () => {
  it(`keeps every function at most ${MAX_LINES} lines and ${MAX_NESTING} levels deep, but the listed exceptions`, () => {
    expect(measured.length).toBeGreaterThan(1000)
    const unlisted = tooBig.filter((m) => !(m.id in EXCEPTIONS)).map((m) => `${m.id} (${m.lines} lines, nesting ${m.nesting})`)
    expect(unlisted).toEqual([])
  })

  it('lists only exceptions that still exceed a bound, each with its reason', () => {
    const over = new Set(tooBig.map((m) => m.id))
    expect(Object.keys(EXCEPTIONS).filter((id) => !over.has(id))).toEqual([])
    for (const reason of Object.values(EXCEPTIONS)) expect(reason.length).toBeGreaterThan(10)
  })

  it('measures length and nesting as the header says', () => {
    const sample = [
      'function flat() {',
      '  const page = {a: {b: {c: {d: {e: 1}}}}}',
      '  return page',
      '}',
      'const deep = () => {',
      '  if (a) {',
      '  } else if (b) {',
      '    for (const x of y) {',
      '      try {',
      '        list.map((z) => { while (z) z-- })',
      '      } catch {}',
      '    }',
      '  }',
      '}',
    ].join('\n')
    expect(measure('sample.ts', sample)).toEqual([
      {id: 'sample.ts: flat', lines: 4, nesting: 0},
      {id: 'sample.ts: deep', lines: 10, nesting: 5},
    ])
  })
})
