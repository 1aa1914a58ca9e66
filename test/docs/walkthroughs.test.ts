import {spawn} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import {once} from 'node:events'
import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import type {Writable} from 'node:stream'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
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

/**
 * A page's walkthrough as its steps: each numbered comment ("# 1. …") starts one, and what comes
 * before the first (a page without numbered steps) is a step of its own. Joined, they are the
 * walkthrough as printed.
 */
function steps(page: string): {title: string; script: string}[] {
  const found: {title: string; script: string}[] = []
  for (const line of walkthrough(page).split('\n')) {
    if (found.length === 0 || /^# \d+\. /.test(line)) found.push({title: line.replace(/^#\s*/, ''), script: ''})
    found.at(-1)!.script += `${line}\n`
  }
  return found
}

/** What a step printed, once it ran: `ok` unless the shell ended before the step did (set -e). */
interface StepRun {
  ok: boolean
  stdout: string
  stderr: string
}

/**
 * One bash for every walkthrough, fed their steps one at a time from files, so each step is one
 * test: what a step sets (variables, functions, files, the servers it starts in the background)
 * is there for the next, exactly as when the pages run as one script. The shell reads the path
 * of the next step on file descriptor 3 (the steps' standard input stays closed, as a script's
 * was), and ends each step with a line of its own; a step that fails ends the shell (set -e), as
 * it would end the script. The shell and everything it started are one process group.
 */
function stepShell(cwd: string, env: NodeJS.ProcessEnv) {
  const mark = `---- step done ${randomBytes(8).toString('hex')}`
  const script = `set -euo pipefail; trap 'kill $(jobs -p) 2>/dev/null || true' EXIT
while IFS= read -r step <&3; do source "$step"; printf '\\n%s\\n' '${mark}'; done`
  const child = spawn('bash', ['-c', script], {cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe', 'pipe']})
  let stdout = ''
  let stderr = ''
  let exited = false
  let changed = () => {}
  child.stdout!.on('data', (chunk) => {
    stdout += chunk
    changed()
  })
  child.stderr!.on('data', (chunk) => {
    stderr += chunk
  })
  child.once('close', () => {
    exited = true
    changed()
  })
  return {
    /** Runs the step in `file`, resolving once it ran or the shell ended. */
    run(file: string): Promise<StepRun> {
      const [outFrom, errFrom] = [stdout.length, stderr.length]
      return new Promise((resolve) => {
        changed = () => {
          const end = stdout.indexOf(`\n${mark}\n`, outFrom)
          if (end < 0 && !exited) return
          changed = () => {}
          resolve({ok: end >= 0, stdout: stdout.slice(outFrom, end < 0 ? undefined : end), stderr: stderr.slice(errFrom)})
        }
        ;(child.stdio[3] as Writable).write(`${file}\n`)
        changed()
      })
    },
    /** Ends the shell; its EXIT trap stops what the steps left running, and the group goes if it lingers. */
    async close(): Promise<void> {
      ;(child.stdio[3] as Writable).end()
      if (!exited) await Promise.race([once(child, 'close'), new Promise((resolve) => setTimeout(resolve, 5_000))])
      try {
        process.kill(-child.pid!, 'SIGKILL')
      } catch {
        // already gone
      }
    },
  }
}

/**
 * What each step must show, by page and step number, beyond running: the answers the pages say
 * they show.
 */
function shows(service: number, partner: number): Record<string, (stdout: string) => void> {
  return {
    // A: the member signed in through the consent forms, and the token reads her.
    'signon 6': (out) => {
      expect(out).toContain('"resource_owner_id":4')
      expect(out).toContain('{"first_name":"Ana","last_name":"Ruiz","country_of_practice":"US","primary_specialty":"Oncology"}')
    },
    // A, OpenID Connect: the ID token names Ana with the nonce, UserInfo agrees, logout goes back.
    // Its issuer is MEDPANEL_URL, the service's address from the environment.
    'signon 8': (out) => {
      expect(out).toMatch(
        new RegExp(`\\{"iss":"http://127\\.0\\.0\\.1:${service}","sub":"4","aud":"[^"]+","nonce":"n-0S6_WzA2Mj","name":"Ana Ruiz","email":"ana@clinic\\.example"\\}`),
      )
      expect(out).toContain('"email":"ana@clinic.example","email_verified":false}')
    },
    // The whole line: the status and where the browser goes back to.
    'signon 9': (out) => expect(out).toMatch(new RegExp(`^303 http://127\\.0\\.0\\.1:${service}/demo/callback\\?state=bye$`, 'm')),
    // A, refresh tokens: offline_access asked on the page, rotation, a replay ends the family.
    'signon 10': (out) => {
      expect(out).toContain('keep access while you are away')
      expect(out).toContain('{"expires_in":3600,"scope":"openid profile email offline_access","refresh":43}')
      expect(out).toContain('{"expires_in":3600,"id_token":true,"new_refresh":true}')
      expect(out).toMatch(/^invalid_grant\n401$/m)
    },
    // A, a native app: no secret, PKCE on a loopback port, remembered consent the second time.
    'signon 11': (out) => {
      expect(out).toMatch(/^false$/m)
      expect(out).toContain('{"token_type":"bearer","scope":"openid profile"}')
      expect(out).toMatch(/^302$/m)
    },
    // A, a high-assurance partner: no secret, a pushed request spent once, a DPoP-bound token
    // refused as a bearer token and read with a proof of its key.
    'signon 12': (out) => {
      expect(out).toContain('{"secret":false,"jwks_key_ids":["partner-1"],"require_pushed_authorization_requests":true,"dpop_bound_access_tokens":true}')
      expect(out).toMatch(/^400$/m)
      expect(out).toContain('{"token_type":"DPoP","scope":"profile"}')
      expect(out).toContain('{"resource_owner_id":4,"scopes":["profile"]}')
    },
    // B: the partner holds the project, and the conformance run passed.
    'partner 4': (out) => {
      expect(out).toContain('"name": "Heart failure therapies"')
      expect(out).toMatch(/"state": "complete"/)
    },
    // verify-partner checked the partner at PARTNER_PORT, where partner-serve listened.
    'partner 5': (out) => expect(out).toMatch(new RegExp(`\\d+ passed, 0 failed \\(project \\S+ at http://127\\.0\\.0\\.1:${partner}\\)\\.`)),
    // C: the withdrawal was followed to Completed; errors came in the interface's shapes.
    'balance 3': (out) => expect(out).toMatch(/"status":"Completed"/),
    'balance 4': (out) => expect(out).toMatch(/^422\n[\s\S]*^403\n[\s\S]*^405$/m),
    // D: the export was read back and imported under another id.
    'pulses 2': (out) => expect(out).toMatch(/"respondents": 150/),
    'pulses 3': (out) => expect(out).toContain('6b0f5a52-1f0e-4d8e-9b43-0c1d2e3f4a5b'),
    'pulses 4': (out) => expect(out).toMatch(/^www-authenticate: Bearer /im),
    // E: the summaries answered in JSON and XML.
    'conversations 1': (out) => expect(out).toMatch(/<\?xml/),
  }
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

  it("are, step by step, the pages' walkthroughs as printed", () => {
    for (const page of PAGES)
      expect(
        steps(page)
          .map((step) => step.script)
          .join(''),
        page,
      ).toBe(`${walkthrough(page)}\n`)
  })

  describe('run in sequence as written, and show what the pages say they show', () => {
    const dir = tempDir('medpanel-walkthrough-')
    let shell: ReturnType<typeof stepShell>
    let expected: Record<string, (stdout: string) => void>

    beforeAll(async () => {
      const [service, partner] = [await freePort(), await freePort()]
      const bin = medpanelOnPath(dir)
      expected = shows(service, partner)
      shell = stepShell(dir, {
        ...process.env,
        PATH: `${bin}:${process.env.PATH}`,
        MEDPANEL_DB: '',
        NO_COLOR: '1',
        MEDPANEL_URL: `http://127.0.0.1:${service}`,
        PARTNER_PORT: String(partner),
      })
    })
    afterAll(async () => {
      await shell?.close()
    })

    const checked = new Set<string>()
    for (const page of PAGES) {
      for (const [i, {title, script}] of steps(page).entries()) {
        const key = `${page} ${i + 1}`
        checked.add(key)
        it(`docs/${page}.md, step ${i + 1}: ${title}`, async () => {
          const file = join(dir, `step-${page}-${i + 1}.sh`)
          writeFileSync(file, script)
          const run = await shell.run(file)
          writeFileSync(join(dir, `step-${page}-${i + 1}.out`), run.stdout)
          const serveLog = (() => {
            try {
              return readFileSync(join(dir, 'serve.log'), 'utf8')
            } catch {
              return '(no serve.log)'
            }
          })()
          expect(run.ok, `${run.stdout}\n${run.stderr}\n--- serve.log\n${serveLog}`).toBe(true)
          expect(run.stdout).not.toMatch(/\bFAIL\b/)
          expected[key]?.(run.stdout)
        })
      }
    }

    it('has a step for every answer it checks', () => {
      expect(Object.keys(expected).filter((key) => !checked.has(key))).toEqual([])
    })
  })
})
