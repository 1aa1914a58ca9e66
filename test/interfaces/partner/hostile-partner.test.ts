import {createServer, type Server} from 'node:http'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {paths} from '../../../src/interfaces/partner/outbox.js'
import {cliJson, partnerRegistration, tempDir} from '../../helpers/cli.js'
import {cliAsync} from './helpers.js'

/** Any ESC, BEL or other control character, raw, as a terminal would act on it. */
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/

describe('what goes out to partners', () => {
  it('refuses "." and ".." as ids (in any spelling a URL parser folds), with one Error line, queueing nothing', async () => {
    const db = ['--db', join(tempDir(), 'dots.db')]
    const partner = cliJson([...partnerRegistration(db, 'http://127.0.0.1:9'), '--partner-username', 'u', '--partner-password', 'p'])
    for (const bad of ['..', '.', '%2e%2E', '.%2e']) {
      const run = await cliAsync([
        'push-project',
        ...db,
        '--project-id',
        bad,
        '--name',
        'X',
        '--duration',
        '5',
        '--status',
        'active',
        '--type',
        'custom',
        '--partner',
        partner.client_id,
        '--json',
      ])
      expect(run.status, bad).toBe(1)
      expect(run.stderr).toMatch(/^Error: project_id: must not be "\." or "\.\."/)
      expect(run.stderr.trim().split('\n')).toHaveLength(1)
    }
    expect(cliJson(['list-deliveries', ...db])).toEqual([])
  })

  it('keeps every id inside its own path segment, whatever it contains', () => {
    const base = 'https://partner.example/api'
    for (const id of ['a/b', '../x', '?q=1', '#frag', '%2F', 'a\\b', ' x ', '...', '..a']) {
      const url = new URL(base + paths.quota(id, 'Q1'))
      const segments = url.pathname.split('/')
      // ['', 'api', 'v1', 'projects', <id>, 'quotas', 'Q1']
      expect(segments, id).toHaveLength(7)
      expect(decodeURIComponent(segments[4]!), id).toBe(id)
      expect(url.search + url.hash, id).toBe('')
    }
  })
})

describe('what a partner says reaches the operator escaped', () => {
  let server: Server
  let partnerUrl: string
  const hostile = '\u001b]0;pwned\u0007\u001b[2J\u001b[1;31mFAKE: all deliveries OK\u001b[0m\r\nreally'

  beforeAll(async () => {
    server = createServer((_req, res) => {
      res.writeHead(500, {'content-type': 'text/plain'})
      res.end(hostile)
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const address = server.address() as {port: number}
    partnerUrl = `http://127.0.0.1:${address.port}`
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  it('push-project --wait and list-deliveries print the answer with its control characters escaped', async () => {
    const db = ['--db', join(tempDir(), 'hostile.db')]
    const partner = cliJson([
      'register-client',
      ...db,
      '--name',
      'Hostile',
      '--url',
      'https://h.example',
      '--logo-url',
      'https://h.example/l.png',
      '--grant',
      'partner',
      '--partner-url',
      partnerUrl,
      '--partner-username',
      'u',
      '--partner-password',
      'p',
    ])
    const pushed = await cliAsync([
      'push-project',
      ...db,
      '--project-id',
      'P1',
      '--name',
      'X',
      '--duration',
      '5',
      '--status',
      'active',
      '--type',
      'custom',
      '--partner',
      partner.client_id,
      '--wait',
    ])
    expect(pushed.status).toBe(1)
    expect(pushed.stderr).toContain('FAKE: all deliveries OK')
    expect(pushed.stderr).toContain('\\u001b[2J')
    expect(pushed.stderr).not.toMatch(RAW_CONTROL)
    // The run's request id, then the one Error line: the partner's text started no line of its own.
    const [requestIdLine, ...errorLines] = pushed.stderr.trim().split('\n')
    expect(requestIdLine).toMatch(/^Request id: [0-9a-f-]{36} /)
    expect(errorLines).toHaveLength(1)

    const table = await cliAsync(['list-deliveries', ...db])
    expect(table.status).toBe(0)
    expect(table.stdout).toContain('\\u001b')
    expect(table.stdout).not.toMatch(RAW_CONTROL)
    // Stored escaped too, so any later tool reading the store gets the same safe text.
    const stored = JSON.parse((await cliAsync(['list-deliveries', ...db, '--json'])).stdout) as {last_error: string}[]
    expect(stored[0]!.last_error).not.toMatch(RAW_CONTROL)
  })
})
