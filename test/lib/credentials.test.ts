import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {credential, readEnvironment} from '../../src/config.js'
import {tempDir} from '../helpers/cli.js'

// systemd's LoadCredential= (deploy/medpanel.service): secrets as files in $CREDENTIALS_DIRECTORY.
describe('credentials from $CREDENTIALS_DIRECTORY', () => {
  const dir = tempDir('medpanel-credentials-')
  const key = Buffer.alloc(32, 7).toString('base64')
  writeFileSync(join(dir, 'medpanel-secret-key'), `${key}\n`)
  writeFileSync(join(dir, 'medpanel-metrics-token'), 'a-token-of-enough-length\n')

  it('reads a named credential, trimmed, and nothing without the directory or the file', () => {
    expect(credential({CREDENTIALS_DIRECTORY: dir}, 'medpanel-metrics-token')).toBe('a-token-of-enough-length')
    expect(credential({CREDENTIALS_DIRECTORY: dir}, 'medpanel-other')).toBeUndefined()
    expect(credential({}, 'medpanel-metrics-token')).toBeUndefined()
  })

  it('takes the store key from its credential when MEDPANEL_SECRET_KEY is unset; the variable wins', () => {
    expect(readEnvironment({CREDENTIALS_DIRECTORY: dir}).secretKeys).toEqual([Buffer.alloc(32, 7)])
    const other = Buffer.alloc(32, 9)
    expect(readEnvironment({CREDENTIALS_DIRECTORY: dir, MEDPANEL_SECRET_KEY: other.toString('base64')}).secretKeys).toEqual([other])
  })

  it('refuses a credential that holds no key, naming it', () => {
    const bad = tempDir('medpanel-credentials-')
    writeFileSync(join(bad, 'medpanel-secret-key'), 'not a key')
    expect(() => readEnvironment({CREDENTIALS_DIRECTORY: bad})).toThrow(/the credential medpanel-secret-key must hold/)
  })
})
