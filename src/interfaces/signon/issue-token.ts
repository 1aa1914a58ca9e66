import {AppError} from '../../errors.js'
import {narrow} from '../../store/database.js'
import {getClientRow, getMemberRow, hasGrant} from '../../registry/service.js'
import type {SignonDb as Db} from './tables.js'
import {AUTHORIZE_SCOPES, MEMBER_SCOPES} from './scopes.js'
import {mintToken, type TokenResponse} from './tokens.js'

/** An operator mints a member token directly (test scripts), as if the member had allowed. */
export async function issueToken(db: Db, memberId: number, clientId: string, now: Date, scopes: readonly string[] = MEMBER_SCOPES): Promise<TokenResponse> {
  const client = await getClientRow(narrow(db), clientId)
  if (client.expired_at !== null) throw new AppError('bad_request', `client ${clientId} has expired`)
  if (!hasGrant(client, 'signon'))
    throw new AppError('bad_request', `client ${clientId} does not have the signon grant, so it cannot hold members' tokens (update-client --grant to add it)`)
  if (client.dpop_bound_access_tokens === 1)
    throw new AppError(
      'bad_request',
      `client ${clientId} takes only DPoP-bound tokens, which it must ask for itself with a proof of its key (update-client --no-require-dpop to allow bearer tokens)`,
    )
  const member = await getMemberRow(narrow(db), memberId)
  if (member.active !== 1) throw new AppError('bad_request', `member ${memberId} is not active`)
  const unknown = scopes.filter((scope) => !AUTHORIZE_SCOPES.includes(scope))
  if (unknown.length > 0) throw new AppError('bad_request', `unknown scope: ${unknown.join(' ')} (a member's token may have ${AUTHORIZE_SCOPES.join(', ')})`)
  if (scopes.length === 0) throw new AppError('bad_request', `a member's token needs at least one scope of ${AUTHORIZE_SCOPES.join(', ')}`)
  return mintToken(db, client, memberId, [...new Set(scopes)].join(' '), null, now)
}
