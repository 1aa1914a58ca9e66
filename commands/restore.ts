import * as Flags from '@oclif/core/flags'
import {AppError} from '../src/errors.js'
import {existsSync, statSync} from 'node:fs'
import {beforeRestoreName, restoreStore, type RestoreResult} from '../src/store/backup.js'
import {StoreVersionError} from '../src/store/migrate.js'
import {BaseCommand, DEFAULT_STORE} from './base-command.js'

export default class Restore extends BaseCommand<typeof Restore> {
  static override description = 'Put a backup in place of the store; refused while any process (a running serve) has the store open'
  static override examples = [
    '<%= config.bin %> restore --db ./restored.db --from ./medpanel-$(date +%F).db',
    '<%= config.bin %> restore --db ./restored.db --from ./medpanel-$(date +%F).db --force   # replace it without asking: where nobody can be asked',
  ]
  static override flags = {
    from: Flags.string({description: 'a file written by `medpanel backup` (its FILE.key is restored too)', required: true}),
    force: Flags.boolean({
      description:
        'replace an existing store without asking (needed where nobody can be asked: a script, --json); it is saved first either way, as NAME.before-restore-TIMESTAMP.db',
      default: false,
    }),
  }

  async run(): Promise<RestoreResult> {
    const flags = this.flags as {db?: string; 'database-url'?: string; from: string}
    if (flags['database-url'])
      throw new AppError(
        'bad_request',
        'restore puts a backup in place of a SQLite store file, given with --db; for a PostgreSQL store use pg_restore or psql with the dump pg_dump made',
      )
    const target = flags.db ?? DEFAULT_STORE
    if (existsSync(target) && !this.flags.force) {
      if (!this.canPrompt())
        throw new AppError('bad_request', `restore replaces the store ${target}: give --force to go ahead (it is saved first as ${beforeRestoreName(target, this.clock.now())})`)
      const {confirm} = await import('@inquirer/prompts')
      const yes = await confirm({message: `Replace ${target} (${statSync(target).size} bytes) with ${flags.from}? It is saved first, beside it.`, default: false})
      if (!yes) throw new AppError('bad_request', 'nothing was restored')
    }
    // Not this.openStore(): opening would create or migrate the very file being replaced.
    const result = await restoreStore(flags.from, target, this.clock.now())
    const recorded = await this.recordRestore(result)
    const saved = result.replaced_saved_as === null ? '' : ` The store it replaced is saved as ${result.replaced_saved_as}, with its key file beside it.`
    this.say(
      `Restored ${result.file} from ${result.from} (${result.bytes} bytes).${recorded ? ' It is migrated to this release and the restore is in its audit trail.' : ''}${saved}`,
    )
    return result
  }

  /**
   * Records the restore in the restored store's own audit trail (the trail is part of the store, so
   * the replaced one's stays in the copy saved beside it). Opening the restored store migrates it,
   * as the next command would. A backup a newer release wrote cannot be opened here: it is
   * restored all the same, and stderr says its trail does not hold the restore.
   */
  private async recordRestore(result: RestoreResult): Promise<boolean> {
    try {
      await this.recordAudit({kind: 'store', target: result.file, changes: {restored_from: result.from, bytes: result.bytes, replaced_saved_as: result.replaced_saved_as}})
      return true
    } catch (error) {
      if (!(error instanceof StoreVersionError)) throw error
      process.stderr.write(`Warning: the restore is not in the restored store's audit trail: ${error.message}\n`)
      return false
    }
  }
}
