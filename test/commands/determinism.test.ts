import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {prepareExport} from '../../src/interfaces/pulse/service.js'
import {cli, cliJson, memberRegistration, tempDir} from '../helpers/cli.js'
import {openCliStore} from '../helpers/store.js'

/*
 * A tester scripting the same scenario twice gets the same data: with the client's id pinned
 * (register-client --client-id), the clock held (MEDPANEL_NOW) and the same --seed, two fresh
 * stores end up holding the same rows, and every --json output and every export is the same,
 * byte for byte. The one thing that differs is the client secret, which is random on purpose.
 */
describe('the same commands with the same seed on a fresh store', () => {
  describe('give the same data, byte for byte, in --json output and in exports', () => {
    const env = {MEDPANEL_NOW: '2026-03-01T09:00:00Z'}
    const scenario = async () => {
      const db = ['--db', join(tempDir(), 'seeded.db')]
      const outputs: string[] = []
      const run = (args: string[]) => {
        const result = cli([...args, ...db, '--json'], env)
        expect(result.status, `${args.join(' ')}: ${result.stderr}`).toBe(0)
        return result.stdout
      }
      const client = JSON.parse(
        run([
          'register-client',
          '--client-id',
          'acme-research',
          '--name',
          'Acme',
          '--url',
          'https://acme.example',
          '--logo-url',
          'https://acme.example/l.png',
          '--grant',
          'pulses,conversations',
        ]),
      )
      expect(client.client_id).toBe('acme-research')
      delete client.client_secret
      outputs.push(JSON.stringify(client))
      outputs.push(run(memberRegistration([], {password: 'a long enough password'})))
      outputs.push(run(['seed-pulses', '--client', 'acme-research', '--count', '3', '--respondents', '20', '--seed', '7']))
      outputs.push(run(['seed-posts', '--count', '30', '--comments', '2', '--from', '2025-01-01T00:00:00Z', '--to', '2025-12-31T23:59:59Z', '--seed', '3']))
      outputs.push(run(['list-pulses']))
      outputs.push(run(['list-members']))
      const store = await openCliStore(db[1]!)
      try {
        for (const pulse of JSON.parse(outputs[4]!) as {project_id: string}[]) {
          const prepared = await prepareExport(store.db, {clientId: 'acme-research', admin: false}, pulse.project_id)
          const parts: Uint8Array[] = []
          for await (const chunk of prepared.chunks()) parts.push(chunk)
          outputs.push(Buffer.concat(parts).toString('utf8'))
        }
      } finally {
        await store.close()
      }
      return outputs
    }
    let first: string[]

    it('the scenario runs on a fresh store: a pinned client id, a member, seeded pulses and posts, lists and exports', async () => {
      first = await scenario()
      expect(first.length).toBeGreaterThan(8)
    })

    it('the same scenario on a second fresh store gives every output and export again, byte for byte', async () => {
      const second = await scenario()
      expect(second).toEqual(first)
    })
  })

  it('refuses a --client-id that is taken or malformed, in one line', () => {
    const db = ['--db', join(tempDir(), 'ids.db')]
    const base = ['register-client', ...db, '--name', 'Acme', '--url', 'https://acme.example', '--logo-url', 'https://acme.example/l.png', '--grant', 'pulses']
    cliJson([...base, '--client-id', 'acme-research'])
    const taken = cli([...base, '--client-id', 'acme-research'])
    expect(taken.status).toBe(1)
    expect(taken.stderr).toBe('Error: client_id: "acme-research" is already registered\n')
    const malformed = cli([...base, '--client-id', 'a b'])
    expect(malformed.status).toBe(1)
    expect(malformed.stderr).toMatch(/^Error: client_id: must be 3 to 64 letters/)
  })
})
