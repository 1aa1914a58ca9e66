import {AppError, notFound} from '../../errors.js'
import {isUuid} from '../../lib/ids.js'
import {findMember} from '../../registry/repository.js'
import {narrow} from '../../store/database.js'
import {getTransaction} from './queries.js'
import * as repo from './repository.js'
import type {BalanceDb as Db} from './tables.js'
import type {TransactionView} from './views.js'

/* What operator commands read of interface C beyond what its routes answer. */

/** The member a transaction belongs to, as show-transaction names them. */
export interface TransactionMember {
  user_id: number
  email: string
  name: string
}

/** One ledger transaction as interface C shows it, plus the member it belongs to (show-transaction). */
export async function transactionWithMember(db: Db, id: string): Promise<TransactionView & {member: TransactionMember}> {
  const wanted = id.trim().toLowerCase()
  if (!isUuid(wanted)) throw new AppError('bad_request', `a transaction id is a UUID (as list-transactions shows it), got ${JSON.stringify(id.slice(0, 64))}`)
  const view = await getTransaction(db, wanted)
  const row = await repo.findTransaction(db, wanted)
  if (!row) throw notFound(`no transaction with id ${wanted}`)
  const member = await findMember(narrow(db), row.member_id)
  return {...view, member: member ? {user_id: member.id, email: member.email, name: `${member.first_name} ${member.last_name}`} : {user_id: row.member_id, email: '', name: ''}}
}
