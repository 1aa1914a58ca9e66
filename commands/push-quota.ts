import * as Flags from '@oclif/core/flags'
import {AppError} from '../src/errors.js'
import {formatRecord} from '../src/lib/table.js'
import type {WaitSummary} from '../src/interfaces/partner/operator.js'
import {readInputJson} from './input-file.js'
import {sayRequestId, waitIfAsked} from './deliveries.js'
import {queuedLine} from './output/partner.js'
import {QUOTA_STATUSES, type QuotaInput} from '../src/interfaces/partner/schema.js'
import {pushQuota, setQuotaStatus, type PushQuotaResult} from '../src/interfaces/partner/service.js'
import type {StoreParts} from '../src/store/database.js'
import {BaseCommand, choiceFlag} from './base-command.js'
import {projectNote} from './support/audit-notes.js'

export default class PushQuota extends BaseCommand<typeof PushQuota> {
  static override description = 'Create or replace a quota of a project and queue its PUT; pushing it open reopens a closed quota'
  static override examples = [
    '<%= config.bin %> push-quota --project-id P-100 --file quota.json --wait',
    '<%= config.bin %> push-quota --project-id P-100 --quota-id Q-1 --status open',
  ]

  static override asked = ['project-id']
  static override flags = {
    'project-id': Flags.string({description: 'owning project'}),
    file: Flags.string({description: "quota JSON (the spec's Quota fields; project_id, created_at, updated_at optional)"}),
    'quota-id': Flags.string({description: 'with --status and no --file: change only the status of an existing quota'}),
    status: choiceFlag(QUOTA_STATUSES, {description: 'with --quota-id: open (reopen) or closed'}),
    wait: Flags.boolean({description: 'deliver now from this process; exit 1 if anything was not delivered', default: false}),
  }

  async run(): Promise<PushQuotaResult & {request_id: string; wait: WaitSummary | null}> {
    const flags = this.flags
    const projectId = await this.need(flags['project-id'], 'project-id', 'Project id')
    const store = await this.openStore()
    let push: (parts: StoreParts) => Promise<PushQuotaResult>
    if (flags.file) {
      if (flags['quota-id'] || flags.status) throw new AppError('bad_request', '--quota-id/--status cannot be combined with --file; put them in the file')
      const quota = (await readInputJson('file', flags.file)) as QuotaInput
      push = (parts) => pushQuota(parts.db, projectId, quota, this.clock.now(), this.requestId())
    } else {
      if (!flags['quota-id'] || !flags.status) throw new AppError('bad_request', 'missing required flag --file (or --quota-id with --status)')
      const [quotaId, status] = [flags['quota-id'], flags.status as 'open' | 'closed']
      push = (parts) => setQuotaStatus(parts.db, projectId, quotaId, status, this.clock.now(), this.requestId())
    }
    const result = await this.audited(push, (pushed) => projectNote(projectId, pushed, this.requestId(), {quota: pushed.quota}))
    this.say(formatRecord({...result.quota, completes: result.completes} as unknown as Record<string, unknown>))
    this.say(queuedLine(result.deliveries, result.partners))
    sayRequestId(this.requestId(), result.deliveries, this.jsonEnabled())
    const wait = await waitIfAsked(flags.wait, store, this.clock, [projectId], result.deliveries, (t) => this.say(t))
    return {...result, request_id: this.requestId(), wait}
  }
}
