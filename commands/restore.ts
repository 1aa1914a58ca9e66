import * as Flags from '@oclif/core/flags'
import {AppError} from '../src/errors.js'
import {restoreStore, type RestoreResult} from '../src/store/backup.js'
import {BaseCommand, DEFAULT_STORE} from './base-command.js'

export default class Restore extends BaseCommand<typeof Restore> {
  static override description = 'Put a backup in place of the store; refused while any process (a running serve) has the store open'
  static override examples = ['<%= config.bin %> restore --db ./restored.db --from ./medpanel-$(date +%F).db']
  static override flags = {
    from: Flags.string({description: 'a file written by `medpanel backup` (its FILE.key is restored too)', required: true}),
  }

  async run(): Promise<RestoreResult> {
    const flags = this.flags as {db?: string; 'database-url'?: string; from: string}
    if (flags['database-url'])
      throw new AppError(
        'bad_request',
        'restore puts a backup in place of a SQLite store file, given with --db; for a PostgreSQL store use pg_restore or psql with the dump pg_dump made',
      )
    // Not this.openStore(): opening would create or migrate the very file being replaced.
    const result = await restoreStore(flags.from, flags.db ?? DEFAULT_STORE)
    this.say(`Restored ${result.file} from ${result.from} (${result.bytes} bytes). It is migrated when it is next opened.`)
    return result
  }
}
