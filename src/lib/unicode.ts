/**
 * Whether a string is well-formed Unicode: no UTF-16 surrogate without its partner. JSON can
 * carry one (`"\ud800"`) and JavaScript strings hold it, but it is no character: it cannot be
 * written as UTF-8 (PostgreSQL refuses it; SQLite stores bytes other readers choke on), so text
 * taken in is refused with it rather than stored.
 */
export function isWellFormedText(text: string): boolean {
  return !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text)
}

/** The message a refused field carries. */
export const ILL_FORMED_TEXT = 'must be well-formed Unicode text (it holds a lone surrogate, \\ud800-\\udfff)'
