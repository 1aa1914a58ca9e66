import type {ClientView} from '../../src/registry/views.js'
import type {MemberView} from '../../src/registry/views.js'
import {formatRecord, formatTable} from '../../src/lib/table.js'
import {standardWebhooksSecret} from '../../src/interfaces/partner/signatures.js'

/** Human renderings shared by the client and member commands. */
export function clientRecord(client: ClientView & {client_secret?: string}): string {
  return formatRecord({...client})
}

/**
 * The client with its signing secret in the form the Standard Webhooks libraries take, for the
 * partner; only when the secret was given in this run, since the store keeps it sealed.
 */
export function withStandardSecret<T extends object>(client: T, signingSecret: string | null | undefined): T & {standard_webhooks_secret?: string} {
  return signingSecret ? {...client, standard_webhooks_secret: standardWebhooksSecret(signingSecret)} : client
}

export function clientTable(clients: ClientView[]): string {
  return formatTable(clients, [
    {header: 'client_id', get: (c) => c.client_id},
    {header: 'name', get: (c) => c.name},
    {header: 'grants', get: (c) => c.grants.join(',')},
    {header: 'id_token_alg', get: (c) => c.id_token_alg},
    // The URIs themselves are long; show-client prints them.
    {header: 'logout_uris', get: (c) => c.post_logout_redirect_uris.length, align: 'right'},
    {header: 'token_ttl', get: (c) => c.token_ttl ?? 'none', align: 'right'},
    {header: 'expired', get: (c) => (c.expired ? 'yes' : 'no')},
  ])
}

export function memberRecord(member: MemberView): string {
  return formatRecord({...member})
}

export function memberTable(members: MemberView[]): string {
  return formatTable(members, [
    {header: 'user_id', get: (m) => m.user_id, align: 'right'},
    {header: 'email', get: (m) => m.email},
    {header: 'name', get: (m) => `${m.first_name} ${m.last_name}`},
    {header: 'country', get: (m) => m.country_of_practice},
    {header: 'specialty', get: (m) => m.primary_specialty},
    {header: 'npi', get: (m) => m.npi},
    {header: 'active', get: (m) => (m.active ? 'yes' : 'no')},
  ])
}
