// `npm run docs:commands`: writes docs/commands.md (or the file named as the first argument) with
// `oclif readme`, then replaces the usage block it opens with. oclif's block tells readers to
// `npm install -g medpanel`, and the package is private: it is never published to a registry.
import {spawnSync} from 'node:child_process'
import {readFileSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const file = process.argv[2] ?? join(root, 'docs/commands.md')

const run = spawnSync(process.execPath, [join(root, 'node_modules/oclif/bin/run.js'), 'readme', '--readme-path', file, '--no-aliases'], {
  cwd: root,
  encoding: 'utf8',
  env: {...process.env, OCLIF_COLUMNS: '120', OCLIF_SKIP_NEW_VERSION_CHECK: 'true'},
  stdio: ['ignore', 'inherit', 'inherit'],
})
if (run.status !== 0) process.exit(run.status ?? 1)

const usage = `<!-- usage -->
medpanel is not installed from a package registry. Run it from a checkout, where \`npm ci\` builds
it and \`bin/medpanel\` starts it (put \`bin/\` on your PATH to type \`medpanel\`), or as the single
executable \`npm run build:exe\` writes to \`dist/medpanel\`, which needs no Node beside it:

\`\`\`sh-session
$ git clone <the medpanel repository> medpanel && cd medpanel
$ npm ci
$ export PATH="$PWD/bin:$PATH"
$ medpanel --version
$ medpanel --help [COMMAND]
\`\`\`
<!-- usagestop -->`

const text = readFileSync(file, 'utf8')
const start = text.indexOf('<!-- usage -->')
const end = text.indexOf('<!-- usagestop -->')
if (start === -1 || end < start) throw new Error(`${file}: no <!-- usage --> block to replace`)
writeFileSync(file, text.slice(0, start) + usage + text.slice(end + '<!-- usagestop -->'.length))
