import * as Flags from '@oclif/core/flags'
import type {MemberView} from '../src/registry/views.js'
import {pageMembers} from '../src/registry/member-pages.js'
import {BaseCommand, choiceFlag} from './base-command.js'
import {pagingFlags, sayMore, sinceFlag} from './output/paging.js'
import {memberTable} from './output/registry.js'

export default class ListMembers extends BaseCommand<typeof ListMembers> {
  static override description = 'List members by user_id, 100 at a time unless told (--limit, --offset)'
  static override readsOnly = true
  static override examples = [
    '<%= config.bin %> list-members',
    "<%= config.bin %> list-members --json | jq '.[].email'",
    '<%= config.bin %> list-members --status inactive --since 2026-01-01 --limit 20 --offset 20',
    '<%= config.bin %> list-members --name "ana r"   # first, last or full name beginning so, any case',
  ]
  static override flags = {
    ...pagingFlags('members'),
    status: choiceFlag(['active', 'inactive'] as const, {description: 'only active or only deactivated members'}),
    since: sinceFlag('members added'),
    email: Flags.string({description: 'only the member with this e-mail (any case)'}),
    npi: Flags.string({description: 'only the member with this NPI'}),
    name: Flags.string({description: 'only members whose first name, last name or full name begins with this (any case)'}),
  }

  async run(): Promise<MemberView[]> {
    const f = this.flags
    const {rows, total} = await pageMembers((await this.openStore()).db, {
      limit: f.limit,
      offset: f.offset,
      ...(f.status ? {active: f.status === 'active'} : {}),
      ...(f.since ? {since: f.since} : {}),
      ...(f.email !== undefined ? {email: f.email} : {}),
      ...(f.npi !== undefined ? {npi: f.npi} : {}),
      ...(f.name !== undefined ? {name: f.name} : {}),
    })
    const filtered = [f.status, f.since, f.email, f.npi, f.name].some((v) => v !== undefined)
    this.say(
      rows.length ? memberTable(rows) : total ? `No members at offset ${f.offset} (${total} in all).` : filtered ? 'No members match.' : 'No members yet. Add one with add-member.',
    )
    sayMore('members', f, rows.length, total)
    return rows
  }
}
