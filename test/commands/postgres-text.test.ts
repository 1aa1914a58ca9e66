import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {cli, cliJson, tempDir} from '../helpers/cli.js'
import {onPostgres} from '../helpers/store.js'

// PostgreSQL cannot keep U+0000 in text (SQLite can): such input is the caller's to fix, so it is
// refused in one line, and nothing is stored.
describe.skipIf(!onPostgres)('text PostgreSQL cannot store', () => {
  it('import-pulse with a NUL in a value: one Error line, exit 1, nothing imported', () => {
    const dir = tempDir()
    const store = ['--db', join(dir, 'm.db')]
    const client = cliJson<{client_id: string}>([
      'register-client',
      ...store,
      '--name',
      'Owner',
      '--url',
      'https://owner.example',
      '--logo-url',
      'https://owner.example/l.png',
      '--grant',
      'pulses',
    ])
    const file = join(dir, 'pulse.json')
    const respondent = {
      RespondentId: 'aaaaaaaa-2222-4333-8444-555555555555',
      SermoId: 5,
      SurveyStatus: 'Completed',
      Profile: [{Key: 'Specialty', Value: 'Onco\u0000logy'}],
      Answers: [],
      FirstInteraction: '2026-01-01T00:00:00Z',
      LastInteraction: '2026-01-01T00:00:00Z',
    }
    const project = {
      ProjectId: '11111111-2222-4333-8444-555555555555',
      Title: 'T',
      InternalTitle: 'I',
      Identifier: null,
      StartDate: null,
      EndDate: null,
      FieldingTime: '00:05',
      ExternalIntroduction: 'E',
      Questions: [],
    }
    writeFileSync(file, JSON.stringify({ClientName: 'Owner', Project: project, Respondents: [respondent]}))
    const run = cli(['import-pulse', ...store, '--client', client.client_id, '--file', file])
    expect(run.status).toBe(1)
    expect(run.stderr).toBe('Error: text containing the NUL character (U+0000) cannot be stored; remove it and send again\n')
    expect(cliJson<unknown[]>(['list-pulses', ...store])).toEqual([])
  })
})
