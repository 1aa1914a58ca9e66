import {spawnSync} from 'node:child_process'
import {chmodSync, chownSync, readdirSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import {acmeRegistration, cliCommand, cliJson, tempDir} from '../helpers/cli.js'

/*
 * deploy/medpanel-admin runs operator commands against the service's store as the service's user.
 * Here the service's user is nobody (65534), owning a store in a directory of its own, and root
 * runs the wrapper, as an operator with sudo would: every file the commands leave beside the store
 * must still be nobody's. (The DynamicUser= path goes through systemd-run, which needs systemd as
 * the machine's init; docs/operations.md gives it.)
 */
const ADMIN = fileURLToPath(new URL('../../deploy/medpanel-admin', import.meta.url))
const NOBODY = 65534
const canSwitch = process.getuid?.() === 0 && spawnSync('sh', ['-c', 'command -v setpriv']).status === 0

describe.skipIf(!canSwitch)('deploy/medpanel-admin (as root, with setpriv)', () => {
  const dir = tempDir('medpanel-admin-')
  const store = join(dir, 'medpanel.db')
  const bin = join(dir, 'medpanel')
  const admin = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(ADMIN, args, {encoding: 'utf8', env: {...process.env, MEDPANEL_ADMIN_STORE: store, MEDPANEL_ADMIN_BIN: bin, ...env}})

  it('runs commands as the store owner: what they write stays the service user’s', () => {
    // The service made its store (as its user would); the CLI this test runs is the executable.
    cliJson(acmeRegistration(['--db', store]))
    const launcher = cliCommand()
    writeFileSync(bin, `#!/bin/sh\nexec ${[launcher.command, ...launcher.args].map((part) => `'${part}'`).join(' ')} "$@"\n`)
    chmodSync(bin, 0o755)
    for (const name of readdirSync(dir)) chownSync(join(dir, name), NOBODY, NOBODY)
    chownSync(dir, NOBODY, NOBODY)

    const registered = admin([
      'register-client',
      '--name',
      'Beta',
      '--url',
      'https://beta.example',
      '--logo-url',
      'https://beta.example/l.png',
      '--redirect-uri',
      'https://beta.example/cb',
      '--json',
    ])
    expect(registered.status, registered.stderr).toBe(0)
    expect(JSON.parse(registered.stdout)).toMatchObject({name: 'Beta'})
    const listed = admin(['list-clients', '--json'])
    expect(listed.status, listed.stderr).toBe(0)
    expect((JSON.parse(listed.stdout) as {name: string}[]).map((client) => client.name).sort()).toEqual(['Acme', 'Beta'])
    const backup = admin(['backup', '--to', join(dir, 'copy.db'), '--json'])
    expect(backup.status, backup.stderr).toBe(0)
    const owners = readdirSync(dir).map((name) => `${name} ${statSync(join(dir, name)).uid}`)
    expect(owners.filter((line) => !line.endsWith(` ${NOBODY}`))).toEqual([])
    expect(owners.some((line) => line.startsWith('copy.db '))).toBe(true)
  })

  it('refuses a store that is not there with one Error: line and exit 1', () => {
    const run = admin(['list-clients'], {MEDPANEL_ADMIN_STORE: join(dir, 'none.db')})
    expect(run.status).toBe(1)
    expect(run.stderr).toMatch(/^Error: no store at .*none\.db \(set MEDPANEL_ADMIN_STORE to the service's store file\)\n$/)
  })
})
