/**
 * What bin/run.js starts: a version request is answered from package.json alone, anything else
 * loads the CLI (src/cli/main.ts). bin/run.js loads the CommonJS copy of this module on Node,
 * which compiles the CLI with V8's code cache (code-cache.ts), and the ES module under Deno.
 */
import {readFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {versionAnswer} from './version.js'

export async function launch(root: string, options: {codeCache: boolean}): Promise<void> {
  const version = versionAnswer(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')), process.argv.slice(2))
  if (version !== undefined) {
    process.stdout.write(version)
    return
  }
  // The bundle's directory: every module the CLI loads from there goes through the cache.
  if (options.codeCache) (await import('./code-cache.js')).useCodeCache(dirname(fileURLToPath(import.meta.url)))
  const {runCli} = await import('./main.js')
  await runCli({root})
}
