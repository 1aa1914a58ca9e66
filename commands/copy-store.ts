import * as Flags from '@oclif/core/flags'
import {AppError} from '../src/errors.js'
import {type CopyResult, copyStore, TargetNotEmptyError} from '../src/store/copy.js'
import {tokenizeMissing} from '../src/interfaces/conversations/repository.js'
import {openStore} from '../src/schema.js'
import {isPostgresUrl} from '../src/store/db.js'
import {BaseCommand} from './base-command.js'
import {INTERRUPTED_EXIT} from './output/interrupt.js'

export default class CopyStore extends BaseCommand<typeof CopyStore> {
  static override readsOnly = true
  static override description =
    'Copy every table of a SQLite store into an empty PostgreSQL database (migrated first), keeping ids, and re-sealing secrets under MEDPANEL_SECRET_KEY'
  static override examples = ['MEDPANEL_SECRET_KEY="$(openssl rand -base64 32)" <%= config.bin %> copy-store --db ./medpanel.db --to postgres://medpanel@127.0.0.1:5432/medpanel']
  static override flags = {
    to: Flags.string({description: 'the PostgreSQL database to fill (postgres://user@host:port/db); it must hold no data yet', required: true}),
  }

  async run(): Promise<CopyResult> {
    const to = this.flags.to
    if (!isPostgresUrl(to)) throw new AppError('bad_request', `--to must be a postgres:// URL (got "${to}")`)
    const source = await this.openStore()
    if (source.kind !== 'sqlite') throw new AppError('bad_request', 'copy-store reads a SQLite store: give it with --db FILE')
    const target = await openStore({url: to})
    // Ctrl-C mid-copy: the copy is one transaction on the target, which PostgreSQL rolls back when
    // this process goes; say so, rather than leave the operator to guess what the target holds.
    const interrupted = () => {
      process.stderr.write(`\nInterrupted: nothing was copied (the copy is one transaction, rolled back); the target keeps its empty tables. Run the same command again to copy.\n`)
      process.exit(INTERRUPTED_EXIT)
    }
    process.once('SIGINT', interrupted)
    try {
      const result = await copyStore(source.db, target.db, (table) => {
        if (!this.jsonEnabled()) process.stderr.write(`  ${table.table}: ${table.rows} row${table.rows === 1 ? '' : 's'}\n`)
      })
      // Rows move, indexes do not: interface E's search columns are built on the target.
      const indexed = await tokenizeMissing(target.db)
      if (!this.jsonEnabled() && indexed > 0) process.stderr.write(`  search index: ${indexed} posts and comments tokenized\n`)
      this.say(`Copied ${result.rows} rows in ${result.tables.length} tables; ${result.resealed} secret(s) re-sealed under MEDPANEL_SECRET_KEY.`)
      return result
    } catch (error) {
      if (error instanceof TargetNotEmptyError) throw new AppError('conflict', error.message)
      throw error
    } finally {
      process.off('SIGINT', interrupted)
      await target.close()
    }
  }
}
