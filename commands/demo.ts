import {Flags} from '@oclif/core'
import {describeDemo, seedDemo, type DemoInfo} from '../src/demo.js'
import {BaseCommand} from './base-command.js'

export default class Demo extends BaseCommand<typeof Demo> {
  static override description = 'Seed the demo data set (idempotent) and print its credentials and example calls'
  static override examples = ['<%= config.bin %> demo', '<%= config.bin %> demo --json | jq .client']

  static override flags = {
    'base-url': Flags.string({description: 'address the demo service will be served at', default: 'http://127.0.0.1:8080'}),
  }

  async run(): Promise<DemoInfo> {
    const {db} = await this.openStore()
    const info = await seedDemo(db, this.flags['base-url'].replace(/\/+$/, ''), this.clock.now())
    this.say(describeDemo(info))
    return info
  }
}
