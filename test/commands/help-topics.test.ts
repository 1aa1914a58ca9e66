import {describe, expect, it} from 'vitest'
import {COMMAND_LOADERS} from '../../commands/index.js'
import {COMMAND_TOPICS} from '../../commands/topics.js'
import {cli} from '../helpers/cli.js'

/** Commands that come from a plugin rather than COMMAND_LOADERS, listed in a topic all the same. */
const PLUGIN_COMMANDS = ['autocomplete']

/** The root help's sections: each heading with the command names listed under it. */
function sections(help: string): Map<string, string[]> {
  const found = new Map<string, string[]>()
  let current: string[] | undefined
  for (const line of help.split('\n')) {
    const heading = /^([A-Z][A-Z ]*?)(?::|$)/.exec(line)
    if (heading) {
      current = []
      found.set(heading[1]!, current)
      continue
    }
    const row = /^ {2}([a-z][a-z-]*)(?: {2,}|$)/.exec(line)
    if (row && current) current.push(row[1]!)
  }
  return found
}

describe('medpanel --help', () => {
  const every = [...Object.keys(COMMAND_LOADERS), ...PLUGIN_COMMANDS].sort()

  it('gives every command exactly one topic in commands/topics.ts, and names no command that does not exist', () => {
    const placed = COMMAND_TOPICS.flatMap((topic) => topic.commands)
    const missing = every.filter((id) => !placed.includes(id))
    expect(missing, 'commands in no topic: add each to one topic in commands/topics.ts').toEqual([])
    expect(
      placed.filter((id, i) => placed.indexOf(id) !== i),
      'commands in two topics',
    ).toEqual([])
    expect(
      placed.filter((id) => !every.includes(id)),
      'topics naming commands that do not exist',
    ).toEqual([])
  })

  it('lists every command, autocomplete included, under a topic heading and none under OTHER', () => {
    for (const args of [['--help'], ['help'], []]) {
      const result = cli(args)
      expect(result.status, result.stderr).toBe(0)
      const found = sections(result.stdout)
      expect(found.has('OTHER COMMANDS'), `commands in no topic: ${found.get('OTHER COMMANDS')}`).toBe(false)
      expect([...found.keys()]).toEqual(expect.arrayContaining(['USAGE', ...COMMAND_TOPICS.map((topic) => topic.name.toUpperCase())]))
      const listed = [...found.entries()].filter(([heading]) => heading !== 'USAGE' && heading !== 'VERSION').flatMap(([, ids]) => ids)
      expect(listed.sort()).toEqual(every)
    }
  })

  it('prints a command description once, with help COMMAND and with COMMAND --help', () => {
    for (const args of [
      ['help', 'serve'],
      ['serve', '--help'],
      ['help', 'update-member'],
      ['autocomplete', '--help'],
      ['help', 'autocomplete'],
    ]) {
      const result = cli(args)
      expect(result.status, result.stderr).toBe(0)
      // The first sentence of each description, whitespace-normalised since the help wraps it.
      const text = result.stdout.replace(/\s+/g, ' ')
      const first = {
        serve: 'Serve interfaces A (sign-on)',
        'update-member': "Change a member's password or active state.",
        autocomplete: 'Display autocomplete installation instructions.',
      }[args.find((a) => a !== 'help' && a !== '--help') as 'serve' | 'update-member' | 'autocomplete']
      expect(text.split(first).length - 1, `${args.join(' ')}:\n${result.stdout}`).toBe(1)
      expect(result.stdout).toContain('USAGE')
    }
  })

  // One test per topic, as gh lists a group: the topic's name, help and the name in capitals.
  for (const topic of COMMAND_TOPICS) {
    const upper = topic.name.toUpperCase()
    it(`lists the ${topic.name} topic's commands alone for ${topic.name}, help ${topic.name} and ${upper}`, () => {
      for (const args of [[topic.name], ['help', topic.name], [upper]]) {
        const result = cli(args)
        expect(result.status, `${args.join(' ')}: ${result.stderr}`).toBe(0)
        expect(result.stderr).toBe('')
        const found = sections(result.stdout)
        expect([...found.keys()].filter((heading) => heading !== 'USAGE')).toEqual([upper])
        expect(found.get(upper)).toEqual(topic.commands.filter((id) => every.includes(id)))
      }
    })
  }

  it('answers a stray argument to a command that takes none with one Error: line and exit 1', () => {
    for (const args of [
      ['list-clients', 'foo'],
      ['list-members', 'extra', '--json'],
      ['list-signing-keys', 'x'],
    ]) {
      const result = cli(args)
      expect(result.status, `${args.join(' ')}: ${result.stderr}`).toBe(1)
      expect(result.stderr).toMatch(new RegExp(`^Error: ${args[0]} takes no arguments \\(got "${args[1]}"\\); see medpanel ${args[0]} --help\\n$`))
      expect(result.stdout).toBe('')
    }
  })

  it('answers help for an unknown command with one Error: line', () => {
    const result = cli(['help', 'no-such-command'])
    expect(result.status).toBe(1)
    expect(result.stderr).toMatch(/^Error: "no-such-command" is not a medpanel command/)
  })
})
