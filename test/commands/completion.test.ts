import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {cli, tempDir} from '../helpers/cli.js'

describe('shell completion (@oclif/plugin-autocomplete)', () => {
  it('prints the setup line and builds a bash completion that knows every command', () => {
    const cache = tempDir('medpanel-completion-')
    const env = {XDG_CACHE_HOME: cache}
    const setup = cli(['autocomplete', 'bash'], env)
    expect(setup.status, setup.stderr).toBe(0)
    expect(setup.stdout).toContain('medpanel autocomplete script bash')
    const script = cli(['autocomplete', 'script', 'bash'], env)
    expect(script.status).toBe(0)
    expect(script.stdout).toContain('MEDPANEL_AC_BASH_SETUP_PATH=')
    const completion = readFileSync(join(cache, 'medpanel/autocomplete/functions/bash/medpanel.bash'), 'utf8')
    for (const command of ['serve', 'register-client', 'copy-store', 'push-project', 'seed-posts']) expect(completion).toContain(command)
  })
})
