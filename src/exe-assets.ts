/**
 * Files the single executable carries beside its code as SEA assets (scripts/build-exe.mjs puts
 * them in): Swagger UI's script and style and the search thread's source. As string constants in
 * the bundle they were parsed on every start, `--version` included, though only /docs and the
 * first search read them; as assets they are read when asked for. Outside the executable there
 * are none (undefined): a checkout reads node_modules, and dist/ embeds the thread's source.
 */
declare const MEDPANEL_EXE_ASSETS: boolean | undefined

export type ExeAsset = 'swagger-ui-bundle.js' | 'swagger-ui.css' | 'search-worker.cjs'

export function exeAsset(name: ExeAsset): string | undefined {
  if (typeof MEDPANEL_EXE_ASSETS === 'undefined') return undefined
  return process.getBuiltinModule('node:sea').getAsset(name, 'utf8')
}
