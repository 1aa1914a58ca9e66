// Stryker mutates a part of a file when given `file:start-end` (lines). Written by hand, such
// ranges drift as the file changes (repository.ts:210-215 once stopped covering summaryShape);
// stryker.config.mjs names functions instead, and this resolves each name to the lines it spans
// today, with the TypeScript compiler's parser, each time the config loads.
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import ts from 'typescript'

/**
 * `file:start-end` for each function named, in the order given. A name is a function
 * declaration, a `const` holding a function, or a method of a class; one that is not found, or
 * found twice, throws: a run must never quietly mutate something else.
 */
export function functionRanges(root, file, names) {
  const source = ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.Latest, true)
  const found = new Map()
  const visit = (node) => {
    const name = functionName(node)
    if (name !== undefined && names.includes(name)) found.set(name, [...(found.get(name) ?? []), node])
    ts.forEachChild(node, visit)
  }
  visit(source)
  return names.map((name) => {
    const nodes = found.get(name) ?? []
    if (nodes.length !== 1) throw new Error(`${file}: ${nodes.length === 0 ? 'no' : 'more than one'} function named ${name}`)
    const line = (position) => source.getLineAndCharacterOfPosition(position).line + 1
    // getStart leaves out the comment above the function: only its code is mutated.
    return `${file}:${line(nodes[0].getStart(source))}-${line(nodes[0].getEnd())}`
  })
}

/** The name a node gives a function, if it is one. */
function functionName(node) {
  if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node)) && node.name && ts.isIdentifier(node.name)) return node.name.text
  if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) {
    if (ts.isArrowFunction(node.initializer) || ts.isFunctionExpression(node.initializer)) return node.name.text
  }
  return undefined
}
