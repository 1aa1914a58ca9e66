import {execFileSync, spawnSync} from 'node:child_process'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {npiFromBase} from '../../../src/lib/npi.js'
import {cliArgv, cliJson, tempDir} from '../../helpers/cli.js'

// cli-progress draws only on a terminal, so the bar needs a real one: tmux provides it.
// CI installs tmux (.ci/run), so there the test must run, never skip.
const hasTmux = spawnSync('tmux', ['-V'], {stdio: 'ignore'}).status === 0 || process.env.CI === 'true'
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe.skipIf(!hasTmux)('push-members on a terminal', () => {
  const dir = tempDir('medpanel-progress-')
  const store = ['--db', join(dir, 'm.db')]
  const socket = `medpanel-progress-${process.pid}`
  const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], {encoding: 'utf8'})
  const csv = join(dir, 'members.csv')

  /** Runs the command in a fresh tmux window and returns the screen once it has exited. */
  async function onTerminal(name: string, args: string[]): Promise<string> {
    const command = cliArgv(args)
      .map((a) => `'${a}'`)
      .join(' ')
    tmux('new-session', '-d', '-s', name, '-x', '160', '-y', '50', `${command}; echo EXIT=$?; sleep 60`)
    for (let i = 0; i < 150; i++) {
      const screen = tmux('capture-pane', '-p', '-J', '-t', name)
      if (/EXIT=\d/.test(screen)) return screen
      await sleep(100)
    }
    throw new Error(`push-members did not finish: ${tmux('capture-pane', '-p', '-J', '-t', name)}`)
  }

  beforeAll(() => {
    const rows = Array.from({length: 1200}, (_, i) => {
      const npi = npiFromBase(String(300000000 + i))
      return `${npi},25.00,https://survey.example/s?npi=${npi}`
    })
    writeFileSync(csv, ['npi,honoraria,url', ...rows].join('\n'))
    cliJson(['push-project', ...store, '--project-id', 'P1', '--name', 'Bar', '--duration', '5', '--status', 'active', '--type', 'custom'])
    writeFileSync(join(dir, 'q.json'), JSON.stringify({quota_id: 'Q1', status: 'open', limit: 5, incidence_rate: 0.5, closes_at: '2026-12-31T00:00:00Z'}))
    cliJson(['push-quota', ...store, '--project-id', 'P1', '--file', join(dir, 'q.json')])
  })
  afterAll(() => {
    spawnSync('tmux', ['-L', socket, 'kill-server'], {stdio: 'ignore'})
  })

  it('draws a progress bar for people and nothing but the JSON document under --json', async () => {
    const human = await onTerminal('human', ['push-members', ...store, '--project-id', 'P1', '--quota-id', 'Q1', '--file', csv])
    expect(human).toMatch(/storing members\s+\[[█░]+\] 1200\/1200/)
    expect(human).toContain('Stored 1200 members (list now 1200) as 2 requests.')
    expect(human).toContain('EXIT=0')

    const json = await onTerminal('json', ['push-members', ...store, '--project-id', 'P1', '--quota-id', 'Q1', '--file', csv, '--json'])
    expect(json).toContain('EXIT=0')
    expect(json).not.toMatch(/storing members|█/)
    const document = json.slice(0, json.indexOf('EXIT=')).trim()
    expect(JSON.parse(document)).toMatchObject({mode: 'replace', members: 1200, requests: 2})
  })
})
