import {join} from 'node:path'
import stringWidth from 'string-width'
import {describe, expect, it} from 'vitest'
import {isEmailAddress, normalEmail} from '../../src/lib/email.js'
import {formatTable} from '../../src/lib/table.js'
import {cli, cliJson, tempDir} from '../helpers/cli.js'
import {makeStoreFile} from '../helpers/store.js'

// What the CLI says when an operator's value is wrong, or unusual but right.

const member = (db: string[], email: string, names: [string, string] = ['Jo', 'Park']) => [
  'add-member',
  ...db,
  '--email',
  email,
  '--password',
  'long-enough-1',
  '--first-name',
  names[0],
  '--last-name',
  names[1],
  '--country',
  'US',
  '--specialty',
  'Cardiology',
]

describe('messages and values', {timeout: 0}, () => {
  it('a token lifetime too large says the largest, not that it is not whole', async () => {
    const file = join(tempDir(), 'ttl.db')
    await makeStoreFile(file)
    const run = cli([
      'register-client',
      '--db',
      file,
      '--name',
      'A',
      '--url',
      'https://a.example',
      '--logo-url',
      'https://a.example/l.png',
      '--grant',
      'balance',
      '--token-ttl',
      '99999999999999999999',
    ])
    expect([run.status, run.stderr]).toEqual([1, 'Error: token_ttl: must be at most 315360000 seconds (ten years)\n'])
  })

  it('serve on an address this machine does not have says so in one line', () => {
    // 10.255.255.1 is a private address no test machine is expected to hold.
    const run = cli(['serve', '--db', join(tempDir(), 's.db'), '--host', '10.255.255.1', '--base-url', 'https://panel.example', '--port', '0'])
    expect(run.status).toBe(1)
    expect(run.stderr).toBe(
      'Error: cannot listen on 10.255.255.1: no network interface of this machine has that address; give one it has with --host (127.0.0.1, or 0.0.0.0 for all)\n',
    )
  })

  it('accepts internationalised e-mail addresses, finds them however they are typed, and still refuses non-addresses', async () => {
    for (const good of ['josé@clínica.example', 'jo@clinic.example', '用户@例子.广告', 'o.brien+panel@xn--clnica-4va.example']) expect(isEmailAddress(good), good).toBe(true)
    for (const bad of ['a@b', 'a b@c.example', 'a@b..c', '@c.example', 'jo@', 'jo@-bad-.example', 'no-at.example', 'jo@10.0.0.1', 'jo@clinic.example.'])
      expect(isEmailAddress(bad), bad).toBe(false)
    // The same letter typed precomposed or with a combining accent is one address.
    expect(normalEmail(' JOSE\u0301@Clínica.example ')).toBe(normalEmail('josé@clínica.example'))

    const file = join(tempDir(), 'idn.db')
    const db = ['--db', file]
    const added = cliJson(member(db, 'José@Clínica.example'))
    expect(added.email).toBe('josé@clínica.example')
    const again = cli(member(db, 'jose\u0301@clínica.example'))
    expect(again.stderr).toMatch(/email: a member with email josé@clínica\.example already exists/)
    const refused = cli(member(db, 'a@b'))
    expect([refused.status, refused.stderr]).toEqual([1, 'Error: email: must be an e-mail address\n'])
  })

  it('aligns tables by display width, CJK names included', async () => {
    const file = join(tempDir(), 'cjk.db')
    const db = ['--db', file]
    cliJson(member(db, 'yuki@clinic.example', ['美由紀', '山田']))
    cliJson(member(db, 'jo@clinic.example'))
    const lines = cli(['list-members', ...db])
      .stdout.trimEnd()
      .split('\n')
    // Every column starts at the same terminal column on every line: "country" lines up.
    const columnOf = (line: string, text: string) => stringWidth(line.slice(0, line.indexOf(text)))
    expect(columnOf(lines[2]!, 'US')).toBe(columnOf(lines[0]!, 'country'))
    expect(columnOf(lines[3]!, 'US')).toBe(columnOf(lines[0]!, 'country'))
    expect(
      formatTable(
        [{n: '山田'}, {n: 'ab'}],
        [
          {header: 'n', get: (r) => r.n},
          {header: 'x', get: () => 1},
        ],
      )
        .split('\n')
        .map((l) => stringWidth(l)),
    ).toEqual([7, 7, 7, 7])
  })
})
