import * as Flags from '@oclif/core/flags'
import {describeDemo, seedDemo, type DemoInfo} from '../src/demo.js'
import {BaseCommand} from './base-command.js'
import {demoNote} from './support/audit-notes.js'

export default class Demo extends BaseCommand<typeof Demo> {
  static override description = 'Seed the demo data set (idempotent) and print its credentials and example calls'
  static override examples = ['<%= config.bin %> demo', '<%= config.bin %> demo --json | jq .client']

  static override flags = {
    'base-url': Flags.string({description: 'address the demo service will be served at', default: 'http://127.0.0.1:8080'}),
    force: Flags.boolean({description: 'seed the demo into a store that already holds other clients or members (it adds the published demo secret there)', default: false}),
  }

  protected override usesDemoStore(): boolean {
    return true
  }

  async run(): Promise<DemoInfo> {
    const info = await seedDemo(await this.openStore(), this.flags['base-url'].replace(/\/+$/, ''), this.clock.now(), {
      force: this.flags.force,
      warn: (line) => process.stderr.write(`Warning: ${line}\n`),
    })
    await this.recordAudit(demoNote(info, this.flags.force))
    this.say(describeDemo(info))
    return info
  }
}
