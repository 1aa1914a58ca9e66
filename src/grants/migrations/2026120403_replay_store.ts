import {sql, type Kysely} from 'kysely'
import {isPostgres} from '../../store/dialect.js'

/**
 * One replay store for every signed proof spent once: the `jti` of each DPoP proof accepted
 * (RFC 9449 §11.1) and of each private_key_jwt client assertion (RFC 7523 §3), which were kept
 * in two tables with two sweeps (`dpop_proofs`, grants' 2026120301_dpop, and `used_jtis`,
 * sign-on's 2026120202_used_jtis).
 *
 * A row is kept until the proof it names could no longer be accepted anyway. The primary key
 * begins with that moment, so the sweep deletes the front of the one index there is (on SQLite
 * a table WITHOUT ROWID: the rows are that index), and it is also the replay check: a second
 * insert of the same proof's (expires_at, kind, issuer, jti) finds its row. The expiry is taken
 * from the signed claims (DPoP: iat; an assertion: exp), so the same proof presented again always
 * carries the same one.
 *
 * Every row of both old tables is copied, so a proof spent before the upgrade stays spent.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('spent_jtis')
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('jti', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('spent_jtis_key', ['expires_at', 'kind', 'issuer', 'jti'])
    .$call((builder) => (isPostgres(db) ? builder : builder.modifyEnd(sql`without rowid`)))
    .execute()
  await db
    .insertInto('spent_jtis')
    .columns(['expires_at', 'kind', 'issuer', 'jti'])
    .expression(db.selectFrom('dpop_proofs').select(['expires_at', sql.lit('dpop').as('kind'), 'jkt', 'jti']))
    .execute()
  await db
    .insertInto('spent_jtis')
    .columns(['expires_at', 'kind', 'issuer', 'jti'])
    .expression(db.selectFrom('used_jtis').select(['expires_at', 'purpose', 'client_id', 'jti']))
    .execute()
  await db.schema.dropTable('dpop_proofs').execute()
  await db.schema.dropTable('used_jtis').execute()
}
