// An esbuild plugin that keeps oclif's start to what a command run uses (docs/benchmarks.md, "CLI
// start"). oclif's modules require at their top packages that only help, plugin discovery,
// spinners, error pretty-printing and Windows use (ejs, tinyglobby, minimatch, wrap-ansi, …):
// each such require is deferred to the first use of what it returns, so a run that never asks
// for them never evaluates them. `debug` (oclif's DEBUG=… diagnostics) is loaded only when
// DEBUG is set, and the WSL check behind oclif's config.platform is made from os.release()
// instead of loading wsl-utils and child_process. The build fails if oclif's code no longer
// reads as expected, rather than bundling it unchanged.
import {readFile} from 'node:fs/promises'
import {dirname} from 'node:path'

/** Packages oclif's modules require at load and a command run never calls. */
const DEFERRED = new Set([
  'ejs',
  'tinyglobby',
  'minimatch',
  'lilconfig',
  'cli-spinners',
  'clean-stack',
  'indent-string',
  'wrap-ansi',
  'string-width',
  'widest-line',
  'supports-color',
  'node:child_process',
])

const LAZY = 'function __oclifLazy(load){let m;return new Proxy({},{get:(_,key)=>(m??=load())[key]})}\n'

/** oclif's source of one module, with the edits above; `file` is its path under @oclif/core/lib. */
export function trimOclifModule(file, text) {
  let deferred = 0
  let out = text.replace(/^const (\w+) = (__importDefault\()?require\("([^"]+)"\)(\))?;$/gm, (line, name, wrap, pkg, close) => {
    if (!DEFERRED.has(pkg)) return line
    deferred++
    return `const ${name} = __oclifLazy(() => ${wrap ?? ''}require("${pkg}")${close ?? ''});`
  })
  if (file === 'util/os.js') {
    const wsl = "(await import('wsl-utils')).isWsl ? 'wsl' : (0, node_os_1.platform)()"
    if (!out.includes(wsl)) throw new Error('oclif-trim: @oclif/core/lib/util/os.js no longer checks WSL as expected')
    // wsl-utils' own first test, the one that holds on WSL 1 and 2 alike.
    out = out.replace(wsl, "(0, node_os_1.platform)() === 'linux' && (0, node_os_1.release)().toLowerCase().includes('microsoft') ? 'wsl' : (0, node_os_1.platform)()")
  }
  if (file === 'logger.js') {
    const debug = 'const debug_1 = __importDefault(require("debug"));'
    if (!out.includes(debug)) throw new Error('oclif-trim: @oclif/core/lib/logger.js no longer requires debug as expected')
    out = out.replace(debug, 'const debug_1 = {default: (namespace) => process.env.DEBUG ? require("debug")(namespace) : Object.assign(() => {}, {enabled: false, namespace})};')
  }
  return deferred > 0 ? LAZY + out : out
}

export function oclifTrim() {
  const expected = ['config/config.js', 'config/plugin.js', 'config/plugin-loader.js', 'help/util.js', 'util/os.js', 'logger.js']
  const seen = new Set()
  return {
    name: 'oclif-trim',
    setup(build) {
      build.onLoad({filter: /[\\/]@oclif[\\/]core[\\/]lib[\\/].*\.js$/}, async (args) => {
        const file = args.path.slice(args.path.lastIndexOf('/lib/') + 5)
        seen.add(file)
        return {contents: trimOclifModule(file, await readFile(args.path, 'utf8')), loader: 'js', resolveDir: dirname(args.path)}
      })
      build.onEnd(() => {
        const missing = expected.filter((file) => !seen.has(file))
        if (missing.length > 0) throw new Error(`oclif-trim: never saw @oclif/core/lib/${missing.join(', ')}`)
      })
    },
  }
}
