import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {cli, cliJson, tempDir} from '../helpers/cli.js'

describe('issue-token', () => {
  let base: string[]
  let client: string
  let member: string
  beforeAll(() => {
    base = ['--db', join(tempDir(), 'tokens.db')]
    client = cliJson([
      'register-client',
      ...base,
      '--name',
      'Acme',
      '--url',
      'https://acme.example',
      '--logo-url',
      'https://acme.example/l.png',
      '--redirect-uri',
      'https://acme.example/cb',
      '--grant',
      'signon',
    ]).client_id
    member = String(
      cliJson([
        'add-member',
        ...base,
        '--email',
        'ana@clinic.example',
        '--password',
        'correct horse',
        '--first-name',
        'Ana',
        '--last-name',
        'Ruiz',
        '--country',
        'US',
        '--specialty',
        'Oncology',
      ]).user_id,
    )
  })

  it('mints a profile token by default, and the scopes asked with --scope', () => {
    expect(cliJson(['issue-token', ...base, '--member', member, '--client', client]).scope).toBe('profile')
    expect(cliJson(['issue-token', ...base, '--member', member, '--client', client, '--scope', 'openid email']).scope).toBe('openid email')
  })

  it('refuses an unknown or empty scope with one Error line', () => {
    for (const scope of ['pulses', 'everything', '']) {
      const result = cli(['issue-token', ...base, '--member', member, '--client', client, '--scope', scope])
      expect(result.status).toBe(1)
      expect(result.stdout).toBe('')
      expect(result.stderr.trim().split('\n')).toHaveLength(1)
      expect(result.stderr).toMatch(/^Error: (unknown scope|a member's token needs at least one scope)/)
    }
  })
})
