import {isDeepStrictEqual} from 'node:util'
import {partnerConfig} from './config.js'
import {AppError} from '../../errors.js'
import {randomToken} from '../../lib/ids.js'
import {npiFromBase} from '../../lib/npi.js'
import {encodeId} from './outbox.js'
import {basicAuthorization} from './transport.js'
import {signatureHeaders, standardSignature} from './signatures.js'
import {networkFailure, partnerTransport, type Transport} from '../../http/outbound.js'

/** Bytes of one answer verify-partner reads; a longer answer fails its check (config.ts says why). */
const ANSWER_LIMIT_BYTES = partnerConfig.verifyResponseBodyLimitBytes

/**
 * Conformance checks for a partner's implementation of interface B: a whole lifecycle under ids
 * of its own (a fresh `medpanel-verify-…` project), so it never touches a partner's real data.
 */

export interface Check {
  name: string
  ok: boolean
  detail: string
}

export interface VerifyReport {
  ok: boolean
  url: string
  project_id: string
  passed: number
  failed: number
  checks: Check[]
}

export interface VerifyOptions {
  url: string
  username: string
  password: string
  transport?: Transport
  timeoutMs?: number
  /** Fixed project id (tests); default a random one. */
  projectId?: string
  /**
   * The client's signing secret, as given to register-client: every request is then signed with
   * it, and the partner must refuse writes whose Standard Webhooks signature does not hold.
   */
  signingSecret?: string
}

interface Answer {
  status: number
  json: unknown
  text: string
}

/** An answer longer than ANSWER_LIMIT_BYTES: the check that asked fails, naming the limit. */
class AnswerTooLong extends Error {}

/** The signature headers of one request, from its delivery id and body text. */
type Signer = (id: string, body: string) => Record<string, string>

/** Sends one request to the partner; `authorization` null sends none; `sign` replaces the run's own signer. */
type PartnerCall = (method: string, path: string, body?: unknown, authorization?: string | null, sign?: Signer) => Promise<Answer>

/** Runs one named check: true passes, a string fails with that detail, a throw fails it too. */
type RunCheck = (name: string, run: () => Promise<string | true>) => Promise<boolean>

/** The verification project: its paths, the members and documents the checks send and expect back. */
interface Fixtures {
  p: string
  q: string
  stamp: string
  projectPath: string
  quotaPath: string
  membersPath: string
  memberPath: (npi: string) => string
  eventsPath: string
  npis: string[]
  member: (npi: string, honoraria: number) => {npi: string; honoraria: number; url: string}
  project: Record<string, unknown>
  quota: Record<string, unknown>
}

export async function verifyPartner(options: VerifyOptions): Promise<VerifyReport> {
  const base = partnerBase(options.url)
  const timeoutMs = options.timeoutMs ?? partnerConfig.requestTimeoutMs
  const {signingSecret} = options
  const signer: Signer | undefined = signingSecret === undefined ? undefined : (id, body) => signatureHeaders(signingSecret, id, nowSeconds(), body)
  const call = partnerCaller(base, options.transport ?? partnerTransport, timeoutMs, basicAuthorization(options.username, options.password), signer)
  const wrong = basicAuthorization(options.username, `${options.password}-wrong`)
  const f = fixtures(options.projectId ?? `medpanel-verify-${randomToken(6).replace(/[-_]/g, 'x')}`, new Date().toISOString().replace(/\.\d+Z$/, 'Z'))
  const checks: Check[] = []
  /** Set when a request could not reach the partner at all (refused, timed out, bad address). */
  let unreachable = false
  const check: RunCheck = async (name, run) => {
    try {
      const result = await run()
      checks.push({name, ok: result === true, detail: result === true ? 'ok' : result})
      return result === true
    } catch (error) {
      if (error instanceof AnswerTooLong) {
        checks.push({name, ok: false, detail: error.message})
        return false
      }
      unreachable = true
      checks.push({name, ok: false, detail: `request failed: ${networkReason(error, timeoutMs)}`})
      return false
    }
  }

  await check('project PUT accepted', async () => ok2xx(await call('PUT', f.projectPath, f.project)))
  // Nothing else can pass when the partner cannot be reached; stop rather than wait out every timeout.
  if (unreachable) return {ok: false, url: base, project_id: f.p, passed: 0, failed: 1, checks}
  await checkProjectAndQuota(f, call, check)
  const kept = await checkMembers(f, call, check)
  await checkEvents(f, call, check)
  if (signingSecret !== undefined) await checkSignatures(f, call, check, signingSecret)
  await checkCredentials(f, kept, call, check, wrong)

  // Leave the verification project closed, as a finished project would be.
  await call('PUT', f.quotaPath, {...f.quota, status: 'closed'}).catch(() => undefined)
  await call('PUT', f.projectPath, {...f.project, status: 'closed'}).catch(() => undefined)

  const failed = checks.filter((c) => !c.ok).length
  return {ok: failed === 0, url: base, project_id: f.p, passed: checks.length - failed, failed, checks}
}

