import {isDeepStrictEqual} from 'node:util'
import {config} from '../../config.js'
import {AppError} from '../../errors.js'
import {randomToken} from '../../lib/ids.js'
import {npiFromBase} from '../../lib/npi.js'
import {encodeId} from './outbox.js'
import {basicAuthorization, networkFailure, partnerTransport, type Transport} from './transport.js'

/** Bytes of one answer verify-partner reads; a longer answer fails its check (config.ts says why). */
const ANSWER_LIMIT_BYTES = config.partner.verifyResponseBodyLimitBytes

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
}

interface Answer {
  status: number
  json: unknown
  text: string
}

/** An answer longer than ANSWER_LIMIT_BYTES: the check that asked fails, naming the limit. */
class AnswerTooLong extends Error {}

export async function verifyPartner(options: VerifyOptions): Promise<VerifyReport> {
  const base = options.url.trim().replace(/\/+$/, '')
  if (!URL.canParse(base) || !/^https?:$/.test(new URL(base).protocol)) {
    throw new AppError('bad_request', `url: "${options.url}" is not an http(s) URL; give the partner base URL without /v1, e.g. https://partner.example.com`)
  }
  const transport = options.transport ?? partnerTransport
  const timeoutMs = options.timeoutMs ?? config.partner.requestTimeoutMs
  const good = basicAuthorization(options.username, options.password)
  const wrong = basicAuthorization(options.username, `${options.password}-wrong`)
  const checks: Check[] = []
  const stamp = new Date().toISOString().replace(/\.\d+Z$/, 'Z')

  const p = options.projectId ?? `medpanel-verify-${randomToken(6).replace(/[-_]/g, 'x')}`
  const q = 'verify-quota-1'
  const projectPath = `/v1/projects/${encodeId(p)}`
  const quotaPath = `${projectPath}/quotas/${encodeId(q)}`
  const membersPath = `${quotaPath}/members`
  const memberPath = (npi: string) => `${projectPath}/quota/${encodeId(q)}/members/${npi}`
  const eventsPath = `${projectPath}/events`

  const npis = ['900000001', '900000002', '900000003'].map(npiFromBase)
  const member = (npi: string, honoraria: number) => ({npi, honoraria, url: `https://survey.example.com/s/${encodeId(p)}?npi=${npi}`})
  const project = {
    project_id: p,
    name: 'medpanel conformance check',
    custom_text: 'Created by medpanel verify-partner; safe to delete.',
    duration: 15,
    status: 'active',
    project_type: 'custom',
    created_at: stamp,
    updated_at: stamp,
  }
  const quota = {
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
  }

  async function call(method: string, path: string, body?: unknown, authorization: string | null = good): Promise<Answer> {
    const headers: Record<string, string> = {'content-type': 'application/json', accept: 'application/json', 'x-medpanel-delivery': `verify-${randomToken(12)}`}
    if (authorization) headers.authorization = authorization
    const response = await transport.send({method, url: base + path, headers, body: body === undefined ? undefined : JSON.stringify(body)}, timeoutMs, {
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

  /** Set when a request could not reach the partner at all (refused, timed out, bad address). */
  let unreachable = false
  async function check(name: string, run: () => Promise<string | true>): Promise<boolean> {
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

  const expectStatus = (answer: Answer, status: number) =>
    answer.status === status ? true : `expected HTTP ${status}, got ${answer.status}${answer.text ? ` (${answer.text.slice(0, 120)})` : ''}`
  const ok2xx = (answer: Answer) =>
    answer.status >= 200 && answer.status < 300 ? true : `expected 2xx, got ${answer.status}${answer.text ? ` (${answer.text.slice(0, 120)})` : ''}`
  const echoes = (answer: Answer, expected: unknown) => {
    if (answer.status !== 200) return `GET answered ${answer.status}`
    return isDeepStrictEqual(answer.json, expected) ? true : `GET returned ${JSON.stringify(answer.json)?.slice(0, 200)}, expected ${JSON.stringify(expected).slice(0, 200)}`
  }

  await check('project PUT accepted', async () => ok2xx(await call('PUT', projectPath, project)))
  // Nothing else can pass when the partner cannot be reached; stop rather than wait out every timeout.
  if (unreachable) return {ok: false, url: base, project_id: p, passed: 0, failed: 1, checks}
  await check('project GET returns the PUT', async () => echoes(await call('GET', projectPath), project))
  await check('quota PUT accepted', async () => ok2xx(await call('PUT', quotaPath, quota)))
  await check('quota GET returns the PUT', async () => echoes(await call('GET', quotaPath), quota))
  await check('quotas list GET contains the quota', async () => echoes(await call('GET', `${projectPath}/quotas`), [quota]))

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

  for (const state of ['start', 'screenout', 'quotafull', 'complete'] as const) {
    const event = {npi: npis[1]!, quota_id: q, project_id: p, state, event_at: stamp}
    await check(`event ${state} accepted with 200`, async () => expectStatus(await call('POST', eventsPath, event), 200))
  }

  // Credentials last, on resources that now exist: a partner that skipped auth would answer 200
  // (or 404 on a missing resource) instead of 401, and the check names the endpoint.
  const endpoints: [string, string, string, unknown?][] = [
    ['project', 'GET', projectPath],
    ['project', 'PUT', projectPath, project],
    ['quotas', 'GET', `${projectPath}/quotas`],
    ['quota', 'GET', quotaPath],
    ['quota', 'PUT', quotaPath, quota],
    ['members', 'GET', membersPath],
    ['members', 'PUT', membersPath, [updated, appended[0]]],
    ['members', 'POST', membersPath, []],
    ['member', 'GET', memberPath(npis[2]!)],
    ['member', 'PUT', memberPath(npis[2]!), appended[0]],
    ['member', 'DELETE', memberPath(npis[2]!)],
    ['events', 'POST', eventsPath, {npi: npis[1]!, quota_id: q, project_id: p, state: 'start', event_at: stamp}],
  ]
  for (const [label, method, path, body] of endpoints) {
    await check(`401 without credentials: ${method} ${label}`, async () => expectStatus(await call(method, path, body, null), 401))
    await check(`401 with wrong credentials: ${method} ${label}`, async () => expectStatus(await call(method, path, body, wrong), 401))
  }
  await check('members unchanged by refused calls', async () => echoes(await call('GET', membersPath), [updated, appended[0]]))

  // Leave the verification project closed, as a finished project would be.
  await call('PUT', quotaPath, {...quota, status: 'closed'}).catch(() => undefined)
  await call('PUT', projectPath, {...project, status: 'closed'}).catch(() => undefined)

  const failed = checks.filter((c) => !c.ok).length
  return {ok: failed === 0, url: base, project_id: p, passed: checks.length - failed, failed, checks}
}

function networkReason(error: unknown, timeoutMs: number): string {
  const failure = networkFailure(error)
  return failure.timeout ? `no answer within ${timeoutMs / 1000} s` : failure.reason
}
