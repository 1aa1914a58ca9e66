import * as Flags from '@oclif/core/flags'
import type {WaitSummary} from '../src/interfaces/partner/operator.js'
import {sayRequestId, waitIfAsked} from './deliveries.js'
import {queuedLine} from './output/partner.js'
import {removeMember, type RemoveMemberResult} from '../src/interfaces/partner/service.js'
import {BaseCommand} from './base-command.js'
import {projectNote} from './support/audit-notes.js'

export default class RemoveMember extends BaseCommand<typeof RemoveMember> {
  static override description = "Remove one member from a quota's list and queue the DELETE"
  static override examples = ['<%= config.bin %> remove-member --project-id P-100 --quota-id Q-1 --npi 1234567893 --wait']

  static override asked = ['project-id', 'quota-id', 'npi']
  static override flags = {
    'project-id': Flags.string({description: 'project id'}),
    'quota-id': Flags.string({description: 'quota id'}),
    npi: Flags.string({description: 'NPI of the member to remove'}),
    wait: Flags.boolean({description: 'deliver now from this process; exit 1 if anything was not delivered', default: false}),
  }

  async run(): Promise<RemoveMemberResult & {request_id: string; wait: WaitSummary | null}> {
    const flags = this.flags
    const projectId = await this.need(flags['project-id'], 'project-id', 'Project id')
    const quotaId = await this.need(flags['quota-id'], 'quota-id', 'Quota id')
    const npi = await this.need(flags.npi, 'npi', 'NPI')
    const store = await this.openStore()
    const result = await this.audited(
      (parts) => removeMember(parts.db, projectId, quotaId, npi, this.clock.now(), this.requestId()),
      (removed) => projectNote(projectId, removed, this.requestId(), {quota_id: removed.quota_id, removed_npi: removed.npi, total: removed.total}),
    )
    this.say(`Removed ${npi} from quota ${quotaId} (list now ${result.total}).`)
    this.say(queuedLine(result.deliveries, result.partners))
    sayRequestId(this.requestId(), result.deliveries, this.jsonEnabled())
    const wait = await waitIfAsked(flags.wait, store, this.clock, [projectId], result.deliveries, (t) => this.say(t))
    return {...result, request_id: this.requestId(), wait}
  }
}
