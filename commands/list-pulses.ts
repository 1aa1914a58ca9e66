import {Flags} from '@oclif/core'
import {listPulses, type PulseListItem} from '../src/interfaces/pulse/service.js'
import {formatTable} from '../src/lib/table.js'
import {BaseCommand} from './base-command.js'

export default class ListPulses extends BaseCommand<typeof ListPulses> {
  static override description = 'List pulses (interface D) with their owner, status and respondent count'
  static override readsOnly = true
  static override examples = ['<%= config.bin %> list-pulses', '<%= config.bin %> list-pulses --client demo-client --json']

  static override flags = {
    client: Flags.string({description: "only this client's pulses"}),
  }

  async run(): Promise<PulseListItem[]> {
    const {db} = await this.openStore()
    const pulses = await listPulses(db, this.flags.client)
    this.say(
      pulses.length === 0
        ? 'No pulses.'
        : formatTable(pulses, [
            {header: 'PROJECT ID', get: (p) => p.project_id},
            {header: 'CLIENT', get: (p) => p.client_id},
            {header: 'STATUS', get: (p) => p.status},
            {header: 'RESPONDENTS', get: (p) => p.respondents, align: 'right'},
            {header: 'LAST UPDATED', get: (p) => p.last_updated},
            {header: 'TITLE', get: (p) => p.title},
          ]),
    )
    return pulses
  }
}