/** The partner's base URL without a trailing slash; anything but http(s) is refused. */
function partnerBase(url: string): string {
  const base = url.trim().replace(/\/+$/, '')
  if (!URL.canParse(base) || !/^https?:$/.test(new URL(base).protocol)) {
    throw new AppError('bad_request', `url: "${url}" is not an http(s) URL; give the partner base URL without /v1, e.g. https://partner.example.com`)
  }
  return base
}

function fixtures(p: string, stamp: string): Fixtures {
  const q = 'verify-quota-1'
  const projectPath = `/v1/projects/${encodeId(p)}`
  const quotaPath = `${projectPath}/quotas/${encodeId(q)}`
  return {
    p,
    q,
    stamp,
    projectPath,
    quotaPath,
    membersPath: `${quotaPath}/members`,
    memberPath: (npi) => `${projectPath}/quota/${encodeId(q)}/members/${npi}`,
    eventsPath: `${projectPath}/events`,
    npis: ['900000001', '900000002', '900000003'].map(npiFromBase),
    member: (npi, honoraria) => ({npi, honoraria, url: `https://survey.example.com/s/${encodeId(p)}?npi=${npi}`}),
    project: {
      project_id: p,
      name: 'medpanel conformance check',
      custom_text: 'Created by medpanel verify-partner; safe to delete.',
      duration: 15,
      status: 'active',
      project_type: 'custom',
      created_at: stamp,
      updated_at: stamp,
    },
    quota: {
      quota_id: q,
      project_id: p,
      status: 'open',
      limit: 10,
      incidence_rate: 0.25,
      type: 'specialty',
      matching_specialties: ['Cardiology'],
      matching_regions: ['NY', 'DC', 'PR'],
      cost_per_complete: 120.5,
      honoraria: 75,
      url: 'https://survey.example.com/s/verify?npi=<npi>',
      closes_at: '2030-01-01T00:00:00Z',
      created_at: stamp,
      updated_at: stamp,
    },
  }
}

/** Requests to the partner with the good credentials unless told otherwise, each answer read up to the limit. */
function partnerCaller(base: string, transport: Transport, timeoutMs: number, good: string, signer: Signer | undefined): PartnerCall {
  return async (method, path, body, authorization = good, sign = signer) => {
    const id = `verify-${randomToken(12)}`
    const text = body === undefined ? undefined : JSON.stringify(body)
    const headers: Record<string, string> = {'content-type': 'application/json', accept: 'application/json', 'x-medpanel-delivery': id, ...sign?.(id, text ?? '')}
    if (authorization) headers.authorization = authorization
    const response = await transport.send({method, url: base + path, headers, body: text}, timeoutMs, {
      maxBodyBytes: ANSWER_LIMIT_BYTES,
    })
    if (response.truncated) throw new AnswerTooLong(`${method} ${path} answered more than ${ANSWER_LIMIT_BYTES / 1024 / 1024} MiB; not read further`)
    let json: unknown
    try {
      json = JSON.parse(response.body)
    } catch {
      json = undefined
    }
    return {status: response.status, json, text: response.body}
  }
}

