import {fileURLToPath} from 'node:url'
import madge from 'madge'
import {describe, expect, it} from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))

describe('the import graph', () => {
  it('has no cycle, type-only imports included', async () => {
    const graph = await madge(['src', 'commands', 'bin'], {baseDir: root, fileExtensions: ['ts', 'tsx'], tsConfig: `${root}tsconfig.json`})
    expect(Object.keys(graph.obj()).length).toBeGreaterThan(100)
    expect(graph.circular()).toEqual([])
  })

  it('keeps shared layers from importing an interface, and interfaces from importing the CLI', async () => {
    const graph = await madge(['src'], {baseDir: root, fileExtensions: ['ts', 'tsx'], tsConfig: `${root}tsconfig.json`})
    const upward: string[] = []
    for (const [file, imports] of Object.entries(graph.obj())) {
      // The CLI's entry loads the commands; the Database type is assembled from every interface's tables.
      if (!file.startsWith('src/') || file === 'src/cli/main.ts' || file === 'src/store/database.ts') continue
      const shared = /^src\/(http|lib|metrics|store|grants|registry)\//.test(file)
      for (const target of imports) {
        if (shared && target.startsWith('src/interfaces/')) upward.push(`${file} -> ${target}`)
        if (target.startsWith('commands/')) upward.push(`${file} -> ${target}`)
      }
    }
    expect(upward).toEqual([])
  })
})
