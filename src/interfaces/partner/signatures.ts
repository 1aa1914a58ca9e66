import {createHmac} from 'node:crypto'
import {safeEqual} from '../../lib/hashing.js'
import {partnerConfig} from './config.js'

/*
 * How a push shows it comes from medpanel, for a partner client with a signing secret. Every
 * attempt carries two proofs made with that secret at the same moment: medpanel's own
 * X-Medpanel-Signature, and the three Standard Webhooks headers (webhook-id, webhook-timestamp,
 * webhook-signature; https://www.standardwebhooks.com), which the `standardwebhooks` and `svix`
 * libraries check as they stand. Both take the secret's UTF-8 bytes as the HMAC key; those
 * libraries are given the same key written `whsec_` + base64 of those bytes.
 */

const STANDARD_PREFIX = 'whsec_'

/** `t=<unix>,v1=<hex HMAC-SHA256 of "t.body">`: medpanel's own header. */
export function signature(secret: string | Uint8Array, unixSeconds: number, body: string): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex')
  return `t=${unixSeconds},v1=${mac}`
}

/** `v1,<base64 HMAC-SHA256 of "id.t.body">`: one Standard Webhooks signature. */
export function standardSignature(key: string | Uint8Array, id: string, unixSeconds: number, body: string): string {
  return `v1,${createHmac('sha256', key).update(`${id}.${unixSeconds}.${body}`).digest('base64')}`
}

/**
 * The signature headers of one attempt. `id` is the delivery id, the same on every retry, so a
 * partner can drop a duplicate by webhook-id; the time is the attempt's own.
 */
export function signatureHeaders(secret: string, id: string, unixSeconds: number, body: string): Record<string, string> {
  return {
    'x-medpanel-signature': signature(secret, unixSeconds, body),
    'webhook-id': id,
    'webhook-timestamp': String(unixSeconds),
    'webhook-signature': standardSignature(secret, id, unixSeconds, body),
  }
}

/** A signing secret as the Standard Webhooks libraries take it: `whsec_` + base64 of its UTF-8 bytes. */
export function standardWebhooksSecret(secret: string): string {
  return STANDARD_PREFIX + Buffer.from(secret, 'utf8').toString('base64')
}

/** The key a `whsec_…` text stands for, or undefined when the text is not one. */
export function keyOfStandardSecret(text: string): Buffer | undefined {
  if (!text.startsWith(STANDARD_PREFIX)) return undefined
  const encoded = text.slice(STANDARD_PREFIX.length)
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) return undefined
  const key = Buffer.from(encoded, 'base64')
  // Buffer.from skips what it cannot read: only a text that encodes back the same is taken.
  return key.length > 0 && key.toString('base64').replace(/=+$/, '') === encoded.replace(/=+$/, '') ? key : undefined
}

/**
 * What is wrong with a push's signatures as a partner holding `key` sees them at `nowSeconds`,
 * or undefined when they hold. The Standard Webhooks headers are required; X-Medpanel-Signature,
 * when present, must hold too. A time further than the tolerance from the partner's clock is
 * refused, which keeps a captured push from being replayed later.
 */
export function signatureProblem(key: Uint8Array, header: (name: string) => string | undefined, body: string, nowSeconds: number): string | undefined {
  const id = header('webhook-id')
  const timestamp = header('webhook-timestamp')
  const signatures = header('webhook-signature')
  if (!id || !timestamp || !signatures) return 'webhook-signature: a signed push carries webhook-id, webhook-timestamp and webhook-signature'
  const stale = staleness('webhook-timestamp', timestamp, nowSeconds)
  if (stale) return stale
  const expected = standardSignature(key, id, Number(timestamp), body)
  if (!signatures.split(' ').some((given) => safeEqual(given, expected))) return 'webhook-signature: no v1 signature matches the body with this secret'
  const legacy = header('x-medpanel-signature')
  if (legacy === undefined) return undefined
  const parts = /^t=(\d+),v1=[0-9a-f]{64}$/.exec(legacy)
  if (!parts) return 'x-medpanel-signature: expected t=<unix seconds>,v1=<64 hex digits>'
  return (
    staleness('x-medpanel-signature', parts[1]!, nowSeconds) ??
    (safeEqual(legacy, signature(key, Number(parts[1]), body)) ? undefined : 'x-medpanel-signature: does not match the body with this secret')
  )
}

function staleness(name: string, text: string, nowSeconds: number): string | undefined {
  if (!/^\d{1,12}$/.test(text)) return `${name}: expected whole seconds since 1970`
  const off = Number(text) - nowSeconds
  const tolerance = partnerConfig.signatureToleranceSeconds
  return Math.abs(off) <= tolerance ? undefined : `${name}: ${Math.abs(off)} s ${off < 0 ? 'old' : 'ahead of this clock'}; more than ${tolerance} s either way is refused`
}
