import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import type {WaitSummary} from '../src/interfaces/partner/operator.js'
import {sayRequestId, waitIfAsked} from './deliveries.js'
import {queuedLine} from './output/partner.js'
import {closeProject, type CloseProjectResult} from '../src/interfaces/partner/service.js'
import {BaseCommand} from './base-command.js'
import {projectNote} from './support/audit-notes.js'

export default class CloseProject extends BaseCommand<typeof CloseProject> {
  static override description = 'Close every open quota of a project, then the project, queueing those PUTs in that order'
  static override examples = ['<%= config.bin %> close-project P-100 --wait']

  static override args = {
    project: Args.string({description: 'project id', required: true}),
  }

  static override flags = {
    wait: Flags.boolean({description: 'deliver now from this process; exit 1 if anything was not delivered', default: false}),
  }

  async run(): Promise<CloseProjectResult & {request_id: string; wait: WaitSummary | null}> {
    const store = await this.openStore()
    const result = await this.audited(
      (parts) => closeProject(parts.db, this.args.project, this.clock.now(), this.requestId()),
      (closed) =>
        projectNote(this.args.project, closed, this.requestId(), {status: closed.project.status, closed_quotas: closed.closed_quotas, already_closed: closed.already_closed}),
    )
    if (result.already_closed) this.say(`Project ${this.args.project} is already closed; nothing to push.`)
    else this.say(`Closed ${result.closed_quotas.length ? `quotas ${result.closed_quotas.join(', ')} and ` : ''}project ${this.args.project}.`)
    this.say(queuedLine(result.deliveries, result.partners))
    sayRequestId(this.requestId(), result.deliveries, this.jsonEnabled())
    const wait = await waitIfAsked(this.flags.wait, store, this.clock, [this.args.project], result.deliveries, (t) => this.say(t))
    return {...result, request_id: this.requestId(), wait}
  }
}
