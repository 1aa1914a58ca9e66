import {execFileSync, spawnSync} from 'node:child_process'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cli, cliArgv, cliJson, tempDir} from '../helpers/cli.js'
import {makeStoreFile} from '../helpers/store.js'

// CI installs tmux (.ci/run), so there the test must run, never skip.
const hasTmux = spawnSync('tmux', ['-V'], {stdio: 'ignore'}).status === 0 || process.env.CI === 'true'
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('progress of seed-posts and seed-pulses', () => {
  const dir = tempDir('medpanel-seed-progress-')
  const db = ['--db', join(dir, 's.db')]
  beforeAll(() => makeStoreFile(join(dir, 's.db')))
  const socket = `medpanel-seed-${process.pid}`
  afterAll(() => {
    spawnSync('tmux', ['-L', socket, 'kill-server'], {stdio: 'ignore'})
  })

  it('prints plain progress lines on stderr without a terminal, and nothing but the document on stdout', () => {
    const posts = cli(['seed-posts', ...db, '--count', '300', '--comments', '1', '--json'])
    expect(posts.status).toBe(0)
    expect(JSON.parse(posts.stdout)).toMatchObject({posts: 300})
    expect(posts.stderr).toMatch(/^seeding posts: \d+\/300\n/)
    expect(posts.stderr.trim().split('\n').at(-1)).toBe('seeding posts: 300/300')
    const client = cliJson<{client_id: string}>([
      'register-client',
      ...db,
      '--name',
      'P',
      '--url',
      'https://p.example',
      '--logo-url',
      'https://p.example/l.png',
      '--grant',
      'pulses',
    ])
    const pulses = cli(['seed-pulses', ...db, '--client', client.client_id, '--count', '3', '--respondents', '5', '--json'])
    expect(pulses.status).toBe(0)
    expect(pulses.stderr.trim().split('\n').at(-1)).toBe('seeding pulses: 3/3')
  })

  it.skipIf(!hasTmux)('draws a bar on a terminal', async () => {
    const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], {encoding: 'utf8'})
    const command = cliArgv(['seed-posts', ...db, '--count', '2000', '--comments', '1', '--seed', '3'])
      .map((a) => `'${a}'`)
      .join(' ')
    tmux('new-session', '-d', '-s', 's', '-x', '160', '-y', '50', `${command}; echo EXIT=$?; sleep 60`)
    let screen = ''
    for (let i = 0; i < 300 && !/EXIT=\d/.test(screen); i++) {
      await sleep(100)
      screen = tmux('capture-pane', '-p', '-J', '-t', 's')
    }
    expect(screen).toMatch(/seeding posts \[[█░]+\] 2000\/2000/)
    expect(screen).toMatch(/EXIT=0/)
  })
})
