import {spawnSync} from 'node:child_process'
import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import {freePort, medpanelOnPath, tempDir} from '../helpers/cli.js'
import {onPostgres} from '../helpers/store.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
/** The interface pages, in the order their walkthroughs build on each other. */
const PAGES = ['signon', 'partner', 'balance', 'pulses', 'conversations']

/** The first ```sh block after the page's "### Walkthrough" heading. */
function walkthrough(page: string): string {
  const text = readFileSync(join(root, 'docs', `${page}.md`), 'utf8')
  const heading = text.indexOf('\n### Walkthrough\n')
  if (heading < 0) throw new Error(`docs/${page}.md has no "### Walkthrough" section`)
  const block = /```sh\n([\s\S]*?)```/.exec(text.slice(heading))
  if (!block) throw new Error(`docs/${page}.md: no sh block under "### Walkthrough"`)
  return block[1]!
}

/**
 * The lines that give the addresses their defaults, in the first walkthrough: the only lines that
 * may name the ports 8080 and 9090. Every other command reaches the service and the partner
 * through MEDPANEL_URL and PARTNER_PORT (the names examples/ uses).
 */
// biome-ignore lint/suspicious/noTemplateCurlyInString: bash's ${NAME:-default}, written as it stands in the pages
const DEFAULTS = ['MEDPANEL_URL=${MEDPANEL_URL:-http://127.0.0.1:8080}', 'PARTNER_PORT=${PARTNER_PORT:-9090}']

/** The lines of a script that run, other than the defaults: comments (what a command prints, which may show the default address) left out. */
function commandLines(script: string): string[] {
  return script.split('\n').filter((line) => !line.trimStart().startsWith('#') && !DEFAULTS.some((given) => line.startsWith(given)))
}

