import stringWidth from 'string-width'
import {printable} from './printable.js'

/** Pads to a width in terminal columns: a CJK character takes two, a combining accent none. */
function padTo(text: string, width: number, align: 'left' | 'right' | undefined): string {
  const fill = ' '.repeat(Math.max(0, width - stringWidth(text)))
  return align === 'right' ? fill + text : text + fill
}

/** Column spec for `formatTable`: a header, how to read the cell, and its alignment. */
export interface Column<T> {
  header: string
  get: (row: T) => string | number | boolean | null | undefined
  align?: 'left' | 'right'
}

/** Renders rows as an aligned plain-text table (two spaces between columns). */
export function formatTable<T>(rows: readonly T[], columns: readonly Column<T>[]): string {
  const cells = rows.map((row) => columns.map((col) => cellText(col.get(row))))
  const widths = columns.map((col, i) => Math.max(stringWidth(col.header), ...cells.map((r) => stringWidth(r[i]!))))
  const line = (values: string[]) =>
    values
      .map((v, i) => padTo(v, widths[i]!, columns[i]!.align))
      .join('  ')
      .trimEnd()
  return [line(columns.map((c) => c.header)), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n')
}

/** Renders one record as aligned `key  value` lines. */
export function formatRecord(record: Record<string, unknown>): string {
  const width = Math.max(...Object.keys(record).map((k) => stringWidth(k)))
  return Object.entries(record)
    .map(([k, v]) => `${padTo(k, width, 'left')}  ${typeof v === 'object' && v !== null ? printable(JSON.stringify(v)) : cellText(v as string)}`)
    .join('\n')
}

function cellText(value: unknown): string {
  if (value === null || value === undefined) return '-'
  if (Array.isArray(value)) return printable(value.join(','))
  return printable(String(value))
}
