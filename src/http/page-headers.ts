import {createHash} from 'node:crypto'
import type {MiddlewareHandler} from 'hono'
import {secureHeaders} from 'hono/secure-headers'

/**
 * The headers every HTML page gets (sign-in, consent, error pages, the demo callback, /docs):
 * a Content-Security-Policy that allows nothing but the page's own inline style, client logos over
 * https, and forms posting back to this origin, and that no site may frame it; `Referrer-Policy:
 * same-origin`; `nosniff`. Not `no-referrer`: under it a browser sends `Origin: null` on the
 * page's own form posts, which the consent page's Origin check must then refuse.
 */
const POLICY = {
  defaultSrc: ["'none'"],
  styleSrc: ["'unsafe-inline'"],
  imgSrc: ["'self'", 'https:', 'data:'],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
  baseUri: ["'none'"],
}

/**
 * The policy as a header value, with more places the page's forms may lead to. Browsers apply
 * form-action to where a form's answer redirects too, so the consent page (whose Allow and Deny
 * answer with a redirect to the client) must name the client's redirect origin, or the browser
 * stops there. `scripts` are CSP sources ('sha256-…') of the inline scripts a page may run; none
 * by default. Pages that set it keep it: the middleware does not overwrite.
 */
export function pagePolicy(formActions: string[] = [], scripts: string[] = []): string {
  const directive = (name: string, values: string[]) => `${name.replace(/[A-Z]/g, (l) => `-${l.toLowerCase()}`)} ${values.join(' ')}`
  const policy: Record<string, string[]> = {...POLICY, formAction: [...POLICY.formAction, ...formActions]}
  if (scripts.length > 0) policy.scriptSrc = scripts
  return Object.entries(policy)
    .map(([name, values]) => directive(name, values))
    .join('; ')
}

/** An inline script as a CSP source: the base64 SHA-256 of its text, exactly as the page holds it. */
export function scriptHash(script: string): string {
  return `'sha256-${createHash('sha256').update(script, 'utf8').digest('base64')}'`
}

/**
 * A redirect URI as a CSP source: its origin, or for a native app's private-use scheme (whose
 * origin is opaque) the scheme itself.
 */
export function formTarget(redirectUri: string): string {
  const url = new URL(redirectUri)
  return url.origin === 'null' ? url.protocol : url.origin
}

/** The middleware for the paths that answer with HTML pages (each interface lists its own). */
export function pageHeaders(): MiddlewareHandler {
  return secureHeaders({
    contentSecurityPolicy: POLICY,
    overwrite: false,
    referrerPolicy: 'same-origin',
    xContentTypeOptions: 'nosniff',
    xFrameOptions: 'DENY',
    // HSTS belongs to whoever terminates TLS (serve speaks plain http, often behind a proxy).
    strictTransportSecurity: false,
  })
}
