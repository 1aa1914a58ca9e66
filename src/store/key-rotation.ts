import {sql, type Kysely} from 'kysely'
import type {StoreParts} from './database.js'
import {writeTransaction} from './transactions.js'
import {isSealed, type Keyring, keyId, newKey, seal, unseal, writeKeyFile} from './secrets.js'

/** Every column that holds a sealed secret, by table. */
export const SEALED_COLUMNS: Record<string, {key: string; columns: string[]}> = {
  clients: {key: 'id', columns: ['partner_password', 'signing_secret']},
  signing_keys: {key: 'kid', columns: ['private_key']},
}

export interface Rotation {
  /** The key every secret is now sealed with. */
  key_id: string
  /** The keys it replaced (no longer in the key file). */
  retired_key_ids: string[]
  /** Secrets re-sealed. */
  resealed: number
  /** Where the key lives: a key file's path, or MEDPANEL_SECRET_KEY. */
  key_source: string
}

/**
 * Re-seals every secret of the store under a new key. With a key file: a new key is written in
 * front of the old ones (so any process can open both while this runs), every secret is re-sealed
 * in one write transaction, then the old keys are dropped from the file. With
 * MEDPANEL_SECRET_KEY the operator supplies the new key first in that variable (old ones after
 * it); this re-seals under it. Sign-in cookies are signed with a key derived from the current
 * one, so members sign in again afterwards, once each running `serve` has restarted: a process
 * keeps the cookie key it derived until it stops (docs/operations.md, a leaked key).
 */
export async function rotateSecretKey({db, keys: keyring}: StoreParts): Promise<Rotation> {
  const source = keyring.source
  if (source.kind === 'ephemeral') throw new Error('an in-memory store has no key to rotate')
  const previous = [...keyring.keys.values()]
  if (source.kind === 'file') {
    const fresh = newKey()
    writeKeyFile(source.path, [fresh, ...previous])
    keyring.current = {id: keyId(fresh), key: fresh}
    keyring.keys = new Map([[keyId(fresh), fresh], ...keyring.keys])
  }
  const resealed = await writeTransaction(db, async (trx) => {
    let count = 0
    for (const [table, {key, columns}] of Object.entries(SEALED_COLUMNS)) count += await resealTable(trx, keyring, table, key, columns)
    return count
  })
  const retired = previous.map(keyId).filter((id) => id !== keyring.current.id)
  if (source.kind === 'file') {
    writeKeyFile(source.path, [keyring.current.key])
    keyring.keys = new Map([[keyring.current.id, keyring.current.key]])
  }
  return {key_id: keyring.current.id, retired_key_ids: retired, resealed, key_source: source.kind === 'file' ? source.path : 'MEDPANEL_SECRET_KEY'}
}

/** Seals every stored secret of one table again with the current key; answers how many it wrote. */
async function resealTable(trx: Kysely<any>, keyring: Keyring, table: string, key: string, columns: readonly string[]): Promise<number> {
  const rows = (await sql<Record<string, string | null>>`select ${sql.ref(key)} as row_key, ${sql.join(columns.map((c) => sql.ref(c)))} from ${sql.table(table)}`.execute(trx)).rows
  let count = 0
  for (const row of rows) {
    for (const column of columns) {
      const value = row[column]
      if (value === null || value === undefined) continue
      const plain = isSealed(value) ? unseal(keyring, value) : value
      await sql`update ${sql.table(table)} set ${sql.ref(column)} = ${seal(keyring, plain)} where ${sql.ref(key)} = ${row.row_key}`.execute(trx)
      count++
    }
  }
  return count
}
