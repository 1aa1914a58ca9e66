import {AppError} from '../../../errors.js'
import {hasGrant} from '../../../registry/service.js'
import {CLIENT_SCOPES, scopeList} from '../scopes.js'
import {mintToken} from '../tokens.js'
import {accessTokenSigner} from '../jwt-access-tokens.js'
import type {GrantFlow} from './grant.js'

/** client_credentials (RFC 6749 §4.4): a token acting for the client itself, for clients that own pulses. */
export const clientCredentials: GrantFlow<'scope' | 'resource'> = {
  grantType: 'client_credentials',
  parameters: ['scope', 'resource'],
  async exchange(request) {
    const {db, form, authenticate, dpopJkt, issuer, now} = request
    const client = await authenticate()
    if (!hasGrant(client, 'pulses')) throw new AppError('unauthorized_client', 'client_credentials is only for clients with the pulses grant')
    const scopes = form.scope ? scopeList(form.scope) : [...CLIENT_SCOPES]
    const unknown = scopes.filter((s) => !(CLIENT_SCOPES as readonly string[]).includes(s))
    if (unknown.length > 0) throw new AppError('invalid_scope', `unknown scope: ${unknown.join(' ')}`)
    const jwt = await accessTokenSigner(request, client, issuer, form.resource, now)
    return mintToken(db, client, null, scopes.join(' '), null, now, {dpopJkt, jwt})
  },
}
