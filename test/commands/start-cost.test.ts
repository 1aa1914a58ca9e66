import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'

const dist = fileURLToPath(new URL('../../dist/', import.meta.url))

/** Every bundle file a command's start loads: its chunk and the chunks it imports, transitively. */
function loadedBy(command: string): string[] {
  const entry = readFileSync(join(dist, 'cli.js'), 'utf8')
  const chunk = new RegExp(`import\\("\\./(chunks/${command}-[A-Z0-9]+\\.js)"\\)`).exec(entry)?.[1]
  if (!chunk) throw new Error(`dist/cli.js loads no chunk for ${command}`)
  const seen = new Set<string>(['cli.js'])
  const queue = [chunk, ...[...entry.matchAll(/from"\.\/(chunks\/[^"]+\.js)"/g)].map((m) => m[1]!)]
  while (queue.length > 0) {
    const file = queue.pop()!
    if (seen.has(file)) continue
    seen.add(file)
    const text = readFileSync(join(dist, file), 'utf8')
    // Static imports only: a dynamic import() loads on a path the command may never take.
    for (const m of text.matchAll(/from"\.\/([^"]+\.js)"/g)) queue.push(`chunks/${m[1]!}`)
  }
  return [...seen]
}

// Commands that only read start without zod: compiling and evaluating it cost 30-40 ms of every
// such command (docs/benchmarks.md, CLI start), and testers run them hundreds of times a script.
describe('what a read-only command loads', () => {
  it.each(['list-clients', 'list-members'])('%s loads no zod', (command) => {
    const files = loadedBy(command)
    expect(files.length).toBeGreaterThan(2)
    const withZod = files.filter((file) => readFileSync(join(dist, file), 'utf8').includes('"$ZodType"'))
    expect(withZod).toEqual([])
  })

  it('finds zod where a command does load it', () => {
    const files = loadedBy('add-member')
    expect(files.some((file) => readFileSync(join(dist, file), 'utf8').includes('"$ZodType"'))).toBe(true)
  })
})
