import type {MiddlewareHandler} from 'hono'
import {secureHeaders} from 'hono/secure-headers'

/**
 * The headers every HTML page gets (sign-in, consent, error pages, the demo callback, /docs):
 * a Content-Security-Policy that allows nothing but the page's own inline style, client logos over
 * https, and forms posting back to this origin, and that no site may frame it; `Referrer-Policy:
 * same-origin`; `nosniff`. Not `no-referrer`: under it a browser sends `Origin: null` on the
 * page's own form posts, which the consent page's Origin check must then refuse.
 */
export function pageHeaders(): MiddlewareHandler {
  return secureHeaders({
    contentSecurityPolicy: {
      defaultSrc: ["'none'"],
      styleSrc: ["'unsafe-inline'"],
      imgSrc: ["'self'", 'https:', 'data:'],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
      baseUri: ["'none'"],
    },
    referrerPolicy: 'same-origin',
    xContentTypeOptions: 'nosniff',
    xFrameOptions: 'DENY',
    // HSTS belongs to whoever terminates TLS (serve speaks plain http, often behind a proxy).
    strictTransportSecurity: false,
  })
}

/** The paths that answer with HTML pages. */
export const PAGE_PATHS = ['/oauth/authorize', '/oauth/session', '/oauth/authorized_applications', '/oauth/authorized_applications/*', '/demo/*', '/docs'] as const
