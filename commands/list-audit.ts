import * as Flags from '@oclif/core/flags'
import {AUDIT_KINDS, type AuditView, pageAudit} from '../src/operator/audit.js'
import {BaseCommand, choiceFlag} from './base-command.js'
import {auditTable} from './output/audit.js'
import {pagingFlags, sayMore, sinceFlag, untilFlag} from './output/paging.js'

export default class ListAudit extends BaseCommand<typeof ListAudit> {
  static override description =
    'Show the audit trail: every command that changed the store, with the OS user who ran it, when, its target and the fields it set (a secret only as "(changed)", never its value); newest first, 100 at a time unless told'
  static override readsOnly = true
  static override examples = [
    '<%= config.bin %> list-audit',
    '<%= config.bin %> list-audit --target demo-client --json',
    '<%= config.bin %> list-audit --kind member --since 2026-01-01 --until 2026-02-01',
    '<%= config.bin %> list-audit --command update-client --limit 20',
  ]

  static override flags = {
    target: Flags.string({description: "only changes to this target: a client_id, a member's user_id (also its balance account), an API key's id, a project id, …"}),
    kind: choiceFlag(AUDIT_KINDS, {description: 'only changes to this kind of target'}),
    command: Flags.string({description: 'only runs of this command (update-client, credit, …)'}),
    user: Flags.string({description: 'only commands run by this OS user (uid:N for a user with no name)'}),
    since: sinceFlag('changes made'),
    until: untilFlag('changes made'),
    ...pagingFlags('changes'),
  }

  async run(): Promise<AuditView[]> {
    const f = this.flags
    const {rows, total} = await pageAudit((await this.openStore()).db, {
      ...(f.target === undefined ? {} : {target: f.target}),
      ...(f.kind === undefined ? {} : {kind: f.kind}),
      ...(f.command === undefined ? {} : {command: f.command}),
      ...(f.user === undefined ? {} : {user: f.user}),
      ...(f.since === undefined ? {} : {since: f.since}),
      ...(f.until === undefined ? {} : {until: f.until}),
      limit: f.limit,
      offset: f.offset,
    })
    this.say(rows.length ? auditTable(rows) : total ? `No changes at offset ${f.offset} (${total} in all).` : 'No changes recorded.')
    sayMore('changes', f, rows.length, total)
    return rows
  }
}
