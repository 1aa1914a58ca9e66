/**
 * Stands in for @inquirer/prompts' editor prompt in the bundles. medpanel never opens an external
 * editor, and that prompt alone brings about 0.5 MB of character-set tables (iconv-lite) that every
 * start of the executable would otherwise load.
 */
export default function editor(): never {
  throw new Error('the editor prompt is not part of medpanel')
}
