import {describe, expect, it} from 'vitest'
import {cli} from '../helpers/cli.js'

describe('the conventions people expect from a CLI', () => {
  it('an unknown command is one Error line with the nearest names, exit 1', () => {
    for (const [typed, near] of [
      ['srve', 'serve'],
      ['list-client', 'list-clients'],
      ['withdrw', 'withdraw'],
    ] as const) {
      const result = cli([typed])
      expect(result.status, typed).toBe(1)
      expect(result.stdout).toBe('')
      expect(result.stderr).toMatch(new RegExp(`^Error: "${typed}" is not a medpanel command \\(did you mean [^)]*\\b${near}\\b[^)]*\\?\\); see medpanel --help\\n$`))
    }
    const far = cli(['zzzzzzzz'])
    expect(far.status).toBe(1)
    expect(far.stderr).toBe('Error: "zzzzzzzz" is not a medpanel command; see medpanel --help\n')
  })

  it('help, -h, version and -v work; help COMMAND shows that command; --version --json is JSON', () => {
    for (const args of [['help'], ['-h'], ['--help']]) {
      const result = cli(args)
      expect(result.status, args.join(' ')).toBe(0)
      expect(result.stdout).toContain('register-client')
    }
    const helpServe = cli(['help', 'serve'])
    expect(helpServe.status).toBe(0)
    expect(helpServe.stdout).toMatch(/USAGE\s+\$ medpanel serve/)
    for (const args of [['version'], ['-v'], ['--version']]) {
      const result = cli(args)
      expect(result.status, args.join(' ')).toBe(0)
      expect(result.stdout).toMatch(/^medpanel\/\d+\.\d+\.\d+ /)
    }
    const json = cli(['--version', '--json'])
    expect(json.status).toBe(0)
    expect(JSON.parse(json.stdout)).toMatchObject({name: 'medpanel', version: expect.stringMatching(/^\d+\.\d+\.\d+$/)})
  })
})

describe('required flags', () => {
  it('without a terminal, a run missing several names them all at once; --help marks them and shows a runnable example', () => {
    const result = cli(['add-member', '--db', '/tmp/never-written.db', '--email', 'x@clinic.example', '--json'])
    expect(result.status).toBe(1)
    expect(result.stderr).toBe('Error: missing required flags --password, --first-name, --last-name, --country, --specialty (a terminal would be asked for them)\n')
    const help = cli(['add-member', '--help']).stdout
    expect(help).toMatch(/--first-name=<value>\s+first name \[required; asked for at a\s+terminal\]/)
    expect(help).toMatch(/EXAMPLES?\s+\$ medpanel add-member/)
    expect(cli(['push-project', '--help']).stdout).toMatch(/--status=<value>\s+project status \(onhold, active, closed; any case\)/)
  })
})
