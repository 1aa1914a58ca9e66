import {createHmac} from 'node:crypto'

/*
 * What a push to a partner carries besides its body: the Basic credentials and the signature.
 * The HTTP requests themselves go through src/http/outbound.ts.
 */

/** `t=<unix>,v1=<hex HMAC-SHA256 of "t.body">`, as partners verify it. */
export function signature(secret: string, unixSeconds: number, body: string): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex')
  return `t=${unixSeconds},v1=${mac}`
}

export function basicAuthorization(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`
}
