import {spawnSync} from 'node:child_process'
import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import {tempDir} from '../helpers/cli.js'

/*
 * deploy/medpanel.service as systemd reads it. systemd-analyze verify checks that ExecStart's
 * program exists, which /usr/local/bin/medpanel does not on a build machine: a copy whose
 * ExecStart names this Node instead is verified, every other line as shipped.
 */
const UNIT = fileURLToPath(new URL('../../deploy/medpanel.service', import.meta.url))
const analyze = spawnSync('systemd-analyze', ['--version']).status === 0

function copyToVerify(): string {
  const text = readFileSync(UNIT, 'utf8')
  expect(text).toMatch(/^ExecStart=\/usr\/local\/bin\/medpanel serve /m)
  const copy = join(tempDir('medpanel-unit-'), 'medpanel.service')
  writeFileSync(copy, text.replace(/^ExecStart=\/usr\/local\/bin\/medpanel /m, `ExecStart=${process.execPath} `))
  return copy
}

describe.skipIf(!analyze)('deploy/medpanel.service (skipped without systemd-analyze)', () => {
  it('passes systemd-analyze verify', () => {
    const run = spawnSync('systemd-analyze', ['verify', copyToVerify()], {encoding: 'utf8'})
    expect(run.status, run.stderr).toBe(0)
    expect(run.stderr).toBe('')
  })

  it('is rated OK or better by systemd-analyze security, as docs/operations.md says', () => {
    const run = spawnSync('systemd-analyze', ['security', '--offline=true', copyToVerify()], {encoding: 'utf8'})
    if (/unrecognized option|--offline/.test(run.stderr)) return // an older systemd: no offline rating
    expect(run.status, run.stderr).toBe(0)
    const score = /Overall exposure level for medpanel\.service: ([\d.]+) (\w+)/.exec(run.stdout)
    expect(score, run.stdout).not.toBeNull()
    expect(Number(score![1])).toBeLessThanOrEqual(2)
    const documented = readFileSync(fileURLToPath(new URL('../../docs/operations.md', import.meta.url)), 'utf8')
    expect(documented).toContain(`exposure level ${score![1]} (${score![2]})`)
  })
})
