import {Kysely, sql} from 'kysely'
import {openPostgres, printableUrl} from './open.js'

/**
 * A read replica of a PostgreSQL store: a hot standby that streams the primary's WAL, opened as a
 * second pool for reads that may lag the primary by a moment (interface E's searches). It is
 * accepted only when it answers for the very same database: the same cluster (the system
 * identifier a standby shares with its primary, fixed when the cluster was made) and the same
 * database name. A URL that reaches another cluster, even one holding a copy of the schema, is
 * refused, since its counts would be of other data. The primary itself (say, by another route) is
 * accepted: it lags nothing.
 */
export interface Replica<DB> {
  db: Kysely<DB>
  /** The URL without its password, for logs and errors. */
  where: string
  /** Whether the server is a standby (in recovery), or the primary itself. */
  standby: boolean
}

interface Identity {
  system: string
  database: string
  standby: boolean
}

async function identityOf(db: Kysely<any>): Promise<Identity> {
  const {rows} =
    await sql<Identity>`select (select system_identifier from pg_control_system())::text as system, current_database() as database, pg_is_in_recovery() as standby`.execute(db)
  return rows[0]!
}

/** Thrown when --replica-url does not reach a replica of the store's database. */
export class ReplicaMismatchError extends Error {}

/**
 * Opens the replica at `url` beside the store `primary`, and checks it is one. `configure` gives
 * the new handle the store's context (its kind, its keys) before anything runs on it.
 */
export async function openReplica<DB>(primary: Kysely<DB>, url: string, options: {poolSize?: number}, configure: (db: Kysely<DB>) => void): Promise<Replica<DB>> {
  const {dialect, where} = await openPostgres(url, options)
  const db = new Kysely<DB>({dialect})
  configure(db)
  try {
    const [mine, theirs] = await Promise.all([identityOf(primary), identityOf(db)])
    if (mine.system !== theirs.system || mine.database !== theirs.database) {
      throw new ReplicaMismatchError(
        `the replica URL ${printableUrl(url)} reaches database "${theirs.database}" of cluster ${theirs.system}, not a replica of the store's database "${mine.database}" of cluster ${mine.system}; give the URL of a hot standby of the store's cluster`,
      )
    }
    return {db, where, standby: theirs.standby}
  } catch (error) {
    await db.destroy()
    if (error instanceof ReplicaMismatchError) throw error
    throw new Error(`cannot open the replica ${where}: ${error instanceof Error ? error.message : String(error)}`)
  }
}
