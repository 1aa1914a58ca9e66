import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {filesUnder} from '../helpers/tree.js'
import {describe, expect, it} from 'vitest'

/*
 * One way to do each HTTP thing. A request header is read with requestHeader (src/http/fast.ts),
 * which on Node reads the parsed headers instead of making the adapter build a Fetch Headers
 * object; `c.req.header(...)` is its fallback there and nowhere else. A JSON answer is made with
 * jsonResponse, never Hono's `c.json`, and a response header set with responseHeader, never
 * `c.header` (which jsonResponse's plain-object answers would drop). An Authorization header's
 * token is read by presentedCredential (src/http/bearer-auth.ts), for bearer auth and /metrics.
 */

const root = fileURLToPath(new URL('../..', import.meta.url))

/** Files that may still use another spelling, with how many sites each; none now, so any new one fails here. */
const NOT_YET_CONVERTED: Record<string, number> = {}

const files = filesUnder('src', /\.tsx?$/).map((file) => ({file, text: readFileSync(join(root, file), 'utf8')}))

function sites(pattern: RegExp): Record<string, number> {
  const found: Record<string, number> = {}
  for (const {file, text} of files) {
    const n = [...text.matchAll(pattern)].length
    if (n > 0) found[file] = n
  }
  return found
}

describe('one spelling for each HTTP thing', () => {
  it('reads request headers through requestHeader, never c.req.header (but in the facade itself)', () => {
    expect(files.length).toBeGreaterThan(100)
    const found = sites(/\.req\.header\(/g)
    expect(found).toEqual({'src/http/fast.ts': 1, ...NOT_YET_CONVERTED})
  })

  it('answers JSON through jsonResponse and sets response headers through responseHeader, never c.json or c.header', () => {
    expect(sites(/\bc\.json\(/g)).toEqual({})
    expect(sites(/\bc\.header\(/g)).toEqual({'src/http/fast.ts': 1})
  })

  it('parses a Bearer credential in one place', () => {
    expect(Object.keys(sites(/\/\^\(?Bearer/g))).toEqual(['src/http/bearer-auth.ts'])
  })
})
