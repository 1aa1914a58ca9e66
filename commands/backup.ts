import * as Flags from '@oclif/core/flags'
import {AppError} from '../src/errors.js'
import {backupStore, type BackupResult} from '../src/store/backup.js'
import {BaseCommand} from './base-command.js'

export default class Backup extends BaseCommand<typeof Backup> {
  static override readsOnly = true
  static override description = 'Write a consistent copy of the store (and its key file) while serve goes on running'
  static override examples = ['<%= config.bin %> backup --to ./medpanel-$(date +%F).db   # the store --db or MEDPANEL_DB names (./medpanel.db by default)']
  static override flags = {
    to: Flags.string({description: 'the new backup file (must not exist); its key file is written beside it as FILE.key', required: true}),
  }

  async run(): Promise<BackupResult> {
    // VACUUM INTO is SQLite's: a PostgreSQL database is copied with its own tools.
    if ((this.flags as {'database-url'?: string})['database-url']) {
      throw new AppError('bad_request', 'backup copies a SQLite store file; back up a PostgreSQL store with pg_dump (docs/operations.md, "Backups")')
    }
    const result = await backupStore(await this.openStore(), this.flags.to)
    this.say(`Backed up to ${result.file} (${result.bytes} bytes) with its key in ${result.key_file}. Keep both.`)
    return result
  }
}
