import * as Flags from '@oclif/core/flags'
import {seedPulses, type SeedPulsesResult} from '../src/interfaces/pulse/seed.js'
import {formatTable} from '../src/lib/table.js'
import {BaseCommand} from './base-command.js'

export default class SeedPulses extends BaseCommand<typeof SeedPulses> {
  static override description =
    'Generate realistic physician pulses (interface D) owned by a client, deterministic from --seed (the content does not depend on the client; the project ids do). Pulse i gets status i mod 7 (Launched, Completed, Held, Draft, Queued, PendingMasterApproval, Pending); fielded pulses get --respondents each. Re-running skips pulses that already exist, so a run stopped with Ctrl-C is completed by running it again.'
  static override examples = [
    '<%= config.bin %> seed-pulses --client demo-client',
    '<%= config.bin %> seed-pulses --client demo-client --count 7 --respondents 500 --seed 42 --json',
  ]

  static override asked = ['client']
  static override flags = {
    client: Flags.string({description: 'client_id of the owner (needs the pulses grant)'}),
    count: Flags.integer({description: 'pulses to generate (3 or more covers every question type and respondent status; 7 every pulse status)', default: 3, min: 1, max: 1000}),
    respondents: Flags.integer({description: 'respondents per fielded pulse', default: 200, min: 0, max: 100_000}),
    seed: Flags.string({description: 'random seed: the same seed gives the same pulses (the same ids too for the same client)', default: '1'}),
  }

  async run(): Promise<SeedPulsesResult> {
    const f = this.flags
    const clientId = await this.need(f.client, 'client', 'Owner client_id')
    const {db} = await this.openStore()
    // Each pulse is written whole in its own transaction: what was written is kept, and the same
    // command skips it next time.
    const result = await this.interruptibleWrite(
      'seeding pulses',
      f.count,
      (progressed, stopAsked) => seedPulses(db, {clientId, count: f.count, respondents: f.respondents, seed: f.seed}, this.clock.now(), progressed, stopAsked),
      (r) => `kept ${r.created.length + r.skipped.length} of ${f.count} pulses (${r.created.length} created by this run)`,
    )
    if (result.created.length > 0) {
      // Each pulse commits on its own, so the run is recorded once it has written them (or was stopped).
      await this.recordAudit({
        kind: 'pulses',
        target: clientId,
        changes: {seeded: result.created.map((p) => p.project_id), seed: f.seed, respondents: f.respondents, interrupted: result.interrupted},
      })
      this.say(
        formatTable(result.created, [
          {header: 'PROJECT ID', get: (p) => p.project_id},
          {header: 'STATUS', get: (p) => p.status},
          {header: 'QUESTIONS', get: (p) => p.questions, align: 'right'},
          {header: 'RESPONDENTS', get: (p) => p.respondents, align: 'right'},
          {header: 'TITLE', get: (p) => p.title},
        ]),
      )
    }
    this.say(`${result.created.length} pulse(s) created${result.skipped.length ? `, ${result.skipped.length} already present (skipped)` : ''}`)
    return result
  }
}
