import * as Flags from '@oclif/core/flags'
import type {WaitSummary} from '../src/interfaces/partner/operator.js'
import {sayRequestId, waitIfAsked} from './deliveries.js'
import {queuedLine} from './output/partner.js'
import {EVENT_STATES} from '../src/interfaces/partner/schema.js'
import {pushEvent, type PushEventResult} from '../src/interfaces/partner/service.js'
import {BaseCommand, choiceFlag} from './base-command.js'
import {projectNote} from './support/audit-notes.js'

export default class PushEvent extends BaseCommand<typeof PushEvent> {
  static override description = 'Record a participant event and queue its POST; a complete that fills a quota closes it and queues that PUT'
  static override examples = [
    '<%= config.bin %> push-event --project-id P-100 --npi 1234567893 --state start',
    '<%= config.bin %> push-event --project-id P-100 --quota-id Q-1 --npi 1234567893 --state complete --at 2026-03-01T14:05:00Z --wait',
  ]

  static override asked = ['project-id', 'npi', 'state']
  static override flags = {
    'project-id': Flags.string({description: 'project id'}),
    npi: Flags.string({description: 'participant NPI'}),
    state: choiceFlag(EVENT_STATES, {description: 'event state'}),
    'quota-id': Flags.string({description: 'quota id (required for every state but start)'}),
    at: Flags.string({description: 'when it happened, ISO 8601 UTC (default now)'}),
    wait: Flags.boolean({description: 'deliver now from this process; exit 1 if anything was not delivered', default: false}),
  }

  async run(): Promise<PushEventResult & {request_id: string; wait: WaitSummary | null}> {
    const flags = this.flags
    const projectId = await this.need(flags['project-id'], 'project-id', 'Project id')
    const npi = await this.need(flags.npi, 'npi', 'Participant NPI')
    const state = await this.need(flags.state, 'state', 'State (start, screenout, quotafull, complete)')
    const store = await this.openStore()
    const result = await this.audited(
      (parts) => pushEvent(parts.db, {project_id: projectId, npi, state, quota_id: flags['quota-id'], event_at: flags.at}, this.clock.now(), this.requestId()),
      (pushed) =>
        projectNote(projectId, pushed, this.requestId(), {
          event: pushed.event,
          reported_state: pushed.reported_state,
          ...(pushed.quota?.closed_now ? {closed_quota: pushed.quota.quota_id} : {}),
        }),
    )
    const sent = result.event.state === result.reported_state ? result.event.state : `${result.reported_state}, pushed as ${result.event.state} (quota closed)`
    this.say(`Recorded ${sent} for ${npi}${result.event.quota_id ? ` in quota ${result.event.quota_id}` : ''} at ${result.event.event_at}.`)
    if (result.quota)
      this.say(
        `Quota ${result.quota.quota_id}: ${result.quota.completes}/${result.quota.limit} completes, ${result.quota.status}${result.quota.closed_now ? ' (closed by this complete)' : ''}.`,
      )
    this.say(queuedLine(result.deliveries, result.partners))
    sayRequestId(this.requestId(), result.deliveries, this.jsonEnabled())
    const wait = await waitIfAsked(flags.wait, store, this.clock, [projectId], result.deliveries, (t) => this.say(t))
    return {...result, request_id: this.requestId(), wait}
  }
}
