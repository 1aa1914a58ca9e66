import {iso} from '../../lib/clock.js'
import {sha256} from '../../lib/hashing.js'
import {randomToken} from '../../lib/ids.js'
import * as grants from '../../grants/repository.js'
import type {Client} from '../../registry/tables.js'
import type {Db} from '../../store/database.js'

/** The token endpoint's answer (and issue-token's). */
export interface TokenResponse {
  access_token: string
  token_type: 'bearer'
  expires_in: number | null
  scope: string
  created_at: number
  /** OpenID Connect: only for a code whose request had the openid scope. */
  id_token?: string
}

/** Makes and stores an access token for the client (and the member, when it acts for one). */
export async function mintToken(db: Db, client: Client, memberId: number | null, scopes: string, codeHash: string | null, now: Date): Promise<TokenResponse> {
  const token = randomToken(32)
  const expiresAt = client.token_ttl === null ? null : iso(new Date(now.getTime() + client.token_ttl * 1000))
  await grants.insertToken(db, {
    token_hash: sha256(token),
    client_id: client.id,
    member_id: memberId,
    code_hash: codeHash,
    scopes,
    expires_at: expiresAt,
    created_at: iso(now),
  })
  return {access_token: token, token_type: 'bearer', expires_in: client.token_ttl, scope: scopes, created_at: Math.floor(now.getTime() / 1000)}
}
