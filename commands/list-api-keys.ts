import * as Flags from '@oclif/core/flags'
import {pageApiKeys, type ApiKeyListItem} from '../src/interfaces/conversations/keys.js'
import {BaseCommand} from './base-command.js'
import {apiKeysTable} from './output/operator.js'
import {pagingFlags, sayMore} from './output/paging.js'

export default class ListApiKeys extends BaseCommand<typeof ListApiKeys> {
  static override description = 'List interface E API keys with their client, allowance, calls used this period and status; never the key itself (the store keeps only its hash)'
  static override readsOnly = true
  static override examples = ['<%= config.bin %> list-api-keys', '<%= config.bin %> list-api-keys --client demo-client --json']
  static override flags = {
    client: Flags.string({description: "only this client's keys"}),
    ...pagingFlags('keys'),
  }

  async run(): Promise<ApiKeyListItem[]> {
    const f = this.flags
    const {rows, total} = await pageApiKeys((await this.openStore()).db, {limit: f.limit, offset: f.offset, ...(f.client ? {clientId: f.client} : {})}, this.clock.now())
    this.say(rows.length ? apiKeysTable(rows) : total ? `No keys at offset ${f.offset} (${total} in all).` : 'No API keys. Issue one with issue-api-key.')
    sayMore('keys', f, rows.length, total)
    return rows
  }
}
