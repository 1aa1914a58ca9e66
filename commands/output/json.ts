import {toJson} from '../../src/lib/exact-json.js'

/** What `--json` prints for every command: indented, amounts as JSON numbers from their exact text. */
export function jsonText(value: unknown): string {
  return `${toJson(value, 2)}\n`
}
