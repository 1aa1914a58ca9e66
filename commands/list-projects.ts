import {PROJECT_STATUSES} from '../src/interfaces/partner/schema.js'
import {pageProjects, type ProjectListItem} from '../src/interfaces/partner/projects.js'
import {BaseCommand, choiceFlag} from './base-command.js'
import {projectsTable} from './output/operator.js'
import {pagingFlags, sayMore} from './output/paging.js'

export default class ListProjects extends BaseCommand<typeof ListProjects> {
  static override description = 'List interface B projects with their quotas, partners and delivery state (pending, failed, delivered, last delivery)'
  static override readsOnly = true
  static override examples = ['<%= config.bin %> list-projects', '<%= config.bin %> list-projects --status active --json']
  static override flags = {
    status: choiceFlag(PROJECT_STATUSES, {description: 'only projects in this status'}),
    ...pagingFlags('projects'),
  }

  async run(): Promise<ProjectListItem[]> {
    const f = this.flags
    const {rows, total} = await pageProjects((await this.openStore()).db, {limit: f.limit, offset: f.offset, ...(f.status ? {status: f.status} : {})})
    this.say(rows.length ? projectsTable(rows) : total ? `No projects at offset ${f.offset} (${total} in all).` : 'No projects. Push one with push-project.')
    sayMore('projects', f, rows.length, total)
    return rows
  }
}
