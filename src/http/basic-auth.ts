import type {Context, MiddlewareHandler} from 'hono'
import {config} from '../config.js'
import type {CredentialCheck} from './credential-check.js'
import {requestHeader} from './fast.js'
import {basicCredentialsOf} from './hono-node.js'

export interface BasicCredentials {
  username: string
  password: string
}

/**
 * The credentials of an `Authorization: Basic` header, parsed by Hono's own parser, or undefined
 * when the header is missing or malformed. `formEncoded`: OAuth clients form-encode the client id
 * and secret before they join them (RFC 6749 §2.3.1), so both are decoded once more.
 */
export function readBasicCredentials(c: Context, {formEncoded = false} = {}): Readonly<BasicCredentials> | undefined {
  // The header from Node's parsed headers where there are: no Fetch Request is built for it.
  const header = requestHeader(c, 'authorization')
  if (header === undefined) return undefined
  let known = recentHeaders.get(header)
  if (known === undefined) {
    const credentials = basicCredentialsOf(header)
    known = {
      raw: credentials && Object.freeze(credentials),
      form: credentials && Object.freeze({username: formDecode(credentials.username), password: formDecode(credentials.password)}),
    }
    if (header.length <= REMEMBERED_HEADER_LENGTH) {
      if (recentHeaders.size >= config.caches.basicHeaders) recentHeaders.clear()
      recentHeaders.set(header, known)
    }
  }
  return formEncoded ? known.form : known.raw
}

/** Longer headers are parsed every time: clients' ids and secrets are far shorter, and the memory the map can hold stays small. */
const REMEMBERED_HEADER_LENGTH = 512

/**
 * Authorization headers parsed lately, to what they hold (undefined: not Basic), as sent and
 * form-decoded. A client sends the same header on every call, and Hono's parser (base64 through
 * atob, and a new TextDecoder each time) cost 6-7 µs of `serve`'s CPU per introspection.
 */
const recentHeaders = new Map<string, {raw: Readonly<BasicCredentials> | undefined; form: Readonly<BasicCredentials> | undefined}>()

const NEEDS_DECODING = /[%+]/

function formDecode(value: string): string {
  // Most ids and secrets have nothing to decode, and the test costs a seventh of decoding.
  if (!NEEDS_DECODING.test(value)) return value
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '))
  } catch {
    // Not form-encoded after all (a bare '%'): the value as sent.
    return value
  }
}

/**
 * HTTP Basic authentication (RFC 7617) of a caller against a verify callback. A missing or
 * malformed header is refused with `missing()` before verify runs. Each refusal carries its
 * Basic challenge (`{scheme: 'Basic', realm}`), which the error shape sends as WWW-Authenticate.
 */
export function basicClientAuth<T>({missing, verify, accept}: CredentialCheck<BasicCredentials, T>): MiddlewareHandler {
  return async function requireBasic(c, next) {
    const credentials = readBasicCredentials(c)
    if (!credentials) throw missing()
    const authenticated = await verify(credentials, c)
    accept?.(c, authenticated)
    await next()
  }
}