function expectStatus(answer: Answer, status: number): string | true {
  return answer.status === status ? true : `expected HTTP ${status}, got ${answer.status}${answer.text ? ` (${answer.text.slice(0, 120)})` : ''}`
}

function ok2xx(answer: Answer): string | true {
  return answer.status >= 200 && answer.status < 300 ? true : `expected 2xx, got ${answer.status}${answer.text ? ` (${answer.text.slice(0, 120)})` : ''}`
}

function echoes(answer: Answer, expected: unknown): string | true {
  if (answer.status !== 200) return `GET answered ${answer.status}`
  return isDeepStrictEqual(answer.json, expected) ? true : `GET returned ${JSON.stringify(answer.json)?.slice(0, 200)}, expected ${JSON.stringify(expected).slice(0, 200)}`
}

async function checkProjectAndQuota(f: Fixtures, call: PartnerCall, check: RunCheck): Promise<void> {
  await check('project GET returns the PUT', async () => echoes(await call('GET', f.projectPath), f.project))
  await check('quota PUT accepted', async () => ok2xx(await call('PUT', f.quotaPath, f.quota)))
  await check('quota GET returns the PUT', async () => echoes(await call('GET', f.quotaPath), f.quota))
  await check('quotas list GET contains the quota', async () => echoes(await call('GET', `${f.projectPath}/quotas`), [f.quota]))
}

/** The member list's lifecycle; returns the members it leaves at the partner. */
async function checkMembers(f: Fixtures, call: PartnerCall, check: RunCheck): Promise<{updated: unknown; appended: unknown}> {
  const {npis, member, membersPath, memberPath} = f
  const first = [member(npis[0]!, 75), member(npis[1]!, 80.25)]
  const appended = [member(npis[2]!, 90)]
  await check('members PUT accepted', async () => ok2xx(await call('PUT', membersPath, first)))
  await check('members GET returns the PUT list', async () => echoes(await call('GET', membersPath), first))
  await check('members POST appends', async () => {
    const answer = await call('POST', membersPath, appended)
    const accepted = ok2xx(answer)
    if (accepted !== true) return accepted
    return echoes(await call('GET', membersPath), [...first, ...appended])
  })
  await check('member GET (singular quota path) returns one member', async () => echoes(await call('GET', memberPath(npis[2]!)), appended[0]))
  const updated = member(npis[1]!, 99.99)
  await check('member PUT (singular quota path) updates it', async () => {
    const accepted = ok2xx(await call('PUT', memberPath(npis[1]!), updated))
    if (accepted !== true) return accepted
    return echoes(await call('GET', memberPath(npis[1]!)), updated)
  })
  await check('member DELETE removes it', async () => {
    const accepted = ok2xx(await call('DELETE', memberPath(npis[0]!)))
    if (accepted !== true) return accepted
    const gone = await call('GET', memberPath(npis[0]!))
    if (gone.status !== 404) return `GET of the deleted member answered ${gone.status}, expected 404`
    return echoes(await call('GET', membersPath), [updated, appended[0]])
  })
  return {updated, appended: appended[0]}
}

async function checkEvents(f: Fixtures, call: PartnerCall, check: RunCheck): Promise<void> {
  for (const state of ['start', 'screenout', 'quotafull', 'complete'] as const) {
    const event = {npi: f.npis[1]!, quota_id: f.q, project_id: f.p, state, event_at: f.stamp}
    await check(`event ${state} accepted with 200`, async () => expectStatus(await call('POST', f.eventsPath, event), 200))
  }
}

/**
 * A partner that checks signatures refuses (4xx) a push whose Standard Webhooks signature does
 * not hold, each time with a right X-Medpanel-Signature, so a partner checking only that header
 * fails here; it takes a signature list in which one of several holds (as during a change of
 * secret); and the refused pushes changed nothing.
 */
