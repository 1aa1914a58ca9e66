/**
 * Sign-on's tunables (interface A): each value with the reason for it, as src/config.ts keeps
 * the shared ones (the grants' DPoP and token-use settings are there: src/grants reads them).
 */
export const signonConfig = {
  /** Authorization codes live ten minutes and only until first use (RFC 6749 §4.1.2 says "short"). */
  codeTtlSeconds: 600,
  /** A member's sign-in on the consent page lasts a working day. */
  sessionSeconds: 12 * 3600,
  /**
   * ID tokens (OpenID Connect) are valid an hour, as node-oidc-provider's are: a relying party
   * reads one right after the code exchange, and a logout's id_token_hint is accepted expired.
   */
  idTokenSeconds: 3600,
  /**
   * OpenID Connect Back-Channel Logout: the logout tokens posted to clients and how they are sent
   * (interfaces/signon/logout-worker.ts).
   */
  backchannelLogout: {
    /** A logout token is valid two minutes, as the spec suggests: it is read when it arrives, and each retry signs a new one. */
    tokenSeconds: 120,
    /** One post to a client; a client that takes longer is tried again later, never waited on. */
    requestTimeoutMs: 5_000,
    /** Waits after the 1st, 2nd, … failed attempt, as a partner push retries … */
    retryScheduleSeconds: [5, 30, 120, 600, 3600] as const,
    /** … then hourly … */
    retryEverySeconds: 3600,
    /** … for a day: longer than any sign-in session lives, so later news of its end tells the client nothing. */
    giveUpAfterSeconds: 86_400,
    /** Sent and given-up deliveries stay a week for the operator to read, then go. */
    keepSeconds: 7 * 86_400,
    /** `serve`'s logout worker looks for due deliveries and newly voided sessions this often. */
    pollMs: 500,
  },
  /** How far a relying party's clock may be behind ours: a rotated key stays published this much longer. */
  clockSkewSeconds: 60,
  /**
   * A rotated-in key is published this long before it signs: longer than relying parties keep a
   * fetched key set (jose's remote set: ten minutes; /oauth/jwks says max-age=300), so none
   * meets a token whose key its copy lacks.
   */
  keyPublishLeadSeconds: 600,
  /**
   * An access token that comes with a refresh token lives an hour unless the client agreed
   * another lifetime (--token-ttl): the refresh token is what keeps access, so the access token
   * can be short, as node-oidc-provider's and Keycloak's are (RFC 9700 §2.2.2 wants them short).
   */
  refreshedAccessTokenSeconds: 3600,
  /**
   * A JWT access token (RFC 9068) lives the client's agreed lifetime, but at most 10 minutes: a
   * resource server that checks it alone against the JWKS never hears of its revocation, so a
   * revoked one stays usable there until it expires.
   */
  jwtAccessTokenMaxSeconds: 600,
  /**
   * A refresh token unused for 14 days dies (its successor gets a new 14 days at each refresh):
   * an application nobody opened for two weeks asks the member again, as Keycloak's default
   * "SSO session idle" does for offline sessions at 30 days; health data argues for shorter.
   */
  refreshTokenIdleSeconds: 14 * 86400,
  /**
   * However often it is refreshed, an authorization ends 30 days after the member allowed it
   * (RFC 9700 §4.14.2 asks for a bound): the member then signs in again, once a month at most,
   * and the remembered consent sends them straight back.
   */
  refreshTokenAbsoluteSeconds: 30 * 86400,
  /**
   * A private_key_jwt client assertion may be valid at most this long (its exp at most this far
   * ahead): each one's jti is kept until it expires, so a short life keeps that list short, and
   * a stolen assertion is worth little. Five minutes is node-oidc-provider's and Keycloak's
   * order; libraries sign theirs for one to five.
   */
  clientAssertionMaxSeconds: 300,
  /**
   * A pushed authorization request (RFC 9126) must be opened in the browser within a minute
   * (the RFC's example, node-oidc-provider's default): the client redirects at once. Once opened
   * it lives as long as a sign-in on the consent page may take, then is spent by its answer.
   */
  pushedRequestSeconds: 60,
  pushedRequestPageSeconds: 3600,
  /**
   * A client's JWK Set fetched from its jwks_uri is used this long before it is fetched again;
   * an assertion naming a key the copy lacks fetches it at once (a rotation), but at most once
   * per cooldown, so unknown kids cannot make medpanel hammer the client's server.
   */
  clientJwksCacheSeconds: 600,
  clientJwksCooldownSeconds: 30,
  /** A jwks_uri must answer within this, with at most this many bytes. */
  clientJwksFetchTimeoutMs: 5_000,
  clientJwksMaxBytes: 64 * 1024,
} as const
