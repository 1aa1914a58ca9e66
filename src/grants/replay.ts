import {config} from '../config.js'
import {iso} from '../lib/clock.js'
import {prepared} from '../store/prepared.js'
import {writeTransaction} from '../store/transactions.js'
import type {GrantsDb as Db, SpentKind} from './tables.js'

/**
 * The replay store: every signed proof that may be accepted only once — a DPoP proof (RFC 9449
 * §11.1), a private_key_jwt client assertion (RFC 7523 §3) — has its `jti` recorded in
 * `spent_jtis` when it is accepted, by whichever `serve` on the store accepts it, and kept until
 * the proof could not be accepted anyway. One table, one sweep.
 *
 * The row's key is (expires_at, kind, issuer, jti), and expires_at comes from the proof's signed
 * claims, so the same proof presented again carries the same key and finds its row: that insert,
 * which does nothing, is the replay check, in this process or any other, on SQLite and on
 * PostgreSQL alike. A new proof with the same jti but another expiry is a proof only the key's
 * holder could have signed, not a replay. The expiry leading the key is what makes the sweep
 * cheap: it deletes the front of the one index the table has.
 *
 * Spends arriving while the store's writer is busy wait together and go to it as one write
 * transaction, each a prepared insert, so a busy resource server pays one savepoint and one
 * commit per batch, not per proof. Within a batch the inserts run in order, so the second of two
 * copies of one proof finds the first one's row and is refused like any replay.
 */

/** A proof to spend: whose, which, and until when it must stay spent. */
export interface Spend {
  kind: SpentKind
  /** Who signed it: a DPoP key's thumbprint, a client's id. */
  issuer: string
  jti: string
  /** ISO 8601: past this moment the proof is refused for its age anyway, and the row may go. */
  expiresAt: string
}

/**
 * `durable`: acknowledged once synced to disk. `relaxed` (WriteOptions.durability): once
 * committed, not synced; a power cut may forget the last ones, which is fit only for a proof whose
 * life is short and which something else already ties to the moment (DPoP: the nonce and iat).
 */
export type SpendDurability = 'durable' | 'relaxed'

interface Waiting {
  spend: Spend
  resolve: (fresh: boolean) => void
  reject: (error: unknown) => void
}

const insertSpent = prepared(4, (db: Db, expiresAt: string, kind: SpentKind, issuer: string, jti: string) =>
  db
    .insertInto('spent_jtis')
    .values({expires_at: expiresAt, kind, issuer, jti})
    .onConflict((oc) => oc.doNothing())
    .returning('jti'),
)
const sweepSpent = prepared(1, (db: Db, now: string) => db.deleteFrom('spent_jtis').where('expires_at', '<', now))

/** The spends waiting for the writer, per store and durability; a batch takes all of them. */
const waiting = new WeakMap<object, Map<SpendDurability, Waiting[]>>()
/** When the spent proofs were last swept, per store: at most once a sweep interval. */
const lastSweep = new WeakMap<object, number>()

/**
 * Records a proof as spent. True the first time; false when the same proof was spent before, by
 * this process or any other on the store (the caller refuses it as a replay).
 */
export function spendJti(db: Db, spend: Spend, now: Date, durability: SpendDurability): Promise<boolean> {
  return new Promise<boolean>((resolve, reject) => {
    let queues = waiting.get(db)
    if (!queues) {
      queues = new Map()
      waiting.set(db, queues)
    }
    const queue = queues.get(durability)
    if (queue) {
      queue.push({spend, resolve, reject})
      return
    }
    const batch: Waiting[] = [{spend, resolve, reject}]
    queues.set(durability, batch)
    submit(db, queues, durability, batch, now)
  })
}

/** One write transaction for `batch`, which keeps growing until the writer runs it. */
function submit(db: Db, queues: Map<SpendDurability, Waiting[]>, durability: SpendDurability, batch: Waiting[], now: Date): void {
  const sweep = now.getTime() - (lastSweep.get(db) ?? 0) >= config.grants.replaySweepEveryMs
  if (sweep) lastSweep.set(db, now.getTime())
  writeTransaction(
    db,
    async (trx) => {
      // From here on a spend starts the next batch. (PostgreSQL may run this again after a
      // serialization failure: the batch is the same, and a newer one is left alone.)
      if (queues.get(durability) === batch) queues.delete(durability)
      if (sweep) await sweepSpent(trx, iso(now))
      const fresh: boolean[] = []
      for (const {spend} of batch) fresh.push((await insertSpent(trx, spend.expiresAt, spend.kind, spend.issuer, spend.jti)).length > 0)
      return fresh
    },
    {durability},
  ).then(
    (fresh) => {
      for (const [index, one] of batch.entries()) one.resolve(fresh[index]!)
    },
    (error: unknown) => {
      for (const one of batch) one.reject(error)
    },
  )
}
