/**
 * The HTTP Basic `Authorization` value for a user and password (RFC 7617), as a client or a
 * partner sends it. Tests of the parser itself build their malformed headers by hand.
 */
export function basicAuth(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`
}

/** A registered client's own id and secret as an HTTP Basic `Authorization` value. */
export function clientBasic(client: {client_id: string; client_secret: string}): string {
  return basicAuth(client.client_id, client.client_secret)
}
