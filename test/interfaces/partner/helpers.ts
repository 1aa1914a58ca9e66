import {spawn} from 'node:child_process'
import type {Hono} from 'hono'
import {receiverApp} from '../../../src/interfaces/partner/receiver/routes.js'
import {openReceiverStore, type ReceiverStore} from '../../../src/interfaces/partner/receiver/store.js'
import type {HttpEnv} from '../../../src/http/env.js'
import type {PartnerRequest, PartnerResponse, Transport} from '../../../src/http/outbound.js'
import {DeliveryWorker} from '../../../src/interfaces/partner/worker.js'
import type {Clock, ManualClock} from '../../../src/lib/clock.js'
import {npiFromBase} from '../../../src/lib/npi.js'
import type {Store} from '../../../src/store/db.js'
import {cliArgv} from '../../helpers/cli.js'
import {registerTestClient} from '../../helpers/clients.js'
import {openMemoryStore} from '../../helpers/store.js'

export const PARTNER_URL = 'http://partner.test'

export async function partnerStore(clock: ManualClock, partners = 1): Promise<{store: Store; db: Store['db']; clientIds: string[]}> {
  const store = await openMemoryStore()
  const clientIds: string[] = []
  for (let i = 0; i < partners; i++) {
    const client = await registerTestClient(
      store,
      {
        name: `Partner ${i + 1}`,
        grants: ['partner'],
        partner_url: i === 0 ? PARTNER_URL : `http://partner${i + 1}.test/base`,
        // Fake transports never leave the process: plain http to these names is fine here.
        allow_insecure_partner_url: true,
        partner_username: 'medpanel',
        partner_password: `pw-${i}`,
        signing_secret: i === 0 ? 'signing-secret-0123456789' : null,
      },
      clock.now(),
    )
    clientIds.push(client.client_id)
  }
  return {store, db: store.db, clientIds}
}

/** Records requests and answers from a script (default 200). */
export class FakeTransport implements Transport {
  readonly requests: PartnerRequest[] = []
  constructor(private answer: (request: PartnerRequest, index: number) => number | Error = () => 200) {}
  async send(request: PartnerRequest): Promise<PartnerResponse> {
    const index = this.requests.length
    this.requests.push(request)
    const outcome = this.answer(request, index)
    if (outcome instanceof Error) throw outcome
    return {status: outcome, body: outcome >= 300 ? 'nope' : '{}'}
  }
  setAnswer(answer: (request: PartnerRequest, index: number) => number | Error): void {
    this.answer = answer
  }
}

/** A transport that hands each request to an in-process Hono app (the reference partner). */
export function appTransport(app: Hono<HttpEnv>, before?: (request: PartnerRequest) => number | undefined): Transport & {requests: PartnerRequest[]} {
  const requests: PartnerRequest[] = []
  return {
    requests,
    async send(request) {
      requests.push(request)
      const early = before?.(request)
      if (early !== undefined) return {status: early, body: 'injected failure'}
      const response = await app.request(request.url, {method: request.method, headers: request.headers, body: request.body})
      return {status: response.status, body: await response.text()}
    },
  }
}

export async function referencePartner(clock: Clock): Promise<{store: ReceiverStore; app: Hono<HttpEnv>; logs: string[]}> {
  const store = await openReceiverStore(':memory:')
  const logs: string[] = []
  const app = receiverApp({db: store.db, username: 'medpanel', password: 'pw-0', clock, log: (l) => logs.push(l)})
  return {store, app, logs}
}

export function worker(store: Store, clock: Clock, transport: Transport): DeliveryWorker {
  return new DeliveryWorker({db: store.db, keys: store.keys, clock, transport})
}

export const NPI = Array.from({length: 50}, (_, i) => npiFromBase(String(100000000 + i)))

export function quotaInput(overrides: Record<string, unknown> = {}): any {
  return {
    quota_id: 'Q1',
    status: 'open',
    limit: 2,
    incidence_rate: 0.4,
    type: 'specialty',
    matching_specialties: ['Cardiology'],
    matching_regions: ['NY', 'DC', 'PR'],
    cost_per_complete: '120.50',
    honoraria: 75,
    url: 'https://survey.example/s?npi=<npi>',
    closes_at: '2026-02-01T00:00:00Z',
    ...overrides,
  }
}

export function projectInput(overrides: Record<string, unknown> = {}): any {
  return {project_id: 'P1', name: 'Cardiology attitudes', duration: 20, status: 'active', project_type: 'custom', ...overrides}
}

export function members(n: number, offset = 0): {npi: string; honoraria: string; url: string}[] {
  return Array.from({length: n}, (_, i) => ({npi: NPI[offset + i]!, honoraria: '75.25', url: `https://survey.example/s?npi=${NPI[offset + i]}`}))
}

/**
 * Runs the built CLI without blocking this process (spawnSync would freeze servers this test
 * process hosts, such as a deliberately broken partner).
 */
export function cliAsync(args: string[]): Promise<{status: number; stdout: string; stderr: string}> {
  return new Promise((resolve) => {
    const [command, ...argv] = cliArgv(args)
    const child = spawn(command, argv, {stdio: ['ignore', 'pipe', 'pipe']})
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.once('close', (code) => resolve({status: code ?? -1, stdout, stderr}))
  })
}
