import * as Flags from '@oclif/core/flags'
import {importPulse, type StoredPulse} from '../src/interfaces/pulse/service.js'
import {PULSE_STATUSES} from '../src/interfaces/pulse/schema.js'
import {formatRecord} from '../src/lib/table.js'
import {BaseCommand, choiceFlag} from './base-command.js'
import {readInputJson} from './input-file.js'

export default class ImportPulse extends BaseCommand<typeof ImportPulse> {
  static override description =
    'Load a pulse from a file in the export shape (as GET /projects/{id}/export returns it). The whole file is checked first; one bad value rejects all of it, naming its path.'
  static override examples = [
    '<%= config.bin %> import-pulse --client demo-client --file export.json --project-id 0e3c7f4a-5b6d-4e8f-9a0b-1c2d3e4f5a6b',
    '<%= config.bin %> import-pulse --client demo-client --file export.json --project-id 6b0f5a52-1f0e-4d8e-9b43-0c1d2e3f4a5b --status Completed --json',
  ]

  static override asked = ['client', 'file']
  static override flags = {
    client: Flags.string({description: 'client_id of the new owner (needs the pulses grant)'}),
    file: Flags.string({description: 'path of the export JSON document'}),
    'project-id': Flags.string({description: "store under this GUID instead of the file's Project.ProjectId"}),
    status: choiceFlag(PULSE_STATUSES, {description: 'pulse status (default: from the dates: Completed after EndDate, Launched after StartDate, Queued before it, else Draft)'}),
  }

  async run(): Promise<StoredPulse> {
    const f = this.flags
    const clientId = await this.need(f.client, 'client', 'Owner client_id')
    const file = await this.need(f.file, 'file', 'Export JSON file')
    const input = await readInputJson('file', file)
    const stored = await this.audited(
      (store) => importPulse(store.db, clientId, input, {projectId: f['project-id'], status: f.status}, this.clock.now()),
      (pulse) => ({
        kind: 'pulses',
        target: pulse.client_id,
        changes: {imported: pulse.project_id, title: pulse.title, status: pulse.status, questions: pulse.questions, respondents: pulse.respondents},
      }),
    )
    this.say(formatRecord({...stored}))
    return stored
  }
}