// The walkthroughs of docs/{signon,partner,balance,pulses,conversations}.md, run as printed, one
// after another in one bash, from an empty directory, with `medpanel` on PATH the way the README
// says (this checkout's bin/). Nothing in them is rewritten: MEDPANEL_URL and PARTNER_PORT in the
// environment put the service and the partner on free ports, as a reader would export them, so
// the test never collides with something already listening on 8080 or 9090.
describe.skipIf(onPostgres)('the docs walkthroughs', () => {
  it('name the ports only where the variables get their defaults', () => {
    const script = PAGES.map(walkthrough).join('\n')
    // Each default is given once, in the first walkthrough, before the variable's first use.
    const lines = script.split('\n')
    for (const given of DEFAULTS) {
      const name = given.slice(0, given.indexOf('='))
      expect(lines.filter((line) => line.startsWith(given))).toHaveLength(1)
      expect(walkthrough('signon')).toContain(`\n${given}`)
      const used = commandLines(script).find((line) => line.includes(`$${name}`))
      expect(used, `${name} is used`).toBeDefined()
      expect(lines.findIndex((line) => line.startsWith(given))).toBeLessThan(lines.indexOf(used!))
    }
    // 8080 and 9090 anywhere in a command, URL-encoded (127.0.0.1%3A8080) included.
    expect(commandLines(script).filter((line) => /8080|9090/.test(line))).toEqual([])
  })

  it('run in sequence as written, and show what the pages say they show', async () => {
    const dir = tempDir('medpanel-walkthrough-')
    const [service, partner] = [await freePort(), await freePort()]
    const bin = medpanelOnPath(dir)
    const script = PAGES.map((page) => `# ---- docs/${page}.md\n${walkthrough(page)}`).join('\n')
    writeFileSync(join(dir, 'walkthrough.sh'), script)
    // Whatever happens, the servers the script put in the background go with it.
    const run = spawnSync('bash', ['-c', `set -euo pipefail; trap 'kill $(jobs -p) 2>/dev/null || true' EXIT; source walkthrough.sh`], {
      cwd: dir,
      encoding: 'utf8',
      // Dozens of CLI starts: minutes on a loaded two-core machine, seconds on a quiet one.
      timeout: 270_000,
      env: {...process.env, PATH: `${bin}:${process.env.PATH}`, MEDPANEL_DB: '', NO_COLOR: '1', MEDPANEL_URL: `http://127.0.0.1:${service}`, PARTNER_PORT: String(partner)},
    })
    writeFileSync(join(dir, 'walkthrough.out'), run.stdout)
    const output = `${run.stdout}\n${run.stderr}`
    const serveLog = (() => {
      try {
        return readFileSync(join(dir, 'serve.log'), 'utf8')
      } catch {
        return '(no serve.log)'
      }
    })()
    expect(run.status, `${output}\n--- serve.log\n${serveLog}`).toBe(0)
    // A: the member signed in through the consent forms, and the token reads her.
    expect(run.stdout).toContain('"resource_owner_id":4')
    expect(run.stdout).toContain('{"first_name":"Ana","last_name":"Ruiz","country_of_practice":"US","primary_specialty":"Oncology"}')
    // A, OpenID Connect: the ID token names Ana with the nonce, UserInfo agrees, logout goes back.
    // Its issuer is MEDPANEL_URL, the service's address from the environment.
    expect(run.stdout).toMatch(
      new RegExp(`\\{"iss":"http://127\\.0\\.0\\.1:${service}","sub":"4","aud":"[^"]+","nonce":"n-0S6_WzA2Mj","name":"Ana Ruiz","email":"ana@clinic\\.example"\\}`),
    )
    expect(run.stdout).toContain('"email":"ana@clinic.example","email_verified":false}')
    expect(run.stdout).toContain(`\n303 http://127.0.0.1:${service}/demo/callback?state=bye\n`)
    // A, refresh tokens: offline_access asked on the page, rotation, a replay ends the family.
    expect(run.stdout).toContain('keep access while you are away')
    expect(run.stdout).toContain('{"expires_in":3600,"scope":"openid profile email offline_access","refresh":43}')
    expect(run.stdout).toContain('{"expires_in":3600,"id_token":true,"new_refresh":true}')
    expect(run.stdout).toMatch(/^invalid_grant\n401$/m)
    // A, a native app: no secret, PKCE on a loopback port, remembered consent the second time.
    expect(run.stdout).toMatch(/^false$/m)
    expect(run.stdout).toContain('{"token_type":"bearer","scope":"openid profile"}')
    expect(run.stdout).toMatch(/^302$/m)
    // A, a high-assurance partner: no secret, a pushed request spent once, a DPoP-bound token
    // refused as a bearer token and read with a proof of its key.
    expect(run.stdout).toContain('{"secret":false,"jwks_key_ids":["partner-1"],"require_pushed_authorization_requests":true,"dpop_bound_access_tokens":true}')
    expect(run.stdout).toMatch(/^400$/m)
    expect(run.stdout).toContain('{"token_type":"DPoP","scope":"profile"}')
    expect(run.stdout).toContain('{"resource_owner_id":4,"scopes":["profile"]}')
    // B: the partner holds the project, and the conformance run passed.
    expect(run.stdout).toContain('"name": "Heart failure therapies"')
    expect(run.stdout).toMatch(/"state": "complete"/)
    // verify-partner checked the partner at PARTNER_PORT, where partner-serve listened.
    expect(run.stdout).toMatch(new RegExp(`\\d+ passed, 0 failed \\(project \\S+ at http://127\\.0\\.0\\.1:${partner}\\)\\.`))
    expect(`${run.stdout}`).not.toMatch(/\bFAIL\b/)
    // C: the withdrawal was followed to Completed; errors came in the interface's shapes.
    expect(run.stdout).toMatch(/"status":"Completed"/)
    expect(run.stdout).toMatch(/^422\n[\s\S]*^403\n[\s\S]*^405$/m)
    // D: the export was read back and imported under another id.
    expect(run.stdout).toContain('6b0f5a52-1f0e-4d8e-9b43-0c1d2e3f4a5b')
    expect(run.stdout).toMatch(/"respondents": 150/)
    expect(run.stdout).toMatch(/^www-authenticate: Bearer /im)
    // E: the summaries answered in JSON and XML.
    expect(run.stdout).toMatch(/<\?xml/)
  }, 300_000)
})
