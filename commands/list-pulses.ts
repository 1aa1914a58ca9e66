import * as Flags from '@oclif/core/flags'
import {PULSE_STATUSES} from '../src/interfaces/pulse/schema.js'
import {listPulses, type PulseListItem} from '../src/interfaces/pulse/service.js'
import {formatTable} from '../src/lib/table.js'
import {BaseCommand, choiceFlag} from './base-command.js'
import {pageOf, pagingFlags, sayMore} from './output/paging.js'

export default class ListPulses extends BaseCommand<typeof ListPulses> {
  static override description = 'List pulses (interface D) with their owner, status and respondent count; 100 at a time unless told'
  static override readsOnly = true
  static override examples = [
    '<%= config.bin %> list-pulses',
    '<%= config.bin %> list-pulses --client demo-client --json',
    '<%= config.bin %> list-pulses --status Launched --limit 10 --offset 10',
  ]

  static override flags = {
    client: Flags.string({description: "only this client's pulses"}),
    status: choiceFlag(PULSE_STATUSES, {description: 'only pulses in this status'}),
    ...pagingFlags('pulses'),
  }

  async run(): Promise<PulseListItem[]> {
    const f = this.flags
    const {db} = await this.openStore()
    const matching = (await listPulses(db, f.client)).filter((p) => f.status === undefined || p.status === f.status)
    const {rows, total} = pageOf(matching, f)
    this.say(
      rows.length === 0
        ? 'No pulses.'
        : formatTable(rows, [
            {header: 'PROJECT ID', get: (p) => p.project_id},
            {header: 'CLIENT', get: (p) => p.client_id},
            {header: 'STATUS', get: (p) => p.status},
            {header: 'RESPONDENTS', get: (p) => p.respondents, align: 'right'},
            {header: 'LAST UPDATED', get: (p) => p.last_updated},
            {header: 'TITLE', get: (p) => p.title},
          ]),
    )
    sayMore('pulses', f, rows.length, total)
    return rows
  }
}
