import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {cli, cliJson, startCli, tempDir} from '../../helpers/cli.js'

describe('pulse commands and the served export, end to end', () => {
  describe('seeds, serves, exports with a client_credentials token, re-imports and lists', () => {
    // One store and one pulses client; the tests run in order on what the ones before made.
    const dir = tempDir()
    const db = ['--db', join(dir, 'm.db')]
    const file = join(dir, 'export.json')
    const copyId = '0d6f1d7e-2b7a-4c61-9d0e-3f4a5b6c7d8e'
    let client: {client_id: string; client_secret: string}
    let seeded: {created: {project_id: string; status: string; respondents: number}[]; skipped: string[]}
    let exported: string

    beforeAll(() => {
      client = cliJson<{client_id: string; client_secret: string}>([
        'register-client',
        '--name',
        'Acme Pulses',
        '--url',
        'https://acme.example',
        '--logo-url',
        'https://acme.example/l.png',
        '--grant',
        'pulses',
        ...db,
      ])
    })

    it('seed-pulses seeds a pulse in each status, and the same --seed again skips them all', () => {
      seeded = cliJson(['seed-pulses', '--client', client.client_id, '--count', '3', '--respondents', '25', '--seed', '5', ...db])
      expect(seeded.created.map((p) => [p.status, p.respondents])).toEqual([
        ['Launched', 25],
        ['Completed', 25],
        ['Held', 25],
      ])
      const again = cliJson<{created: unknown[]; skipped: string[]}>(['seed-pulses', '--client', client.client_id, '--count', '3', '--seed', '5', ...db])
      expect(again).toEqual({created: [], skipped: seeded.created.map((p) => p.project_id), interrupted: false})
    })

    it('serve exports a seeded pulse with a client_credentials token, and asks for a Bearer token without one', async () => {
      const server = await startCli(['serve', '--port', '0', '--no-worker', ...db])
      try {
        const tokenRes = await fetch(`${server.url}/oauth/token`, {
          method: 'POST',
          headers: {'content-type': 'application/x-www-form-urlencoded'},
          body: new URLSearchParams({grant_type: 'client_credentials', client_id: client.client_id, client_secret: client.client_secret}),
        })
        const {access_token: token} = (await tokenRes.json()) as {access_token: string}
        const res = await fetch(`${server.url}/projects/${seeded.created[1]!.project_id}/export`, {headers: {Authorization: `Bearer ${token}`}})
        expect(res.status).toBe(200)
        exported = await res.text()
        expect(JSON.parse(exported).Respondents).toHaveLength(25)
        const denied = await fetch(`${server.url}/clients/info`)
        expect(denied.status).toBe(401)
        expect(denied.headers.get('www-authenticate')).toMatch(/^Bearer /)
      } finally {
        await server.stop()
      }
    })

    it('import-pulse loads the export under another id, and list-pulses lists it after the seeded ones', () => {
      writeFileSync(file, exported)
      const imported = cliJson(['import-pulse', '--client', client.client_id, '--file', file, '--project-id', copyId, ...db])
      expect(imported).toMatchObject({project_id: copyId, respondents: 25, questions: 20})
      const listed = cliJson<{project_id: string; respondents: number}[]>(['list-pulses', '--client', client.client_id, ...db])
      expect(listed.map((p) => p.project_id)).toEqual([...seeded.created.map((p) => p.project_id), copyId])
    })

    it('import-pulse refuses an export with a bad answer in one Error line naming where it is', () => {
      const doc = JSON.parse(exported)
      doc.Respondents[2].Answers[0].Values = 'not a list'
      writeFileSync(file, JSON.stringify(doc))
      const bad = cli(['import-pulse', '--client', client.client_id, '--file', file, '--project-id', '9d6f1d7e-2b7a-4c61-9d0e-3f4a5b6c7d8e', ...db])
      expect(bad.status).toBe(1)
      expect(bad.stderr.trim()).toMatch(/^Error: Respondents\[2\]\.Answers\[0\]\.Values: /)
      expect(bad.stderr.trim().split('\n')).toHaveLength(1)
    })
  })

  it('adds seeded pulses to the demo data set with a ready curl line', () => {
    const dir = tempDir()
    const demo = cliJson<{parts: {pulses: {pulses: {status: string; respondents: number}[]}}; part_lines: {pulses: string[]}}>(['demo', '--db', join(dir, 'm.db')])
    expect(demo.parts.pulses.pulses).toHaveLength(7)
    expect(demo.parts.pulses.pulses.filter((p) => p.respondents > 0)).toHaveLength(3)
    expect(demo.part_lines.pulses.join('\n')).toMatch(/grant_type=client_credentials[\s\S]*\/projects\/[0-9a-f-]{36}\/export/)
  })
})
