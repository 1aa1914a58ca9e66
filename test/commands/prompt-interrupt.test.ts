import {execFileSync, spawnSync} from 'node:child_process'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {cliArgv, tempDir} from '../helpers/cli.js'

// CI installs tmux (.ci/run), so there the test must run, never skip.
const hasTmux = spawnSync('tmux', ['-V'], {stdio: 'ignore'}).status === 0 || process.env.CI === 'true'
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe.skipIf(!hasTmux)('Ctrl-C at a prompt', () => {
  const socket = `medpanel-interrupt-${process.pid}`
  const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], {encoding: 'utf8'})
  afterAll(() => {
    spawnSync('tmux', ['-L', socket, 'kill-server'], {stdio: 'ignore'})
  })

  it('exits 130 quietly, without an Error line', async () => {
    const command = cliArgv([
      'add-member',
      '--db',
      join(tempDir(), 'ctrl-c.db'),
      '--email',
      'c@clinic.example',
      '--first-name',
      'C',
      '--last-name',
      'D',
      '--country',
      'US',
      '--specialty',
      'Oncology',
    ])
      .map((a) => `'${a}'`)
      .join(' ')
    tmux('new-session', '-d', '-s', 'c', '-x', '120', '-y', '30', `${command}; echo EXIT=$?; sleep 60`)
    let screen = ''
    for (let i = 0; i < 100 && !screen.includes('Password'); i++) {
      await sleep(100)
      screen = tmux('capture-pane', '-p', '-J', '-t', 'c')
    }
    expect(screen).toContain('Password')
    tmux('send-keys', '-t', 'c', 'C-c')
    for (let i = 0; i < 100 && !/EXIT=\d+/.test(screen); i++) {
      await sleep(100)
      screen = tmux('capture-pane', '-p', '-J', '-t', 'c')
    }
    expect(screen).toMatch(/EXIT=130/)
    expect(screen).not.toMatch(/Error|force closed/)
  })
})
