import * as Flags from '@oclif/core/flags'
import {membersFromCsv, membersFromJson, type WaitSummary} from '../src/interfaces/partner/operator.js'
import {sayRequestId, waitIfAsked} from './deliveries.js'
import {queuedLine} from './output/partner.js'
import {DEFAULT_CHUNK, pushMembers, type PushMembersResult} from '../src/interfaces/partner/service.js'
import {AppError} from '../src/errors.js'
import {BaseCommand} from './base-command.js'
import {projectNote} from './support/audit-notes.js'
import {readInputJson, readInputText} from './input-file.js'

export default class PushMembers extends BaseCommand<typeof PushMembers> {
  static override description = "Replace (PUT, then POST chunks) or append (POST chunks) a quota's member list, from JSON or CSV"
  static override examples = [
    '<%= config.bin %> push-members --project-id P-100 --quota-id Q-1 --file members.csv --wait',
    '<%= config.bin %> push-members --project-id P-100 --quota-id Q-1 --file more.json --append --chunk 500',
  ]

  static override asked = ['project-id', 'quota-id', 'file']
  static override flags = {
    'project-id': Flags.string({description: 'project id'}),
    'quota-id': Flags.string({description: 'quota id'}),
    file: Flags.string({description: 'members as JSON (array of {npi, honoraria, url}) or CSV with header npi,honoraria,url'}),
    append: Flags.boolean({description: 'append to the current list (POST) instead of replacing it', default: false}),
    chunk: Flags.integer({description: 'members per request', default: DEFAULT_CHUNK, min: 1, max: 100_000}),
    wait: Flags.boolean({description: 'deliver now from this process; exit 1 if anything was not delivered', default: false}),
    'allow-empty': Flags.boolean({description: "let an empty file replace the partner's list with an empty one (refused otherwise)", default: false}),
  }

  async run(): Promise<PushMembersResult & {request_id: string; wait: WaitSummary | null}> {
    const flags = this.flags
    const projectId = await this.need(flags['project-id'], 'project-id', 'Project id')
    const quotaId = await this.need(flags['quota-id'], 'quota-id', 'Quota id')
    const file = await this.need(flags.file, 'file', 'Members file (.json or .csv)')
    const {members, label} = /\.csv$/i.test(file) ? await membersFromCsv(file, await readInputText('file', file)) : membersFromJson(file, await readInputJson('file', file))
    // An empty or header-only file is far more often a broken export than a wish to empty the
    // partner's list of thousands; replacing with nothing takes an explicit flag.
    if (members.length === 0 && (flags.append || !flags['allow-empty'])) {
      throw new AppError(
        'bad_request',
        flags.append ? `${file} holds no members: nothing to append` : `${file} holds no members; to empty the quota's list at the partner, add --allow-empty`,
      )
    }
    const store = await this.openStore()
    // Progress goes to stderr and only for people: never under --json.
    // cli-progress is CommonJS: its exports arrive as the default export of a dynamic import.
    const {SingleBar, Presets} = (await import('cli-progress')).default
    const bar = this.jsonEnabled()
      ? undefined
      : new SingleBar({stream: process.stderr, format: '{phase} [{bar}] {value}/{total}', hideCursor: true, clearOnComplete: false}, Presets.shades_classic)
    bar?.start(members.length, 0, {phase: 'storing members   '})
    let result: PushMembersResult
    try {
      result = await this.audited(
        (parts) =>
          pushMembers(
            parts.db,
            {projectId, quotaId, members, append: flags.append, chunk: flags.chunk, label, onProgress: (done) => bar?.update(done)},
            this.clock.now(),
            this.requestId(),
          ),
        (pushed) => projectNote(projectId, pushed, this.requestId(), {quota_id: quotaId, mode: pushed.mode, members: pushed.members, total: pushed.total}),
      )
    } finally {
      bar?.stop()
    }
    this.say(
      `${result.mode === 'append' ? 'Appended' : 'Stored'} ${result.members} members (list now ${result.total}) as ${result.requests} request${result.requests === 1 ? '' : 's'}.`,
    )
    this.say(queuedLine(result.deliveries, result.partners))
    sayRequestId(this.requestId(), result.deliveries, this.jsonEnabled())
    let wait: WaitSummary | null = null
    if (flags.wait) {
      const sendBar = this.jsonEnabled() ? undefined : new SingleBar({stream: process.stderr, format: '{phase} [{bar}] {value}/{total}', hideCursor: true}, Presets.shades_classic)
      sendBar?.start(result.deliveries.length, 0, {phase: 'delivering chunks '})
      const ours = new Set(result.deliveries)
      const lines: string[] = []
      try {
        wait = await waitIfAsked(
          true,
          store,
          this.clock,
          [projectId],
          result.deliveries,
          (t) => lines.push(t),
          (row) => {
            if (ours.has(row.id)) sendBar?.increment()
          },
        )
      } finally {
        sendBar?.stop()
      }
      for (const line of lines) this.say(line)
    }
    return {...result, request_id: this.requestId(), wait}
  }
}
