import {fileURLToPath} from 'node:url'
import madge from 'madge'
import {describe, expect, it} from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))

/*
 * The layers, lowest first. A file may import files of its own layer and of the layers below it,
 * never of one above; one interface never imports another; nothing between the store and the app
 * imports a dialect module (src/store/postgres/, src/store/sqlite/). Every file belongs to exactly one
 * layer: a new folder or top-level file must be placed here before its imports can pass. The same
 * rule, in words, is in docs/architecture.md ("Layers").
 */
const LAYERS: [name: string, members: RegExp[]][] = [
  // Pure helpers and the settings every layer reads.
  ['base', [/^src\/lib\//, /^src\/(config|errors|exe-assets|version)\.ts$/, /^data\//, /^package\.json$/]],
  // The Prometheus registry; the store counts into it.
  ['metrics', [/^src\/metrics\//]],
  // Drivers, transactions, the group writer, the migration runner; knows no table.
  ['store', [/^src\/store\//]],
  // What sign-on hands out (tokens, codes, the grant names), checked by every interface.
  ['grants', [/^src\/grants\//]],
  // Clients and members.
  ['registry', [/^src\/registry\//]],
  // What interfaces share at the edge: middleware, error shapes, the app's dependencies, demo credentials.
  ['http', [/^src\/http\//, /^src\/(deps|demo-data)\.ts$/]],
  ['interfaces', [/^src\/interfaces\//]],
  // What composes the interfaces: the app, the schema, the demo, status, metrics per store, operators' queries.
  ['app', [/^src\/(app|compose|demo|home|instrument|schema|server|serve-stop|status)\.ts$/, /^src\/operator\//]],
  // The CLI and its entries.
  ['cli', [/^src\/cli\//, /^src\/exe\.ts$/, /^commands\//]],
]

function layerOf(file: string): number {
  const found = LAYERS.findIndex(([, members]) => members.some((member) => member.test(file)))
  if (found < 0) throw new Error(`${file} is in no layer: place it in LAYERS (test/architecture/imports.test.ts) and docs/architecture.md`)
  return found
}

const interfaceOf = (file: string) => /^src\/interfaces\/([^/]+)\//.exec(file)?.[1]

/** Every import that breaks the rule, as "file -> target (why)". */
function layerViolations(graph: Record<string, string[]>): string[] {
  const wrong: string[] = []
  for (const [file, imports] of Object.entries(graph)) {
    layerOf(file)
    for (const target of imports) {
      const [from, to] = [layerOf(file), layerOf(target)]
      if (to > from) wrong.push(`${file} -> ${target} (${LAYERS[from]![0]} imports ${LAYERS[to]![0]})`)
      const [a, b] = [interfaceOf(file), interfaceOf(target)]
      if (a && b && a !== b) wrong.push(`${file} -> ${target} (interface ${a} imports interface ${b})`)
      // The store's entries (db.ts, dialect.ts, sqlite-reader.ts, ...) hide its drivers from the layers above.
      if (from > layerOf('src/store/db.ts') && from < layerOf('src/app.ts') && /^src\/store\/(postgres|sqlite)\//.test(target)) {
        wrong.push(`${file} -> ${target} (a dialect module outside the store)`)
      }
    }
  }
  return wrong
}

describe('the import graph', () => {
  // One walk of the tree serves both checks: madge parses every file, seconds of CPU each time.
  let walking: ReturnType<typeof madge> | undefined
  const walk = () => {
    walking ??= madge(['src', 'commands', 'bin'], {baseDir: root, fileExtensions: ['ts', 'tsx'], tsConfig: `${root}tsconfig.json`})
    return walking
  }

  it('has no cycle, type-only imports included', async () => {
    const graph = await walk()
    expect(Object.keys(graph.obj()).length).toBeGreaterThan(100)
    expect(graph.circular()).toEqual([])
  })

  it('points down the layers only, every file included, type-only imports too', async () => {
    // bin/ holds the launchers, which only start the CLI and belong to no layer.
    const graph = Object.fromEntries(Object.entries((await walk()).obj()).filter(([file]) => !file.startsWith('bin/')))
    expect(Object.keys(graph).length).toBeGreaterThan(100)
    expect(layerViolations(graph)).toEqual([])
  })

  it('catches an import that points up, one between interfaces, and a file in no layer', () => {
    expect(layerViolations({'src/store/db.ts': ['src/interfaces/balance/tables.ts']})).toEqual(['src/store/db.ts -> src/interfaces/balance/tables.ts (store imports interfaces)'])
    expect(layerViolations({'src/grants/service.ts': ['src/registry/repository.ts']})).toHaveLength(1)
    expect(layerViolations({'src/interfaces/conversations/seed.ts': ['src/interfaces/pulse/prng.ts']})).toEqual([
      'src/interfaces/conversations/seed.ts -> src/interfaces/pulse/prng.ts (interface conversations imports interface pulse)',
    ])
    expect(layerViolations({'src/interfaces/balance/service.ts': ['src/store/postgres/writer.ts']})).toEqual([
      'src/interfaces/balance/service.ts -> src/store/postgres/writer.ts (a dialect module outside the store)',
    ])
    expect(layerViolations({'src/app.ts': ['src/interfaces/pulse/routes.ts', 'src/store/db.ts']})).toEqual([])
    expect(() => layerViolations({'src/somewhere.ts': []})).toThrow(/src\/somewhere.ts is in no layer/)
  })
})
