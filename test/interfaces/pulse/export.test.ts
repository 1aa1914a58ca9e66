import {sql} from 'kysely'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {issueToken} from '../../../src/interfaces/signon/issue-token.js'
import type {PulseDocument} from '../../../src/interfaces/pulse/schema.js'
import {generatePulse, seedPulses} from '../../../src/interfaces/pulse/seed.js'
import {exportDocument, importPulse, listPulses, prepareExport} from '../../../src/interfaces/pulse/service.js'
import {addMember, registerClient, revokeConsent, updateClient} from '../../../src/registry/service.js'
import {form, freshApp, type TestContext} from '../../helpers/app.js'

const SECRET = 'a-long-enough-test-secret'
const client = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  url: 'https://example.com',
  logo_url: 'https://example.com/logo.png',
  grants: ['pulses'] as ('pulses' | 'signon')[],
  ...extra,
})

describe('interface D: pulse export over HTTP', () => {
  let ctx: TestContext
  let ownerPulses: string[]
  let rivalPulse: string

  beforeEach(async () => {
    ctx = await freshApp()
    const now = ctx.clock.now()
    await registerClient(ctx.store, client('Owner Research', {token_ttl: 3600}), now, {id: 'owner', secret: SECRET})
    await registerClient(ctx.store, client('Rival Insights'), now, {id: 'rival', secret: SECRET})
    await registerClient(ctx.store, client('Panel Admin', {admin: true}), now, {id: 'boss', secret: SECRET})
    await registerClient(ctx.store, client('Sign-on Only', {grants: ['signon'], redirect_uris: ['https://example.com/cb']}), now, {id: 'plain', secret: SECRET})
    ownerPulses = (await seedPulses(ctx.db, {clientId: 'owner', count: 4, respondents: 12, seed: 9}, now)).created.map((p) => p.project_id)
    rivalPulse = (await seedPulses(ctx.db, {clientId: 'rival', count: 1, respondents: 3, seed: 9}, now)).created[0]!.project_id
  })
  afterEach(async () => ctx.store.close())

  async function tokenFor(clientId: string): Promise<string> {
    const res = await ctx.app.request('/oauth/token', form({grant_type: 'client_credentials', client_id: clientId, client_secret: SECRET}))
    expect(res.status).toBe(200)
    return ((await res.json()) as {access_token: string}).access_token
  }
  async function exportText(id: string, viewer = {clientId: 'owner', admin: true}): Promise<string> {
    const parts: Uint8Array[] = []
    for await (const chunk of (await prepareExport(ctx.db, viewer, id)).chunks()) parts.push(chunk)
    return Buffer.concat(parts).toString('utf8')
  }
  const get = (path: string, token?: string) => ctx.app.request(path, {headers: token === undefined ? {} : {Authorization: `Bearer ${token}`}})

  it("exports the owner's pulse with the spec's PascalCase fields, every stored value intact", async () => {
    const res = await get(`/projects/${ownerPulses[0]}/export`, await tokenFor('owner'))
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^application\/json/)
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(res.headers.get('x-request-id')).toBeTruthy()
    const doc = (await res.json()) as PulseDocument
    expect(Object.keys(doc)).toEqual(['Project', 'Respondents', 'ClientName'])
    expect(Object.keys(doc.Project)).toEqual(['ProjectId', 'Title', 'InternalTitle', 'Identifier', 'StartDate', 'EndDate', 'FieldingTime', 'ExternalIntroduction', 'Questions'])
    expect(Object.keys(doc.Project.Questions[0]!)).toEqual([
      'QuestionCode',
      'Title',
      'Type',
      'IsScreener',
      'Choices',
      'ParentCode',
      'OtherAvailable',
      'DisplayUnit',
      'FixedSumTotal',
      'AnswersRequired',
      'FreetextLabels',
      'Rows',
    ])
    expect(Object.keys(doc.Respondents[0]!)).toEqual(['RespondentId', 'SermoId', 'SurveyStatus', 'Profile', 'Answers', 'FirstInteraction', 'LastInteraction'])
    expect(Object.keys(doc.Respondents[0]!.Profile[0]!)).toEqual(['Key', 'Value'])
    expect(Object.keys(doc.Respondents[0]!.Answers[0]!)).toEqual(['QuestionCode', 'Values'])
    expect(doc.ClientName).toBe('Owner Research')
    expect(doc.Project.ProjectId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    expect(doc.Project.StartDate).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
    expect(doc.Respondents.every((r) => r.FirstInteraction.endsWith('Z') && r.LastInteraction.endsWith('Z'))).toBe(true)
    const grid = doc.Project.Questions.find((q) => q.Type === 'GridSingleSelect')!
    expect(grid.Rows!.length).toBeGreaterThan(0)
    expect(grid.Rows![0]!.Rows).toBeNull()
    // What comes out is exactly what the generator made: the store loses nothing.
    const generated = generatePulse({seed: 9, clientId: 'owner', index: 0, respondents: 12})
    expect(doc.Project).toEqual(generated.project)
    expect(doc.Respondents).toEqual([...generated.respondents()])
  })

  it('accepts the id in any letter case and answers with lowercase GUIDs', async () => {
    const res = await get(`/projects/${ownerPulses[0]!.toUpperCase()}/export`, await tokenFor('owner'))
    expect(res.status).toBe(200)
    expect(((await res.json()) as PulseDocument).Project.ProjectId).toBe(ownerPulses[0])
  })

  it("answers 404 for another client's pulse, an unknown id and a malformed id alike", async () => {
    const token = await tokenFor('owner')
    for (const id of [rivalPulse, '00000000-0000-4000-8000-000000000000', 'not-a-guid', 'a'.repeat(300)]) {
      const res = await get(`/projects/${id}/export`, token)
      expect(res.status).toBe(404)
      const body = (await res.json()) as {error: string; error_description: string}
      expect(body.error).toBe('invalid_request')
      expect(body.error_description).toContain('no pulse')
    }
  })

  it('lets an admin client export any pulse and list all of them', async () => {
    const token = await tokenFor('boss')
    const res = await get(`/projects/${rivalPulse}/export`, token)
    expect(res.status).toBe(200)
    expect(((await res.json()) as PulseDocument).ClientName).toBe('Rival Insights')
    const info = (await (await get('/clients/info', token)).json()) as {ClientInfo: {Admin: boolean}; ProjectInfo: {ProjectId: string}[]}
    expect(info.ClientInfo.Admin).toBe(true)
    expect(info.ProjectInfo.map((p) => p.ProjectId).sort()).toEqual([...ownerPulses, rivalPulse].sort())
  })

  it("lists only the caller's pulses, with status and last status change", async () => {
    const token = await tokenFor('owner')
    const ids = await get('/clients/projectsInfo', token)
    expect(ids.status).toBe(200)
    expect(await ids.json()).toEqual({ProjectIds: ownerPulses})
    const info = (await (await get('/clients/info', token)).json()) as {ClientInfo: {Admin: boolean}; ProjectInfo: Record<string, string>[]}
    expect(info.ClientInfo).toEqual({Admin: false})
    expect(info.ProjectInfo.map((p) => Object.keys(p))).toEqual(ownerPulses.map(() => ['ProjectId', 'Title', 'Status', 'LastUpdated']))
    expect(info.ProjectInfo.map((p) => p.Status)).toEqual(['Launched', 'Completed', 'Held', 'Draft'])
    expect(info.ProjectInfo.every((p) => /Z$/.test(p.LastUpdated!))).toBe(true)
  })

  it('refuses missing, unknown, expired and revoked tokens with 401 and a Bearer challenge', async () => {
    const expectDenied = async (res: Response, error: string) => {
      expect(res.status).toBe(401)
      expect(res.headers.get('www-authenticate')).toMatch(new RegExp(`^Bearer .*error="${error}"`))
      expect(((await res.json()) as {error: string}).error).toBe(error)
    }
    const path = `/projects/${ownerPulses[0]}/export`
    await expectDenied(await get(path), 'invalid_request')
    await expectDenied(await get(path, 'made-up-token'), 'invalid_token')
    await expectDenied(await ctx.app.request(`${path}?access_token=x`), 'invalid_request')

    const expiring = await tokenFor('owner')
    ctx.clock.advance(3601)
    await expectDenied(await get(path, expiring), 'invalid_token')
    await expectDenied(await get('/clients/info', expiring), 'invalid_token')

    // A member token of the owner is never an export credential; once consent is revoked it is dead.
    const member = await addMember(
      ctx.db,
      {email: 'dr@example.com', password: 'password123', first_name: 'A', last_name: 'B', country: 'US', specialty: 'Cardiology'},
      ctx.clock.now(),
    )
    // The owner also signs members on, so it can hold a member token at all.
    await updateClient(ctx.store, 'owner', {grants: ['pulses', 'signon'], redirect_uris: ['https://example.com/cb']}, ctx.clock.now())
    const memberToken = (await issueToken(ctx.db, member.user_id, 'owner', ctx.clock.now())).access_token
    expect((await get(path, memberToken)).status).toBe(403)
    await revokeConsent(ctx.db, member.user_id, 'owner', ctx.clock.now())
    await expectDenied(await get(path, memberToken), 'invalid_token')

    const live = await tokenFor('owner')
    await updateClient(ctx.store, 'owner', {expire: true}, ctx.clock.now())
    await expectDenied(await get('/clients/projectsInfo', live), 'invalid_token')
  })

  it('answers 403 insufficient_scope to a live token of a client without the pulses grant', async () => {
    const member = await addMember(
      ctx.db,
      {email: 'dr2@example.com', password: 'password123', first_name: 'A', last_name: 'B', country: 'US', specialty: 'Cardiology'},
      ctx.clock.now(),
    )
    const token = (await issueToken(ctx.db, member.user_id, 'plain', ctx.clock.now())).access_token
    for (const path of [`/projects/${ownerPulses[0]}/export`, '/clients/info', '/clients/projectsInfo']) {
      const res = await get(path, token)
      expect(res.status).toBe(403)
      expect(res.headers.get('www-authenticate')).toContain('error="insufficient_scope"')
      expect(((await res.json()) as {error: string}).error).toBe('insufficient_scope')
    }
    // Losing the grant takes effect at once for tokens already issued.
    const owner = await tokenFor('owner')
    await updateClient(ctx.store, 'owner', {grants: ['balance']}, ctx.clock.now())
    expect((await get('/clients/info', owner)).status).toBe(403)
  })

  it('allows only GET', async () => {
    const res = await ctx.app.request('/clients/info', {method: 'POST', headers: {Authorization: `Bearer ${await tokenFor('owner')}`}})
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toBe('GET, HEAD')
  })

  it('streams the export in pieces, one page of respondents at a time', async () => {
    const res = await get(`/projects/${ownerPulses[0]}/export`, await tokenFor('owner'))
    const reader = res.body!.getReader()
    let pieces = 0
    let text = ''
    const decoder = new TextDecoder()
    for (;;) {
      const {done, value} = await reader.read()
      if (done) break
      pieces++
      text += decoder.decode(value, {stream: true})
    }
    expect(pieces).toBeGreaterThanOrEqual(3)
    expect((JSON.parse(text) as PulseDocument).Respondents).toHaveLength(12)

    // With small pages: head, three pages of 5, 5 and 2 respondents, tail.
    const prepared = await prepareExport(ctx.db, {clientId: 'owner', admin: false}, ownerPulses[0]!, 5)
    const chunks: string[] = []
    for await (const chunk of prepared.chunks()) chunks.push(Buffer.from(chunk).toString('utf8'))
    expect(chunks).toHaveLength(5)
    expect(chunks.slice(1, 4).map((c) => (c.match(/"RespondentId"/g) ?? []).length)).toEqual([5, 5, 2])
    expect(chunks.join('')).toBe(text)
    expect(await exportText(ownerPulses[0]!)).toBe(text)
  })

  it('renders respondents from their rows when no stored rendering exists, to the same bytes', async () => {
    const before = await exportText(ownerPulses[0]!)
    await ctx.db.updateTable('pulse_respondents').set({export_json: null}).where('pulse_id', '=', ownerPulses[0]!).execute()
    const rows = await ctx.db.selectFrom('pulse_respondents').select('export_json').where('pulse_id', '=', ownerPulses[0]!).execute()
    expect(rows.every((r) => r.export_json === null)).toBe(true)
    expect(await exportText(ownerPulses[0]!)).toBe(before)
    // A stored rendering that disagreed with the rows would show: prove the export reads it.
    await ctx.db.updateTable('pulse_respondents').set({export_json: '{"RespondentId":"x"}'}).where('pulse_id', '=', ownerPulses[0]!).execute()
    expect(JSON.parse(await exportText(ownerPulses[0]!)).Respondents[0]).toEqual({RespondentId: 'x'})
  })

  it('aborts the body (never a truncated 200 that parses) and logs when the store fails mid-export', async () => {
    const token = await tokenFor('owner')
    // The head (pulse and questions) still loads; the first page of respondents then fails.
    await sql`alter table pulse_respondents rename to pulse_respondents_gone`.execute(ctx.db)
    const res = await get(`/projects/${ownerPulses[0]}/export`, token)
    expect(res.status).toBe(200)
    await expect(res.text()).rejects.toThrow()
    expect(ctx.logs.some((line) => /export of [0-9a-f-]{36} failed mid-stream: .*(no such table|does not exist)/.test(line))).toBe(true)
    await sql`alter table pulse_respondents_gone rename to pulse_respondents`.execute(ctx.db)
  })

  it('exports a pulse without respondents as an empty list', async () => {
    const res = await get(`/projects/${ownerPulses[3]}/export`, await tokenFor('owner'))
    const doc = (await res.json()) as PulseDocument
    expect(doc.Respondents).toEqual([])
    expect(doc.Project.StartDate).toBeNull()
    expect(doc.Project.Questions).toHaveLength(20)
  })

  it('publishes the three routes in the OpenAPI document', async () => {
    const doc = (await (await ctx.app.request('/openapi.json')).json()) as {paths: Record<string, unknown>}
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/projects/{projectId}/export', '/clients/projectsInfo', '/clients/info']))
  })

  describe('import', () => {
    const owner = {clientId: 'owner', admin: false}

    it('round-trips: export, import under another id, export again gives the same document', async () => {
      const first = await exportDocument(ctx.db, owner, ownerPulses[1]!)
      const newId = '6b0f5a52-1f0e-4d8e-9b43-0c1d2e3f4a5b'
      ctx.clock.advance(320 * 86400) // past the seeded pulse's EndDate, so its status reads Completed
      const stored = await importPulse(ctx.db, 'owner', JSON.parse(JSON.stringify(first)), {projectId: newId.toUpperCase()}, ctx.clock.now())
      expect(stored).toMatchObject({project_id: newId, respondents: 12, questions: 20, status: 'Completed'})
      const second = await exportDocument(ctx.db, owner, newId)
      expect(second).toEqual({...first, Project: {...first.Project, ProjectId: newId}})
      // Byte for byte too, apart from the id.
      expect(await exportText(newId)).toBe((await exportText(ownerPulses[1]!)).replace(ownerPulses[1]!, newId))
    })

    it('keeps awkward text intact: quotes, backslashes, newlines, control characters, emoji', async () => {
      const doc = await exportDocument(ctx.db, owner, ownerPulses[0]!)
      const tricky = 'He said "no"\\ \n\t\u0001 — café 😀 \u2028 </script>'
      doc.Project.Title = tricky
      doc.Respondents[0]!.Profile[0]!.Value = tricky
      doc.Respondents[0]!.Answers[0]!.Values = [tricky, '']
      doc.Respondents[1]!.SermoId = null
      doc.Respondents[2]!.Profile = []
      doc.Respondents[2]!.Answers = []
      const id = '11111111-2222-4333-8444-555555555555'
      await importPulse(ctx.db, 'rival', doc, {projectId: id}, ctx.clock.now())
      const back = await exportDocument(ctx.db, {clientId: 'rival', admin: false}, id)
      expect(back).toEqual({...doc, Project: {...doc.Project, ProjectId: id}, ClientName: 'Rival Insights'})
    })

    it('rejects a bad file whole, naming the first bad path, and stores nothing', async () => {
      const doc = await exportDocument(ctx.db, owner, ownerPulses[0]!)
      const before = (await listPulses(ctx.db)).length
      const attempt = (mutate: (d: any) => void) => {
        const copy = structuredClone(doc) as any
        copy.Project.ProjectId = '22222222-3333-4444-8555-666666666666'
        mutate(copy)
        return importPulse(ctx.db, 'owner', copy, {}, ctx.clock.now())
      }
      await expect(attempt((d) => (d.Respondents[3].Answers[0].QuestionCode = 'Q99'))).rejects.toThrow(/^Respondents\[3\]\.Answers\[0\]\.QuestionCode: no question Q99/)
      await expect(attempt((d) => (d.Project.FieldingTime = '2 hours'))).rejects.toThrow(/^Project\.FieldingTime: must be hh:mm/)
      await expect(attempt((d) => (d.Respondents[5].SurveyStatus = 'Done'))).rejects.toThrow(/^Respondents\[5\]\.SurveyStatus/)
      await expect(attempt((d) => (d.Respondents[1].FirstInteraction = 'yesterday'))).rejects.toThrow(/^Respondents\[1\]\.FirstInteraction/)
      await expect(attempt((d) => (d.Project.Questions[4].QuestionCode = d.Project.Questions[3].QuestionCode))).rejects.toThrow(
        /^Project\.Questions\[4\]\.QuestionCode: duplicates/,
      )
      await expect(attempt((d) => (d.Project.Questions[2].ParentCode = 'ZZ'))).rejects.toThrow(/^Project\.Questions\[2\]\.ParentCode/)
      await expect(attempt((d) => (d.Project.Extra = 1))).rejects.toThrow(/Extra/)
      await expect(attempt((d) => (d.Project.ProjectId = ownerPulses[0]))).rejects.toThrow(/already exists/)
      await expect(attempt(() => {})).resolves.toMatchObject({respondents: 12})
      expect((await listPulses(ctx.db)).length).toBe(before + 1)
      await expect(importPulse(ctx.db, 'plain', doc, {projectId: '33333333-3333-4333-8333-333333333333'}, ctx.clock.now())).rejects.toThrow(/pulses grant/)
    })

    it('reads the status from the dates unless one is given', async () => {
      const doc = await exportDocument(ctx.db, owner, ownerPulses[0]!)
      const at = (id: string, start: string | null, end: string | null, status?: string) =>
        importPulse(ctx.db, 'owner', {...doc, Project: {...doc.Project, StartDate: start, EndDate: end}}, {projectId: id, status}, ctx.clock.now())
      expect((await at('a0000000-0000-4000-8000-000000000001', '2025-01-01T00:00:00Z', '2025-01-03T00:00:00Z')).status).toBe('Completed')
      expect((await at('a0000000-0000-4000-8000-000000000002', '2026-01-15T00:00:00+02:00', null)).status).toBe('Launched')
      expect((await at('a0000000-0000-4000-8000-000000000003', '2027-01-01T00:00:00Z', null)).status).toBe('Queued')
      expect((await at('a0000000-0000-4000-8000-000000000004', null, null)).status).toBe('Draft')
      expect((await at('a0000000-0000-4000-8000-000000000005', null, null, 'Held')).status).toBe('Held')
      const offset = await exportDocument(ctx.db, owner, 'a0000000-0000-4000-8000-000000000002')
      expect(offset.Project.StartDate).toBe('2026-01-14T22:00:00Z')
    })
  })
})
