import {formatTable} from '../../src/lib/table.js'
import type {AuditView} from '../../src/operator/audit.js'

/** Human output of list-audit: one line a change, newest first, its fields as compact JSON last. */
export function auditTable(rows: AuditView[]): string {
  return formatTable(rows, [
    {header: 'ID', get: (r) => r.id, align: 'right'},
    {header: 'AT', get: (r) => r.at},
    {header: 'USER', get: (r) => r.os_user},
    {header: 'COMMAND', get: (r) => r.command},
    {header: 'TARGET', get: (r) => `${r.target_kind} ${r.target}`},
    {header: 'CHANGES', get: (r) => JSON.stringify(r.changes)},
  ])
}
