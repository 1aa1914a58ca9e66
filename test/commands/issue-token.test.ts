import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {acmeRegistration, cli, cliJson, memberRegistration, tempDir} from '../helpers/cli.js'

describe('issue-token', () => {
  let base: string[]
  let client: string
  let member: string
  beforeAll(() => {
    base = ['--db', join(tempDir(), 'tokens.db')]
    client = cliJson([...acmeRegistration(base), '--grant', 'signon']).client_id
    member = String(cliJson(memberRegistration(base)).user_id)
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
