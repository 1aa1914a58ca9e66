import type {OpenAPIHono} from '@hono/zod-openapi'
import type {Context} from 'hono'
import type {LiveToken} from '../grants/service.js'
import type {AppError} from '../errors.js'

/*
 * What a request carries in Hono's context, as typed sub-apps see it (`Hono<HttpEnv>`,
 * `OpenAPIHono<TokenEnv>`), instead of one global ContextVariableMap that gave every route every
 * variable: a route only reads what a middleware in front of it set.
 */

/** Turns an error into a response in one interface's own body shape (error-shape.ts). */
export type ErrorRenderer = (c: Context, error: AppError) => Response | Promise<Response>

/** Set for every request by the app's own middleware (access-log.ts, client-address.ts, error-shape.ts, fast.ts). */
export interface HttpVariables {
  /** The request id (access-log.ts): the caller's own X-Request-Id when sane, else a new UUID. */
  requestId: string
  /** The caller's address when it was taken from X-Forwarded-For (serve --trust-proxy). */
  forwardedFor?: string
  /** How errors below an interface's errorShape() are answered; unset: the app's plain shape. */
  renderError?: ErrorRenderer
  /** The URL-encoded form urlEncodedForm read, parsed (also in Hono's body cache). */
  urlEncodedForm?: URLSearchParams
}

/** Every request. */
export type HttpEnv = {Variables: HttpVariables}

/** A route behind bearerToken(): the live token it authenticated. */
export type TokenEnv = {Variables: HttpVariables & {token: LiveToken}}

/**
 * The app's variables of any request, whatever its sub-app's own Env. Helpers shared by every
 * interface take Hono's plain Context (its Env is any), and read through this, so what they read is
 * typed. A cast only: no work per request.
 */
export function httpVariables(c: Context): Context<HttpEnv> {
  return c as Context<HttpEnv>
}

/**
 * An interface's sub-app, whatever its Env (src/deps.ts ServedInterface): OpenAPIHono is invariant
 * in its Env, and app.route() mounts any.
 */
// biome-ignore lint/suspicious/noExplicitAny: each interface types its own sub-app's variables
export type SubApp = OpenAPIHono<any>
