import {AppError} from '../errors.js'
import {grantsHolding} from '../grants/repository.js'
import {apiKeyHolding} from '../interfaces/conversations/keys.js'
import {partnerHolding} from '../interfaces/partner/projects.js'
import {pulseHolding} from '../interfaces/pulse/repository.js'
import {deleteClientRow} from '../registry/repository.js'
import {getClientRow} from '../registry/views.js'
import type {Db} from '../schema.js'
import type {AnyClientHolding, HeldKind} from '../store/client-holding.js'
import {narrow} from '../store/database.js'
import {writeTransaction} from '../store/transactions.js'

/*
 * remove-client, composed of what each owner of tables keeps for a client (its ClientHolding,
 * declared beside its own queries): grants' credentials, interface E's API keys, D's pulses and
 * B's outbox rows and partner lists. This module reads no table itself.
 */

/** What depends on a client, by the words remove-client uses for each. */
export interface ClientDependents {
  access_tokens: number
  authorization_codes: number
  api_keys: number
  pulses: number
  /** Outbox rows to this partner not yet delivered (pending or failed). */
  undelivered_deliveries: number
  /** Partner projects that list this client as a receiving partner. */
  partner_projects: number
}

/** Every owner that keeps rows for a client, in the order remove-client counts, names and releases them. */
const HOLDINGS = [grantsHolding, apiKeyHolding, pulseHolding, partnerHolding] as const
const holdings: readonly AnyClientHolding[] = HOLDINGS

/** Checked when compiled: the holdings count ClientDependents' fields, no more and no fewer. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
type Holds<Check extends true> = Check
export type HoldingsCountDependents = Holds<Same<HeldKind<(typeof HOLDINGS)[number]>, keyof ClientDependents>>

export async function clientDependents(db: Db, clientId: string): Promise<ClientDependents> {
  const dependents = {} as ClientDependents
  for (const holding of holdings) Object.assign(dependents, await holding.count(db, clientId))
  return dependents
}

export function dependentsText(d: ClientDependents): string {
  const parts: [number, string, string][] = [
    [d.access_tokens, 'access token', 'access tokens'],
    [d.authorization_codes, 'authorization code', 'authorization codes'],
    [d.api_keys, 'API key', 'API keys'],
    [d.pulses, 'pulse', 'pulses'],
    [d.undelivered_deliveries, 'undelivered partner delivery', 'undelivered partner deliveries'],
    [d.partner_projects, 'partner project listing it', 'partner projects listing it'],
  ]
  return parts
    .filter(([n]) => n > 0)
    .map(([n, one, many]) => `${n} ${n === 1 ? one : many}`)
    .join(', ')
}

/**
 * Removes a client. Without `force` it refuses while anything depends on it: the schema would
 * cascade the delete to its tokens, codes, API keys (with their call log) and pulses (with their
 * respondents and answers) on both stores, which is data an operator may not know they are losing.
 * With `force` all of that goes, in one transaction, together with its undelivered partner
 * deliveries (a removed partner cannot receive them), and it is taken off the partner lists of
 * projects. Delivered outbox rows and ledger entries it posted stay as history.
 */
export async function removeClient(db: Db, clientId: string, force: boolean): Promise<{client_id: string; removed: ClientDependents}> {
  return writeTransaction(db, async (trx) => {
    await getClientRow(narrow(trx), clientId)
    const dependents = await clientDependents(trx, clientId)
    const text = dependentsText(dependents)
    if (text !== '' && !force) {
      throw new AppError('conflict', `client ${clientId} still has ${text}; remove-client --force removes them with it`)
    }
    for (const holding of holdings) await holding.release(trx, clientId)
    await deleteClientRow(narrow(trx), clientId)
    return {client_id: clientId, removed: dependents}
  })
}
