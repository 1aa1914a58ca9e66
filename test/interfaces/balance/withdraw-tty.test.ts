import {execFileSync, spawnSync} from 'node:child_process'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cliArgv, cliJson, tempDir} from '../../helpers/cli.js'

// A real terminal for `withdraw`'s prompts: tmux gives the command a TTY we can type into.
// CI installs tmux (.ci/run), so there the test must run, never skip.
const hasTmux = spawnSync('tmux', ['-V'], {stdio: 'ignore'}).status === 0 || process.env.CI === 'true'
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe.skipIf(!hasTmux)('withdraw on a terminal', () => {
  const dir = tempDir('medpanel-tty-')
  const store = ['--db', join(dir, 'tty.db')]
  const socket = `medpanel-test-${process.pid}`
  const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], {encoding: 'utf8'})
  const screen = () => tmux('capture-pane', '-p', '-J', '-t', 'w')
  /** Waits until the screen shows `text` (prompts render asynchronously). */
  const waitFor = async (text: string | RegExp) => {
    for (let i = 0; i < 100; i++) {
      const s = screen()
      if (typeof text === 'string' ? s.includes(text) : text.test(s)) return s
      await sleep(100)
    }
    throw new Error(`never saw ${String(text)} on the screen:\n${screen()}`)
  }

  beforeAll(() => {
    cliJson([
      'add-member',
      '--email',
      't@example.com',
      '--password',
      'long enough pw',
      '--first-name',
      'Ty',
      '--last-name',
      'Ro',
      '--country',
      'US',
      '--specialty',
      'Oncology',
      ...store,
    ])
    cliJson(['credit', 'user_id', '1', '--amount', '100', '--type', 'HONORARIUM', ...store])
  })
  afterAll(() => {
    spawnSync('tmux', ['-L', socket, 'kill-server'], {stdio: 'ignore'})
  })

  it("asks for the type, amount and the type's required fields, with selects for country and region", async () => {
    const command = cliArgv(['withdraw', 'user_id', '1', ...store])
      .map((a) => `'${a}'`)
      .join(' ')
    tmux('new-session', '-d', '-s', 'w', '-x', '160', '-y', '50', `${command}; echo EXIT=$?; sleep 60`)
    await waitFor('Available funds: 100.00 USD')
    await waitFor('Withdrawal type')
    tmux('send-keys', '-t', 'w', 'Down', 'Enter') // PAYPAL is first, CHECK second
    await waitFor('? Amount')
    // Checked at the prompt as the service checks it (exact decimals; fee included), before
    // any detail field is asked for.
    tmux('send-keys', '-t', 'w', '25.005', 'Enter')
    await waitFor('amount: USD amounts have at most 2 decimal places')
    tmux('send-keys', '-t', 'w', 'BSpace', 'BSpace', 'BSpace', 'BSpace', 'BSpace', 'BSpace')
    tmux('send-keys', '-t', 'w', '99', 'Enter')
    await waitFor('insufficient funds: amount 99 plus the CHECK fee of 2.5 exceeds available funds of 100 USD')
    tmux('send-keys', '-t', 'w', 'BSpace', 'BSpace')
    tmux('send-keys', '-t', 'w', '30', 'Enter')
    for (const [label, value] of [
      ['First name', 'Ann'],
      ['Last name', 'Lee'],
      ['Street and number', '1 Main St'],
      ['City', 'Springfield'],
      ['Postal code', '62701'],
    ] as const) {
      await waitFor(`? ${label}`)
      tmux('send-keys', '-t', 'w', '-l', value)
      tmux('send-keys', '-t', 'w', 'Enter')
    }
    await waitFor('? Country')
    tmux('send-keys', '-t', 'w', 'Enter') // the select starts on United States
    await waitFor('? Region')
    tmux('send-keys', '-t', 'w', '-l', 'Illi') // type-ahead in the select
    await waitFor('❯ Illinois (US-IL)')
    tmux('send-keys', '-t', 'w', 'Enter')
    const done = await waitFor(/EXIT=\d/)
    expect(done).toContain('✔ Country United States (US)')
    expect(done).toContain('✔ Region Illinois (US-IL)')
    expect(done).toMatch(/amount\s+-30\.00 USD/)
    expect(done).toMatch(/fee\n[\s\S]*amount\s+-2\.50 USD/)
    expect(done).toMatch(/available funds now\s+67\.50 USD/)
    expect(done).toContain('EXIT=0')

    const list = cliJson<Array<{type: string; amount: number; status: string}>>(['list-transactions', 'user_id', '1', ...store])
    expect(list.slice(1).map((t) => [t.type, t.amount, t.status])).toEqual([
      ['WITHDRAWAL', -30, 'Processing'],
      ['WITHDRAWAL_FEE', -2.5, 'Processing'],
    ])
    expect(cliJson(['show-balance', 'user_id', '1', ...store]).available_funds).toBe(67.5)
  })
})
