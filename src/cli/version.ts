/**
 * `medpanel --version` (and `version`, `-v`, `--version --json`) answered from package.json alone,
 * before oclif or any command is loaded: bin/run.js and the single executable ask here first, so
 * the answer costs a process start and no more. Kept free of imports for that reason.
 */

/** The parts of package.json the answer needs. */
export interface VersionSource {
  name: string
  version: string
  oclif?: {bin?: string}
}

/** The runtime this process is: Deno (which also answers to `process.version`) or Node. */
function runtime(): {name: 'deno' | 'node'; version: string} {
  const deno = (globalThis as {Deno?: {version?: {deno?: string}}}).Deno?.version?.deno
  return deno ? {name: 'deno', version: deno} : {name: 'node', version: process.version}
}

/**
 * What to print for a version request, or undefined when `argv` is not one (oclif takes it from
 * there). `version` and `-v` mean `--version`; with `--json` as well the answer is one JSON line.
 * The plain line names the runtime's own version: under Deno, `process.version` is only the Node
 * version Deno imitates.
 */
export function versionAnswer(pjson: VersionSource, argv: readonly string[]): string | undefined {
  const [first, ...rest] = argv
  if (first === 'version' || first === '-v') return versionAnswer(pjson, ['--version', ...rest])
  const bin = pjson.oclif?.bin ?? pjson.name
  const {name, version} = runtime()
  if (argv.includes('--version') && argv.includes('--json') && (first === '--version' || first === '--json')) {
    const answer = {name: bin, version: pjson.version, node: process.version, runtime: name, runtime_version: version, platform: `${process.platform}-${process.arch}`}
    return `${JSON.stringify(answer)}\n`
  }
  if (argv.length === 1 && first === '--version') return `${bin}/${pjson.version} ${process.platform}-${process.arch} ${name}-${version}\n`
  return undefined
}
