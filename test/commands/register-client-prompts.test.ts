import {execFileSync, spawnSync} from 'node:child_process'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {cli, cliArgv, cliJson, tempDir} from '../helpers/cli.js'

// CI installs tmux (.ci/run), so there the test must run, never skip.
const hasTmux = spawnSync('tmux', ['-V'], {stdio: 'ignore'}).status === 0 || process.env.CI === 'true'
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('register-client asks for what it needs', () => {
  it('names every missing value at once without a terminal, the redirect URI of a sign-on client included', () => {
    const db = join(tempDir(), 'missing.db')
    const signon = cli(['register-client', '--db', db])
    expect(signon.status).toBe(1)
    expect(signon.stderr.trim()).toBe('Error: missing required flags --name, --url, --logo-url, --redirect-uri (a terminal would be asked for them)')
    const balance = cli(['register-client', '--db', db, '--grant', 'balance'])
    expect(balance.stderr.trim()).toBe('Error: missing required flags --name, --url, --logo-url (a terminal would be asked for them)')
    expect(cli(['register-client', '--help']).stdout).toMatch(/\[default: signon\]/)
  })
})

describe.skipIf(!hasTmux)('register-client at a terminal', () => {
  const socket = `medpanel-register-${process.pid}`
  const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], {encoding: 'utf8'})
  afterAll(() => {
    spawnSync('tmux', ['-L', socket, 'kill-server'], {stdio: 'ignore'})
  })
  const screen = () => tmux('capture-pane', '-p', '-J', '-t', 'r')
  const waitFor = async (text: string | RegExp) => {
    let shown = ''
    for (let i = 0; i < 150; i++) {
      shown = screen()
      if (typeof text === 'string' ? shown.includes(text) : text.test(shown)) return shown
      await sleep(100)
    }
    throw new Error(`the terminal never showed ${text}:\n${shown}`)
  }
  const type = (text: string) => {
    tmux('send-keys', '-t', 'r', '-l', text)
    tmux('send-keys', '-t', 'r', 'Enter')
  }
  const erase = (count: number) => tmux('send-keys', '-t', 'r', ...Array(count).fill('BSpace'))

  it('checks each answer as it is given, keeping the ones before it', async () => {
    const db = join(tempDir(), 'prompted.db')
    const command = cliArgv(['register-client', '--db', db])
      .map((a) => `'${a}'`)
      .join(' ')
    tmux('new-session', '-d', '-s', 'r', '-x', '160', '-y', '40', `${command}; echo EXIT=$?; sleep 60`)
    await waitFor('Company name')
    type('Prompted Co')
    await waitFor('Company URL')
    type('notaurl')
    // Refused there and then, before the logo is asked for.
    expect(await waitFor('must be an http(s) URL')).not.toContain('Logo URL')
    erase('notaurl'.length)
    type('https://prompted.example')
    await waitFor('Logo URL')
    type('https://prompted.example/logo.png')
    await waitFor('Redirect URI')
    type('http://elsewhere.example/cb')
    expect(await waitFor('must use https')).not.toMatch(/EXIT=/)
    erase('http://elsewhere.example/cb'.length)
    type('https://prompted.example/cb')
    expect(await waitFor(/EXIT=\d+/)).toMatch(/EXIT=0/)
    const [client] = cliJson<{name: string; url: string; redirect_uris: string[]}[]>(['list-clients', '--db', db])
    expect(client).toMatchObject({name: 'Prompted Co', url: 'https://prompted.example', redirect_uris: ['https://prompted.example/cb']})
  })
})
