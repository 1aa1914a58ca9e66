import * as Flags from '@oclif/core/flags'
import {AppError} from '../src/errors.js'
import {formatRecord} from '../src/lib/table.js'
import type {WaitSummary} from '../src/interfaces/partner/operator.js'
import {readInputJson} from './input-file.js'
import {sayRequestId, waitIfAsked} from './deliveries.js'
import {queuedLine} from './output/partner.js'
import {PROJECT_STATUSES, PROJECT_TYPES, type ProjectInput} from '../src/interfaces/partner/schema.js'
import {pushProject, type PushProjectResult} from '../src/interfaces/partner/service.js'
import {BaseCommand, choiceFlag} from './base-command.js'
import {projectNote} from './support/audit-notes.js'

export default class PushProject extends BaseCommand<typeof PushProject> {
  static override description = 'Create or replace a research project and queue its PUT to the partners (interface B)'
  static override examples = [
    '<%= config.bin %> push-project --file project.json --wait',
    '<%= config.bin %> push-project --project-id P-100 --name "Cardiology attitudes" --duration 20 --status active --type custom --partner 3f9c…',
  ]

  static override asked = ['project-id', 'name', 'duration', 'status', 'type']

  /** With --file the project comes from the file; the flags are asked for only without it. */
  protected override askedNow(): string[] {
    return (this.flags as {file?: string}).file ? [] : super.askedNow()
  }

  static override flags = {
    file: Flags.string({description: "project JSON (the spec's Project fields; created_at/updated_at optional)", exclusive: ['project-id']}),
    'project-id': Flags.string({description: 'project id (instead of --file)'}),
    name: Flags.string({description: 'project name shown to participants'}),
    duration: Flags.string({description: 'approximate survey length in minutes'}),
    status: choiceFlag(PROJECT_STATUSES, {description: 'project status'}),
    type: choiceFlag(PROJECT_TYPES, {description: 'project type'}),
    'custom-text': Flags.string({description: 'extra text or instructions for participants'}),
    partner: Flags.string({description: 'partner client ids that receive the project (repeat or comma-separate; default: every partner client)', multiple: true, delimiter: ','}),
    wait: Flags.boolean({description: 'deliver now from this process; exit 1 if anything was not delivered', default: false}),
  }

  async run(): Promise<PushProjectResult & {request_id: string; wait: WaitSummary | null}> {
    const flags = this.flags
    let input: ProjectInput
    if (flags.file) {
      for (const flag of ['name', 'duration', 'status', 'type', 'custom-text'] as const) {
        if (flags[flag] !== undefined) throw new AppError('bad_request', `--${flag} cannot be combined with --file; put it in the file`)
      }
      input = (await readInputJson('file', flags.file)) as ProjectInput
    } else {
      const duration = await this.need(flags.duration, 'duration', 'Duration (minutes)')
      input = {
        project_id: await this.need(flags['project-id'], 'project-id', 'Project id'),
        name: await this.need(flags.name, 'name', 'Project name'),
        // A number, so the schema can say what is wrong with it ("must be greater than 0" for -3).
        duration: /^\s*-?\d+(\.\d+)?\s*$/.test(duration) ? Number(duration) : (duration as unknown as number),
        status: (await this.need(flags.status, 'status', 'Status (onhold, active, closed)')) as ProjectInput['status'],
        project_type: (await this.need(flags.type, 'type', 'Type (custom, real-time)')) as ProjectInput['project_type'],
        ...(flags['custom-text'] === undefined ? {} : {custom_text: flags['custom-text']}),
      }
    }
    const store = await this.openStore()
    const result = await this.audited(
      (parts) => pushProject(parts.db, input, {partners: flags.partner}, this.clock.now(), this.requestId()),
      (pushed) => projectNote(pushed.project.project_id, pushed, this.requestId(), {project: pushed.project, closed_quotas: pushed.closed_quotas}),
    )
    this.say(formatRecord(result.project as unknown as Record<string, unknown>))
    if (result.closed_quotas.length) this.say(`Closed quotas: ${result.closed_quotas.join(', ')}`)
    this.say(queuedLine(result.deliveries, result.partners))
    sayRequestId(this.requestId(), result.deliveries, this.jsonEnabled())
    const wait = await waitIfAsked(flags.wait, store, this.clock, [result.project.project_id], result.deliveries, (t) => this.say(t))
    return {...result, request_id: this.requestId(), wait}
  }
}