async function checkSignatures(f: Fixtures, call: PartnerCall, check: RunCheck, secret: string): Promise<void> {
  const tolerance = partnerConfig.signatureToleranceSeconds
  const right = (id: string, body: string) => signatureHeaders(secret, id, nowSeconds(), body)
  /** Standard Webhooks headers made by `standard`, beside an X-Medpanel-Signature that holds. */
  const beside = (standard: Record<string, string>, body: string) => ({...standard, 'x-medpanel-signature': right('', body)['x-medpanel-signature']!})
  const spoilt: [string, Signer][] = [
    ['no webhook-signature', (id, body) => withoutHeader(right(id, body), 'webhook-signature')],
    ['webhook-signature made with another secret', (id, body) => beside(signatureHeaders(`${secret}-other`, id, nowSeconds(), body), body)],
    ['webhook-signature of another body', (id, body) => beside(right(id, JSON.stringify(f.project)), body)],
    ['webhook-timestamp not the one signed', (id, body) => ({...right(id, body), 'webhook-timestamp': String(nowSeconds() - 1)})],
    [`webhook-timestamp ${2 * tolerance} s old`, (id, body) => beside(signatureHeaders(secret, id, nowSeconds() - 2 * tolerance, body), body)],
  ]
  const changed = {...f.project, name: 'medpanel verify-partner: a refused push must not change this'}
  for (const [what, sign] of spoilt) {
    await check(`4xx for a push with ${what}`, async () => {
      const answer = await call('PUT', f.projectPath, changed, undefined, sign)
      return answer.status >= 400 && answer.status < 500 ? true : `expected 4xx, got ${answer.status}${answer.text ? ` (${answer.text.slice(0, 120)})` : ''}`
    })
  }
  await check('project unchanged by pushes with bad signatures', async () => echoes(await call('GET', f.projectPath), f.project))
  const several: Signer = (id, body) => {
    const headers = right(id, body)
    return {...headers, 'webhook-signature': `${standardSignature(`${secret}-old`, id, Number(headers['webhook-timestamp']), body)} ${headers['webhook-signature']}`}
  }
  await check('push accepted when one of several webhook-signature values holds', async () => ok2xx(await call('PUT', f.projectPath, f.project, undefined, several)))
}

function withoutHeader(headers: Record<string, string>, name: string): Record<string, string> {
  const {[name]: _left, ...rest} = headers
  return rest
}

/**
 * Credentials last, on resources that now exist: a partner that skipped auth would answer 200
 * (or 404 on a missing resource) instead of 401, and the check names the endpoint.
 */
async function checkCredentials(f: Fixtures, kept: {updated: unknown; appended: unknown}, call: PartnerCall, check: RunCheck, wrong: string): Promise<void> {
  const {projectPath, quotaPath, membersPath, memberPath, npis} = f
  const {updated, appended} = kept
  const endpoints: [string, string, string, unknown?][] = [
    ['project', 'GET', projectPath],
    ['project', 'PUT', projectPath, f.project],
    ['quotas', 'GET', `${projectPath}/quotas`],
    ['quota', 'GET', quotaPath],
    ['quota', 'PUT', quotaPath, f.quota],
    ['members', 'GET', membersPath],
    ['members', 'PUT', membersPath, [updated, appended]],
    ['members', 'POST', membersPath, []],
    ['member', 'GET', memberPath(npis[2]!)],
    ['member', 'PUT', memberPath(npis[2]!), appended],
    ['member', 'DELETE', memberPath(npis[2]!)],
    ['events', 'POST', f.eventsPath, {npi: npis[1]!, quota_id: f.q, project_id: f.p, state: 'start', event_at: f.stamp}],
  ]
  for (const [label, method, path, body] of endpoints) {
    await check(`401 without credentials: ${method} ${label}`, async () => expectStatus(await call(method, path, body, null), 401))
    await check(`401 with wrong credentials: ${method} ${label}`, async () => expectStatus(await call(method, path, body, wrong), 401))
  }
  await check('members unchanged by refused calls', async () => echoes(await call('GET', membersPath), [updated, appended]))
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000)
}

function networkReason(error: unknown, timeoutMs: number): string {
  const failure = networkFailure(error)
  return failure.timeout ? `no answer within ${timeoutMs / 1000} s` : failure.reason
}
