import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {listDeliveries} from '../../../src/interfaces/partner/outbox.js'
import {closeProject, pushEvent, pushMembers, pushProject, pushQuota, removeMember, setQuotaStatus, getProject, getMembers} from '../../../src/interfaces/partner/service.js'
import {ManualClock} from '../../../src/lib/clock.js'
import type {Store} from '../../../src/store/db.js'
import {members, NPI, partnerStore, projectInput, quotaInput} from './helpers.js'

describe('interface B source of truth and outbox', () => {
  let clock: ManualClock
  let store: Store
  let db: Store['db']
  let clientIds: string[]

  beforeEach(async () => {
    clock = new ManualClock('2026-01-15T12:00:00.000Z')
    ;({store, db, clientIds} = await partnerStore(clock, 2))
  })
  afterEach(async () => store.close())

  // Outbox rows with their request bodies (kept in a table of their own).
  const outbox = () => db.selectFrom('partner_deliveries as d').leftJoin('partner_delivery_bodies as b', 'b.seq', 'd.seq').selectAll('d').select('b.body')
  const pending = async () => (await listDeliveries(db, {status: 'pending'})).map((d) => `${d.method} ${d.path}`)

  it('queues a project PUT per partner carrying exactly the spec fields, timestamps filled in', async () => {
    const result = await pushProject(db, projectInput({custom_text: 'Bring coffee'}), {}, clock.now())
    expect(result.partners).toEqual(clientIds)
    const rows = await outbox().orderBy('d.seq').execute()
    expect(rows).toHaveLength(2)
    expect(JSON.parse(rows[0]!.body!)).toEqual({
      project_id: 'P1',
      name: 'Cardiology attitudes',
      custom_text: 'Bring coffee',
      duration: 20,
      status: 'active',
      project_type: 'custom',
      created_at: '2026-01-15T12:00:00.000Z',
      updated_at: '2026-01-15T12:00:00.000Z',
    })
    clock.advance(60)
    await pushProject(db, projectInput({name: 'Renamed'}), {}, clock.now())
    const project = (await getProject(db, 'P1')).project
    expect(project.created_at).toBe('2026-01-15T12:00:00.000Z')
    expect(project.updated_at).toBe('2026-01-15T12:01:00.000Z')
  })

  it('sends a project only to the partners named with --partner, and keeps that choice', async () => {
    await pushProject(db, projectInput(), {partners: [clientIds[1]!]}, clock.now())
    await pushQuota(db, 'P1', quotaInput(), clock.now())
    const partners = new Set((await listDeliveries(db, {})).map((d) => d.client_id))
    expect([...partners]).toEqual([clientIds[1]])
    await expect(pushProject(db, projectInput({project_id: 'P2'}), {partners: ['nope']}, clock.now())).rejects.toThrow(/no client with id "nope"/)
  })

  it.each([
    [projectInput({status: 'paused'}), /^status: must be one of onhold, active, closed/],
    [projectInput({project_type: 'adhoc'}), /^project_type: must be one of custom, real-time/],
    [projectInput({duration: '20'}), /^duration: /],
    [projectInput({created_at: '2026-01-15T12:00:00+02:00'}), /^created_at: must be an ISO 8601 UTC timestamp/],
    [projectInput({internal_note: 'x'}), /internal_note/],
    [projectInput({name: undefined}), /^name: /],
  ])('rejects a bad project (%#) naming the field, storing and queueing nothing', async (input, message) => {
    await expect(pushProject(db, input, {}, clock.now())).rejects.toThrow(message)
    expect(await db.selectFrom('partner_projects').selectAll().execute()).toEqual([])
    expect(await pending()).toEqual([])
  })

  it.each([
    [quotaInput({incidence_rate: 1.2}), /^incidence_rate: must be between 0 and 1/],
    [quotaInput({matching_regions: ['NY', 'ZZ']}), /^matching_regions\[1\]: must be a two-letter US state or territory/],
    [quotaInput({matching_regions: ['ny']}), /^matching_regions\[0\]/],
    [quotaInput({url: 'https://survey.example/s?npi=NPI'}), /^url: must contain the literal <npi>/],
    [quotaInput({cost_per_complete: 12.345678}), /^cost_per_complete: must be a non-negative decimal/],
    [quotaInput({honoraria: '-5'}), /^honoraria: /],
    [quotaInput({closes_at: 'next week'}), /^closes_at: /],
    [quotaInput({status: 'full'}), /^status: /],
    [quotaInput({type: 'region'}), /^type: /],
    [quotaInput({limit: 0}), /^limit: /],
    [quotaInput({project_id: 'P9'}), /^project_id: the file says "P9"/],
  ])('rejects a bad quota (%#) naming the field, queueing nothing', async (input, message) => {
    await pushProject(db, projectInput(), {}, clock.now())
    const before = await pending()
    await expect(pushQuota(db, 'P1', input, clock.now())).rejects.toThrow(message)
    expect(await pending()).toEqual(before)
    expect(await db.selectFrom('partner_quotas').selectAll().execute()).toEqual([])
  })

  it('accepts every state, DC and the territories as regions and keeps money exact', async () => {
    await pushProject(db, projectInput(), {}, clock.now())
    await pushQuota(
      db,
      'P1',
      quotaInput({matching_regions: ['AK', 'WY', 'DC', 'PR', 'GU', 'VI', 'AS', 'MP'], cost_per_complete: '0.1', cost_per_incentive: 1234567890.1234}),
      clock.now(),
    )
    const row = await outbox().where('d.method', '=', 'PUT').where('d.path', '=', '/v1/projects/P1/quotas/Q1').executeTakeFirstOrThrow()
    expect(row.body).toContain('"cost_per_complete":0.1,')
    expect(row.body).toContain('"cost_per_incentive":1234567890.1234,')
    expect(Object.keys(JSON.parse(row.body!))).toEqual([
      'quota_id',
      'project_id',
      'status',
      'limit',
      'incidence_rate',
      'type',
      'matching_specialties',
      'matching_regions',
      'cost_per_complete',
      'cost_per_incentive',
      'honoraria',
      'url',
      'closes_at',
      'created_at',
      'updated_at',
    ])
  })

  it('sends member lists as a PUT of the first chunk and POSTs of the rest', async () => {
    await pushProject(db, projectInput(), {partners: [clientIds[0]!]}, clock.now())
    await pushQuota(db, 'P1', quotaInput(), clock.now())
    const result = await pushMembers(db, {projectId: 'P1', quotaId: 'Q1', members: members(5), chunk: 2}, clock.now())
    expect(result).toMatchObject({mode: 'replace', members: 5, total: 5, requests: 3})
    const rows = await outbox().where('d.kind', '=', 'members').orderBy('d.seq').execute()
    expect(rows.map((r) => r.method)).toEqual(['PUT', 'POST', 'POST'])
    expect(rows.flatMap((r) => JSON.parse(r.body!))).toEqual(members(5).map((m) => ({...m, honoraria: 75.25})))
    await pushMembers(db, {projectId: 'P1', quotaId: 'Q1', members: members(2, 5), append: true}, clock.now())
    expect((await getMembers(db, 'P1', 'Q1')).map((m) => m.npi)).toEqual(NPI.slice(0, 7))
    await expect(pushMembers(db, {projectId: 'P1', quotaId: 'Q1', members: members(1, 6), append: true}, clock.now())).rejects.toThrow(
      /members\[0\]\.npi: .* is already on the quota's list/,
    )
    await expect(pushMembers(db, {projectId: 'P1', quotaId: 'Q1', members: [{npi: '1234567890', honoraria: 5, url: 'https://x.example'}]}, clock.now())).rejects.toThrow(
      /members\[0\]\.npi: must be a valid 10-digit NPI/,
    )
    await expect(pushMembers(db, {projectId: 'P1', quotaId: 'Q1', members: [...members(1), ...members(1)]}, clock.now())).rejects.toThrow(
      /members\[1\]\.npi: .* appears more than once/,
    )
    expect(await getMembers(db, 'P1', 'Q1')).toHaveLength(7)
    await removeMember(db, 'P1', 'Q1', NPI[3]!, clock.now())
    expect((await pending()).at(-1)).toBe(`DELETE /v1/projects/P1/quota/Q1/members/${NPI[3]}`)
    await expect(removeMember(db, 'P1', 'Q1', NPI[3]!, clock.now())).rejects.toThrow(/is not on the list/)
  })

  it('brings a partner added to a running project up to date: project, quotas, then member lists', async () => {
    await pushProject(db, projectInput(), {partners: [clientIds[0]!]}, clock.now())
    await pushQuota(db, 'P1', quotaInput(), clock.now())
    await pushQuota(db, 'P1', quotaInput({quota_id: 'Q2'}), clock.now())
    await pushMembers(db, {projectId: 'P1', quotaId: 'Q1', members: members(3)}, clock.now())
    const before = (await listDeliveries(db, {})).length
    await pushProject(db, projectInput({name: 'Two partners now'}), {partners: clientIds}, clock.now())
    const added = (await listDeliveries(db, {})).slice(before)
    expect(added.filter((d) => d.client_id === clientIds[0]).map((d) => `${d.method} ${d.path}`)).toEqual(['PUT /v1/projects/P1'])
    expect(added.filter((d) => d.client_id === clientIds[1]).map((d) => `${d.method} ${d.path}`)).toEqual([
      'PUT /v1/projects/P1',
      'PUT /v1/projects/P1/quotas/Q1',
      'PUT /v1/projects/P1/quotas/Q1/members',
      'PUT /v1/projects/P1/quotas/Q2',
    ])
  })

  it('drops a queued PUT when a newer PUT of the same resource is queued, but never one something later needs', async () => {
    await pushProject(db, projectInput(), {partners: [clientIds[0]!]}, clock.now())
    await pushProject(db, projectInput({name: 'v2'}), {}, clock.now())
    expect(await pending()).toEqual(['PUT /v1/projects/P1'])
    await pushQuota(db, 'P1', quotaInput(), clock.now())
    await pushProject(db, projectInput({name: 'v3'}), {}, clock.now())
    // The quota PUT needs the project at the partner first, so the earlier project PUT stays.
    expect(await pending()).toEqual(['PUT /v1/projects/P1', 'PUT /v1/projects/P1/quotas/Q1', 'PUT /v1/projects/P1'])
    await pushQuota(db, 'P1', quotaInput({limit: 5}), clock.now())
    // Nothing queued after the older quota PUT needs it, so it goes; the new one takes the end of the line.
    expect(await pending()).toEqual(['PUT /v1/projects/P1', 'PUT /v1/projects/P1', 'PUT /v1/projects/P1/quotas/Q1'])
    await pushMembers(db, {projectId: 'P1', quotaId: 'Q1', members: members(3), chunk: 1}, clock.now())
    await pushMembers(db, {projectId: 'P1', quotaId: 'Q1', members: members(2, 10), chunk: 1}, clock.now())
    const rows = await listDeliveries(db, {})
    const superseded = rows.filter((r) => r.status === 'superseded').map((r) => `${r.method} ${r.path}`)
    expect(superseded).toEqual([
      'PUT /v1/projects/P1',
      'PUT /v1/projects/P1/quotas/Q1',
      'PUT /v1/projects/P1/quotas/Q1/members',
      'POST /v1/projects/P1/quotas/Q1/members',
      'POST /v1/projects/P1/quotas/Q1/members',
    ])
  })

  it('counts completes, closes the quota at its limit after the event, and turns later starts into quotafull', async () => {
    await pushProject(db, projectInput(), {partners: [clientIds[0]!]}, clock.now())
    await pushQuota(db, 'P1', quotaInput({limit: 2}), clock.now())
    await expect(pushEvent(db, {project_id: 'P1', npi: NPI[0]!, state: 'complete'}, clock.now())).rejects.toThrow(/^quota_id: is required for a complete event/)
    const start = await pushEvent(db, {project_id: 'P1', npi: NPI[0]!, state: 'start'}, clock.now())
    expect(start.event).toEqual({npi: NPI[0], project_id: 'P1', state: 'start', event_at: '2026-01-15T12:00:00.000Z'})
    await pushEvent(db, {project_id: 'P1', quota_id: 'Q1', npi: NPI[0]!, state: 'complete', event_at: '2026-01-15T11:00:00Z'}, clock.now())
    await expect(pushEvent(db, {project_id: 'P1', quota_id: 'Q1', npi: NPI[0]!, state: 'complete'}, clock.now())).rejects.toThrow(/already completed/)
    const second = await pushEvent(db, {project_id: 'P1', quota_id: 'Q1', npi: NPI[1]!, state: 'complete'}, clock.now())
    expect(second.quota).toMatchObject({status: 'closed', completes: 2, closed_now: true})
    expect((await pending()).slice(-2)).toEqual(['POST /v1/projects/P1/events', 'PUT /v1/projects/P1/quotas/Q1'])
    const late = await pushEvent(db, {project_id: 'P1', quota_id: 'Q1', npi: NPI[2]!, state: 'start'}, clock.now())
    expect(late).toMatchObject({reported_state: 'start', event: {state: 'quotafull'}})
    const body = await outbox().orderBy('d.seq', 'desc').executeTakeFirstOrThrow()
    expect(JSON.parse(body.body!)).toEqual({npi: NPI[2], quota_id: 'Q1', project_id: 'P1', state: 'quotafull', event_at: '2026-01-15T12:00:00.000Z'})
    const reopened = await setQuotaStatus(db, 'P1', 'Q1', 'open', clock.now())
    expect(reopened.quota.status).toBe('open')
    expect(reopened.completes).toBe(2)
  })

  it('close-project queues every open quota closed, then the project; reopening a quota of a closed project is refused', async () => {
    await pushProject(db, projectInput(), {partners: [clientIds[0]!]}, clock.now())
    await pushQuota(db, 'P1', quotaInput({quota_id: 'Q1'}), clock.now())
    await pushQuota(db, 'P1', quotaInput({quota_id: 'Q2'}), clock.now())
    await pushQuota(db, 'P1', quotaInput({quota_id: 'Q3', status: 'closed'}), clock.now())
    const result = await closeProject(db, 'P1', clock.now())
    expect(result.closed_quotas).toEqual(['Q1', 'Q2'])
    const rows = await listDeliveries(db, {status: 'pending'})
    expect(rows.slice(-3).map((r) => `${r.method} ${r.path}`)).toEqual(['PUT /v1/projects/P1/quotas/Q1', 'PUT /v1/projects/P1/quotas/Q2', 'PUT /v1/projects/P1'])
    expect((await closeProject(db, 'P1', clock.now())).already_closed).toBe(true)
    await expect(pushQuota(db, 'P1', quotaInput({quota_id: 'Q1'}), clock.now())).rejects.toThrow(/project "P1" is closed/)
  })

  it('pushing a project as closed closes its quotas first', async () => {
    await pushProject(db, projectInput(), {partners: [clientIds[0]!]}, clock.now())
    await pushQuota(db, 'P1', quotaInput(), clock.now())
    const result = await pushProject(db, projectInput({status: 'closed'}), {}, clock.now())
    expect(result.closed_quotas).toEqual(['Q1'])
    expect((await pending()).slice(-2)).toEqual(['PUT /v1/projects/P1/quotas/Q1', 'PUT /v1/projects/P1'])
  })

  it('refuses quotas, members and events of an unknown project or quota', async () => {
    await expect(pushQuota(db, 'nope', quotaInput(), clock.now())).rejects.toThrow(/no project "nope"/)
    await pushProject(db, projectInput(), {}, clock.now())
    await expect(pushMembers(db, {projectId: 'P1', quotaId: 'Q9', members: members(1)}, clock.now())).rejects.toThrow(/no quota "Q9"/)
    await expect(pushEvent(db, {project_id: 'P1', quota_id: 'Q9', npi: NPI[0]!, state: 'screenout'}, clock.now())).rejects.toThrow(/no quota "Q9"/)
  })
})
