import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {readInputJson, readInputObject, readInputText} from '../../commands/input-file.js'
import {cli, tempDir} from '../helpers/cli.js'

// Every command that reads a JSON input file refuses a bad one in the same words: one Error line
// naming the flag, the file and what is wrong (commands/input-file.ts).

describe('input files named by a flag', () => {
  const dir = tempDir('medpanel-input-')
  const missing = join(dir, 'missing.json')
  const broken = join(dir, 'broken.json')
  const list = join(dir, 'list.json')
  writeFileSync(broken, '{"project_id": ')
  writeFileSync(list, '[1, 2]')

  it('says which flag, which file and what is wrong', async () => {
    await expect(readInputText('file', missing)).rejects.toThrow(`--file: ${missing} cannot be read (ENOENT)`)
    await expect(readInputJson('file', broken)).rejects.toThrow(new RegExp(`^--file: ${broken} is not valid JSON \\(.+\\)$`))
    await expect(readInputObject('details', list)).rejects.toThrow(`--details: ${list} must hold a JSON object`)
    expect(await readInputJson('file', list)).toEqual([1, 2])
    writeFileSync(join(dir, 'ok.json'), '{"first_name": "Dana"}')
    expect(await readInputObject('details', join(dir, 'ok.json'))).toEqual({first_name: 'Dana'})
  })

  it('every command that reads a JSON file refuses a broken one with the same one line', () => {
    const store = ['--db', join(dir, 'store.db')]
    const runs: [string, string[]][] = [
      ['import-posts', ['--file', broken]],
      ['import-pulse', ['--client', 'someone', '--file', broken]],
      ['push-project', ['--file', broken]],
      ['push-quota', ['--project-id', 'P-1', '--file', broken]],
      ['push-members', ['--project-id', 'P-1', '--quota-id', 'Q-1', '--file', broken]],
    ]
    for (const [command, args] of runs) {
      const result = cli([command, ...args, ...store])
      expect(result.status, command).toBe(1)
      expect(result.stderr, command).toMatch(new RegExp(`^Error: --file: ${broken} is not valid JSON \\([^\\n]+\\)\\n$`))
    }
    // A member list in CSV is refused in the same words.
    const csv = join(dir, 'members.csv')
    writeFileSync(csv, 'npi,fee\n1234567893,5\n')
    const result = cli(['push-members', '--project-id', 'P-1', '--quota-id', 'Q-1', '--file', csv, ...store])
    expect(result.stderr).toBe(`Error: --file: ${csv} has an unexpected CSV column "fee" (expected npi, honoraria, url)\n`)
  })
})
