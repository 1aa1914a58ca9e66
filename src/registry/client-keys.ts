import {readFileSync} from 'node:fs'
import {z} from 'zod'
import {AppError} from '../errors.js'
import {calledUrlProblem} from '../lib/partner-address.js'

/**
 * The public keys of a client that authenticates with private_key_jwt (RFC 7523 §2.2): a JWK Set
 * (RFC 7517) the operator registers, or the URL the client publishes one at.
 *
 * Only asymmetric signing keys are taken, and only their public halves: a set that carries a
 * private or symmetric key is refused (it would be a shared secret, the very thing this method
 * exists to avoid, and storing it would leak it), as is one whose keys cannot be told apart.
 */

/** The algorithms a client assertion may be signed with; never `none`, never HMAC. */
export const CLIENT_ASSERTION_ALGS = ['ES256', 'PS256', 'RS256'] as const

/** Members only a private or symmetric key has. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const

const jwk = z
  .object({
    kty: z.enum(['RSA', 'EC'], {message: 'kty must be RSA or EC (an asymmetric key)'}),
    kid: z.string().min(1).max(200).optional(),
    use: z.literal('sig', {message: 'use must be sig: these keys sign client assertions'}).optional(),
    alg: z.enum(CLIENT_ASSERTION_ALGS, {message: `alg must be one of ${CLIENT_ASSERTION_ALGS.join(', ')}`}).optional(),
    crv: z.string().optional(),
    n: z.string().optional(),
    e: z.string().optional(),
    x: z.string().optional(),
    y: z.string().optional(),
  })
  .passthrough()
  .superRefine((key, ctx) => {
    const secret = PRIVATE_MEMBERS.filter((member) => member in key)
    if (secret.length > 0) {
      ctx.addIssue({code: 'custom', message: `holds private key material (${secret.join(', ')}): register the public key only`})
    }
    if (key.kty === 'RSA' && (!key.n || !key.e)) ctx.addIssue({code: 'custom', message: 'an RSA key needs n and e'})
    if (key.kty === 'EC' && (key.crv !== 'P-256' || !key.x || !key.y)) ctx.addIssue({code: 'custom', message: 'an EC key must be P-256 (for ES256), with x and y'})
  })

/** A JWK Set as registered: 1 to 10 public signing keys, each with its own kid when there are several. */
export const jwksSchema = z
  .object({keys: z.array(jwk).min(1, 'must hold at least one key').max(10, 'at most 10 keys')})
  .passthrough()
  .superRefine((set, ctx) => {
    if (set.keys.length === 1) return
    const kids = set.keys.map((key) => key.kid)
    if (kids.some((kid) => kid === undefined)) ctx.addIssue({code: 'custom', path: ['keys'], message: 'with several keys, each needs a kid'})
    else if (new Set(kids).size !== kids.length) ctx.addIssue({code: 'custom', path: ['keys'], message: 'two keys share a kid'})
  })
export type ClientJwks = z.infer<typeof jwksSchema>

/** Where a client publishes its keys: https (plain http only on loopback), never a link-local address. */
export const jwksUri = z
  .string()
  .trim()
  .max(2048, 'must be at most 2048 characters')
  .superRefine((value, ctx) => {
    const problem = calledUrlProblem(value, 'keys fetched over plain http could be swapped on the way')
    if (problem) ctx.addIssue({code: 'custom', message: problem})
  })

/** A JWK Set file as `--jwks-file` names it, read and parsed; its keys are checked where the client is stored. */
export function readJwksFile(path: string): unknown {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    throw new AppError('bad_request', `--jwks-file: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`)
  }
  try {
    return JSON.parse(text)
  } catch {
    throw new AppError('bad_request', `--jwks-file: ${path} is not JSON (a JWK Set: {"keys": [...]})`)
  }
}
