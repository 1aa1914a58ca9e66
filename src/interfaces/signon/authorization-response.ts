import type {ClientReturn} from '../../errors.js'

/**
 * How an authorization response travels back to the client. `query` (RFC 6749's default for
 * response_type=code) is a redirect whose query carries the parameters; `form_post` (OAuth 2.0
 * Form Post Response Mode) is a page whose form the browser posts to the redirect URI, so the code
 * never sits in an address (history, logs, Referer). `fragment` has no use with codes only, and
 * JARM's JWT modes are not offered.
 */
export const RESPONSE_MODES = ['query', 'form_post'] as const

export type ResponseMode = ClientReturn['mode']

/** The response mode a request asked for (query when it named none), or undefined when medpanel has no such mode. */
export function readResponseMode(value: string | undefined): ResponseMode | undefined {
  if (value === undefined) return 'query'
  return (RESPONSE_MODES as readonly string[]).includes(value) ? (value as ResponseMode) : undefined
}

/** Appends OAuth parameters to a redirect URI, keeping its own query intact. */
export function redirectWith(redirectUri: string, params: Readonly<Record<string, string | undefined>>): string {
  const url = new URL(redirectUri)
  for (const [key, value] of Object.entries(params)) if (value !== undefined) url.searchParams.append(key, value)
  return url.toString()
}

/** The parameters a response carries, with `iss` naming this issuer (RFC 9207) whatever the mode. */
export function responseFields(answer: ClientReturn, issuer: string): Record<string, string> {
  const fields: Record<string, string> = {}
  for (const [name, value] of Object.entries(answer.params)) if (value !== undefined && name !== 'iss') fields[name] = value
  fields.iss = issuer
  return fields
}
