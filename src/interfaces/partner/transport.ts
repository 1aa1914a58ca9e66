/*
 * What a push to a partner carries besides its body: the Basic credentials (the signatures are in
 * signatures.ts). The HTTP requests themselves go through src/http/outbound.ts.
 */

export function basicAuthorization(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`
}
