/**
 * Control characters (C0, DEL, C1) and the bidirectional overrides that can make a terminal draw
 * text other than what is there. Newlines and tabs count too: printed text stays on its line.
 */
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g

/**
 * Text from outside (a partner's answer, a stored name) made safe to store, log and print on a
 * terminal: every control character becomes a visible `\uXXXX` escape, so an answer carrying
 * `ESC]0;…BEL` or `ESC[2J` can neither retitle, clear nor recolour the operator's screen. The one
 * function every table, record and `Error:` line goes through.
 */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}
