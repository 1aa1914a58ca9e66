import {chmodSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {refuseSharedFiles} from '../../src/store/private-file.js'
import {loadKeyring} from '../../src/store/secrets.js'
import {cli, cliJson, partnerRegistration, tempDir} from '../helpers/cli.js'

const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')

/** A store file with a partner client (whose password is sealed under the key file beside it). */
function partnerStore(): {file: string; clientId: string} {
  const file = join(tempDir(), 'medpanel.db')
  const client = cliJson<{client_id: string}>([...partnerRegistration(['--db', file], 'http://127.0.0.1:9'), '--partner-username', 'u', '--partner-password', 'partner password'])
  return {file, clientId: client.client_id}
}

const register = (file: string) =>
  cli(['register-client', '--db', file, '--name', 'Q', '--url', 'https://q.example', '--logo-url', 'https://q.example/l.png', '--redirect-uri', 'https://q.example/cb', '--json'])

/** The one Error line, exit 1 and nothing on stdout, naming `shared` and the chmod that fixes it. */
function refusedFor(result: {status: number; stdout: string; stderr: string}, shared: string): void {
  expect(result.status, result.stderr).toBe(1)
  expect(result.stdout).toBe('')
  expect(result.stderr.trim().split('\n')).toHaveLength(1)
  expect(result.stderr).toMatch(new RegExp(`^Error: ${literal(shared)} is readable by other users of this machine; run chmod 600 ${literal(shared)}\\n$`))
}

// Store files as such: not part of the PostgreSQL run (scripts/test.mjs leaves test/store out).
describe('store and key files other users can read are refused, as ssh refuses such a private key', () => {
  it('a key file at 0644: one Error line with the chmod 600 that fixes it, exit 1, the store untouched; after the chmod it works', () => {
    const {file} = partnerStore()
    chmodSync(`${file}.key`, 0o644)
    const key = readFileSync(`${file}.key`, 'utf8')
    const store = readFileSync(file)
    refusedFor(register(file), `${file}.key`)
    refusedFor(cli(['list-clients', '--db', file, '--json']), `${file}.key`)
    refusedFor(cli(['rotate-secret-key', '--db', file, '--json']), `${file}.key`)
    expect(readFileSync(`${file}.key`, 'utf8')).toBe(key)
    expect(readFileSync(file).equals(store)).toBe(true)
    expect(statSync(`${file}.key`).mode & 0o777).toBe(0o644)

    chmodSync(`${file}.key`, 0o600)
    expect(register(file).status).toBe(0)
    expect(cliJson<unknown[]>(['list-clients', '--db', file])).toHaveLength(2)
  })

  it('a store file at 0640: the same refusal, naming the store', () => {
    const {file} = partnerStore()
    chmodSync(file, 0o640)
    const store = readFileSync(file)
    refusedFor(register(file), file)
    refusedFor(cli(['list-clients', '--db', file, '--json']), file)
    expect(readFileSync(file).equals(store)).toBe(true)

    chmodSync(file, 0o600)
    expect(cliJson<unknown[]>(['list-clients', '--db', file])).toHaveLength(1)
  })

  it('serve refuses to start on such a store the same way', () => {
    const {file} = partnerStore()
    chmodSync(`${file}.key`, 0o604)
    refusedFor(cli(['serve', '--port', '0', '--db', file, '--json']), `${file}.key`)
  })

  it('a store and key at 0600, as medpanel makes them, work', () => {
    const {file, clientId} = partnerStore()
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(statSync(`${file}.key`).mode & 0o777).toBe(0o600)
    expect(cliJson<{client_id: string}>(['show-client', clientId, '--db', file]).client_id).toBe(clientId)
  })

  it('backup and restore write the owner-only files the next open accepts, from a read-only 0400 backup too', () => {
    const {file} = partnerStore()
    const dir = tempDir()
    const backup = join(dir, 'backup.db')
    cliJson(['backup', '--db', file, '--to', backup])
    expect(statSync(backup).mode & 0o777).toBe(0o600)
    expect(statSync(`${backup}.key`).mode & 0o777).toBe(0o600)
    chmodSync(backup, 0o400)
    chmodSync(`${backup}.key`, 0o400)
    const restored = join(dir, 'restored.db')
    cliJson(['restore', '--from', backup, '--db', restored])
    expect(statSync(restored).mode & 0o777).toBe(0o600)
    expect(statSync(`${restored}.key`).mode & 0o777).toBe(0o600)
    expect(register(restored).status).toBe(0)

    chmodSync(backup, 0o644)
    refusedFor(cli(['restore', '--from', backup, '--db', join(dir, 'other.db'), '--json']), backup)
  })

  it('names every shared file in one line, quotes a path the shell would split, and skips missing files', () => {
    const dir = tempDir('medpanel test ')
    const db = join(dir, "it's.db")
    writeFileSync(db, '', {mode: 0o600})
    writeFileSync(`${db}-wal`, '', {mode: 0o600})
    writeFileSync(`${db}.key`, '', {mode: 0o600})
    chmodSync(db, 0o620)
    chmodSync(`${db}.key`, 0o640)
    expect(() => refuseSharedFiles([db, `${db}-wal`, `${db}-shm`, `${db}.key`])).toThrow(
      `${db} and ${db}.key are readable by other users of this machine; run chmod 600 '${db.replaceAll("'", "'\\''")}' '${db.replaceAll("'", "'\\''")}.key'`,
    )
    chmodSync(`${db}.key`, 0o600)
    expect(() => refuseSharedFiles([db])).toThrow(/is writable by other users of this machine/)
    chmodSync(db, 0o600)
    expect(() => refuseSharedFiles([db, join(dir, 'missing.db')])).not.toThrow()
  })

  it('leaves a key given in MEDPANEL_SECRET_KEY and an in-memory store alone', () => {
    expect(loadKeyring(undefined, null).source.kind).toBe('ephemeral')
    expect(loadKeyring(':memory:', null).source.kind).toBe('ephemeral')
    expect(loadKeyring(join(tempDir(), 'x.db'), [Buffer.alloc(32, 7)]).source.kind).toBe('env')
  })
})
