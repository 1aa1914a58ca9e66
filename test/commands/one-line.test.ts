import {describe, expect, it} from 'vitest'
import {oneLine} from '../../commands/base-command.js'

describe('CLI errors are one line that keeps the facts', () => {
  it("folds oclif's missing-argument list and drops the help hint and notes", () => {
    const message =
      'Missing 2 required args:\nkey  (user_id|npi|me) how ID identifies the person\nid   user_id, NPI or AMA ME number\nNote: --property allows multiple values.\nAlternatively, use "--".\nSee more help with --help'
    expect(oneLine(message)).toBe('Missing 2 required args: key ((user_id|npi|me) how ID identifies the person), id (user_id, NPI or AMA ME number)')
  })
  it('keeps the reason of a flag parse error', () => {
    expect(oneLine('Parsing --chunk \n\tExpected an integer greater than or equal to 1 but received: 0\nSee more help with --help')).toBe(
      'Parsing --chunk: Expected an integer greater than or equal to 1 but received: 0',
    )
  })
  it('passes ordinary messages through', () => {
    expect(oneLine('no client with id "nope"')).toBe('no client with id "nope"')
    expect(oneLine('The following error occurred:\n  Missing required flag amount')).toBe('Missing required flag amount')
  })
})
