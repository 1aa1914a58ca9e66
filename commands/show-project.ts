import * as Args from '@oclif/core/args'
import {projectDetail, type ProjectDetail} from '../src/interfaces/partner/projects.js'
import {BaseCommand} from './base-command.js'
import {projectText} from './output/operator.js'

export default class ShowProject extends BaseCommand<typeof ShowProject> {
  static override description = 'Show one interface B project: its quotas with their members and completes, and its deliveries to partners'
  static override readsOnly = true
  static override examples = ['<%= config.bin %> show-project P-100', '<%= config.bin %> show-project P-100 --json']
  static override args = {id: Args.string({description: 'project id', required: true})}

  async run(): Promise<ProjectDetail> {
    const project = await projectDetail((await this.openStore()).db, this.args.id)
    this.say(projectText(project))
    return project
  }
}
