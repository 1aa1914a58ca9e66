/** Server-rendered pages of the sign-on flow. Plain HTML forms: they work without JavaScript. */
import type {Child, FC} from 'hono/jsx'
import type {AuthorizedApplication} from './consent.js'

const STYLE = `
  body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;background:#f4f6f8;color:#1d2733;margin:0}
  main{max-width:26rem;margin:4rem auto;background:#fff;border-radius:10px;padding:2rem;box-shadow:0 2px 12px #0001}
  h1{font-size:1.3rem;margin-top:0} label{display:block;margin:.8rem 0 .3rem;font-weight:600}
  input[type=email],input[type=password]{width:100%;box-sizing:border-box;padding:.6rem;border:1px solid #b7c0cc;border-radius:6px;font-size:1rem}
  button{padding:.6rem 1.2rem;border-radius:6px;border:1px solid #1f5fbf;font-size:1rem;cursor:pointer;margin-top:1.2rem}
  .primary{background:#1f5fbf;color:#fff} .secondary{background:#fff;color:#1f5fbf} .row{display:flex;gap:.8rem}
  .error{background:#fdecea;color:#8a1c12;padding:.6rem .8rem;border-radius:6px} .client{display:flex;gap:1rem;align-items:center}
  .logo{flex:none;width:48px;height:48px;background:center/contain no-repeat} .muted{color:#5b6878;font-size:.9rem}
  .app{border-top:1px solid #e3e7ec;margin-top:1rem;padding-top:.6rem} h2{font-size:1.1rem;margin:0}
  .service{margin:0 0 1rem} .link{border:0;background:none;padding:0;margin:0;color:#1f5fbf;text-decoration:underline;font-size:inherit}
  a.button{display:inline-block;padding:.6rem 1.2rem;border-radius:6px;border:1px solid #1f5fbf;font-size:1rem;margin-top:1.2rem;text-decoration:none}`

export const Layout: FC<{title: string; children?: Child}> = ({title, children}) => (
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>{title} · medpanel</title>
      <style>{STYLE}</style>
    </head>
    <body>
      <main>{children}</main>
    </body>
  </html>
)

/**
 * A client's logo, drawn as the background of a fixed-size box: a logo that fails to load (it is
 * the client's address, and may be gone) leaves the box empty instead of a broken-image icon,
 * with no script (the pages' policy allows none). Decorative: the client's name is next to it.
 * The address goes into a CSS string, so it is normalised and every character that could end
 * the string or start an escape is written as a CSS escape; anything but http(s) draws nothing.
 */
const Logo: FC<{url: string}> = ({url}) => {
  const parsed = URL.canParse(url) ? new URL(url) : undefined
  const safe = parsed && /^https?:$/.test(parsed.protocol) ? parsed.href.replace(/[^\x21\x23-\x26\x28-\x5b\x5d-\x7e]/g, (ch) => `\\${ch.codePointAt(0)!.toString(16)} `) : undefined
  return <span class="logo" aria-hidden="true" style={safe ? `background-image:url("${safe}")` : undefined} />
}

/** The authorize parameters ride along in every form so no server-side flow state is needed. */
const Hidden: FC<{params: Record<string, string | undefined>}> = ({params}) => (
  <>{Object.entries(params).map(([name, value]) => (value === undefined ? null : <input type="hidden" name={name} value={value} />))}</>
)

export interface ClientCard {
  name: string
  url: string
  logo_url: string
}

export const SignInPage: FC<{
  client?: ClientCard | undefined
  params: Record<string, string | undefined>
  csrf: string
  error?: string | undefined
  /** Filled in from OpenID Connect's login_hint. */
  email?: string | undefined
}> = ({client, params, csrf, error, email}) => (
  <Layout title="Sign in">
    <h1>{client ? `Sign in to continue to ${client.name}` : 'Sign in to see the applications you allowed'}</h1>
    {error ? (
      <p class="error" role="alert">
        {error}
      </p>
    ) : null}
    <form method="post" action="/oauth/session">
      <Hidden params={params} />
      <input type="hidden" name="csrf_token" value={csrf} />
      <label for="email">E-mail</label>
      <input id="email" type="email" name="email" autocomplete="username" value={email} required />
      <label for="password">Password</label>
      <input id="password" type="password" name="password" autocomplete="current-password" required />
      <button class="primary" type="submit">
        Sign in
      </button>
    </form>
  </Layout>
)

/**
 * The consent page. It names medpanel itself above the client, so the member sees who asks on
 * whose behalf, and offers Sign out to a member who is not the one signed in: that form carries
 * this authorize request along (`return_to`), so the browser comes back to its sign-in form.
 */
export const ConsentPage: FC<{
  client: ClientCard
  memberName: string
  scopes: string[]
  params: Record<string, string | undefined>
  csrf: string
  returnTo: string
}> = ({client, memberName, scopes, params, csrf, returnTo}) => (
  <Layout title="Allow access">
    <p class="muted service">medpanel · sign in with your medpanel membership</p>
    <div class="client">
      <Logo url={client.logo_url} />
      <div>
        <h1>{client.name}</h1>
        <a href={client.url} rel="noopener noreferrer" target="_blank">
          {client.url}
        </a>
      </div>
    </div>
    <p>
      {memberName}, <strong>{client.name}</strong> asks to confirm your membership
      {scopes.some((scope) => SCOPE_WORDS[scope]) ? ` and read ${scopes.flatMap((scope) => SCOPE_WORDS[scope] ?? []).join(', ')}` : ''}.
    </p>
    {scopes.includes('offline_access') ? (
      <p>
        It also asks to <strong>keep access while you are away</strong>: it may renew its access without you, until you withdraw it.
      </p>
    ) : null}
    <form method="post" action="/oauth/authorize">
      <Hidden params={params} />
      <input type="hidden" name="csrf_token" value={csrf} />
      <div class="row">
        <button class="primary" type="submit" name="decision" value="allow">
          Allow
        </button>
        <button class="secondary" type="submit" name="decision" value="deny">
          Deny
        </button>
      </div>
    </form>
    <p class="muted">
      You can <a href="/oauth/authorized_applications">withdraw this access at any time</a>.
    </p>
    <form method="post" action="/oauth/sign_out">
      <input type="hidden" name="csrf_token" value={csrf} />
      <input type="hidden" name="return_to" value={returnTo} />
      <p class="muted">
        Not you?{' '}
        <button class="link" type="submit">
          Sign out
        </button>
      </p>
    </form>
  </Layout>
)

/** What the member is told each scope lets the application read. */
const SCOPE_WORDS: Record<string, string> = {
  openid: 'your member id',
  profile: 'your name, country of practice and primary specialty',
  email: 'your e-mail address',
}
const day = (iso: string) => iso.slice(0, 10)

const canRead = (scopes: string[]) => {
  const read = scopes.filter((scope) => scope !== 'offline_access').map((scope) => SCOPE_WORDS[scope] ?? scope)
  return `${read.join('; ')}${scopes.includes('offline_access') ? ', and keep access while you are away' : ''}`
}

/**
 * What Doorkeeper calls authorized applications: every client the member allowed, each with a
 * Revoke button, and a Sign out button. Plain forms with the CSRF token, no JavaScript. Revoke
 * asks first (RevokeConfirmPage); only the confirming form takes the access back.
 */
export const ApplicationsPage: FC<{memberName: string; applications: AuthorizedApplication[]; csrf: string; notice?: string | undefined}> = ({
  memberName,
  applications,
  csrf,
  notice,
}) => (
  <Layout title="Your applications">
    <h1>Applications you allowed</h1>
    <p class="muted">Signed in as {memberName}.</p>
    {notice ? <p role="status">{notice}</p> : null}
    {applications.length === 0 ? <p>You have not allowed any application, or you took every access back.</p> : null}
    {applications.map((app) => (
      <section class="app">
        <div class="client">
          <Logo url={app.logo_url} />
          <div>
            <h2>{app.name}</h2>
            <a href={app.url} rel="noopener noreferrer" target="_blank">
              {app.url}
            </a>
          </div>
        </div>
        <p>
          Can read {canRead(app.scopes)}. Allowed since {day(app.since)}
          {app.last_used_at ? `, last used ${day(app.last_used_at)}` : ', not used yet'}.
        </p>
        <form method="post" action="/oauth/authorized_applications/revoke">
          <input type="hidden" name="csrf_token" value={csrf} />
          <input type="hidden" name="client_id" value={app.client_id} />
          <button class="secondary" type="submit">
            Revoke access for {app.name}
          </button>
        </form>
      </section>
    ))}
    <form method="post" action="/oauth/sign_out">
      <input type="hidden" name="csrf_token" value={csrf} />
      <button class="secondary" type="submit">
        Sign out
      </button>
    </form>
    <form method="post" action="/oauth/sign_out">
      <input type="hidden" name="csrf_token" value={csrf} />
      <input type="hidden" name="everywhere" value="yes" />
      <p class="muted">
        Used a shared computer?{' '}
        <button class="link" type="submit">
          Sign out of every browser and device
        </button>
      </p>
    </form>
  </Layout>
)

/** The answer to Revoke: the same form again with confirm=yes, or back to the list. */
export const RevokeConfirmPage: FC<{application: AuthorizedApplication; csrf: string}> = ({application, csrf}) => (
  <Layout title="Take access back">
    <h1>Take access back from {application.name}?</h1>
    <p>Its tokens stop working at once, and it can no longer read {canRead(application.scopes)}. To read them again, it would have to ask you again.</p>
    <form method="post" action="/oauth/authorized_applications/revoke">
      <input type="hidden" name="csrf_token" value={csrf} />
      <input type="hidden" name="client_id" value={application.client_id} />
      <input type="hidden" name="confirm" value="yes" />
      <div class="row">
        <button class="primary" type="submit">
          Confirm
        </button>
        <a class="button secondary" href="/oauth/authorized_applications">
          Cancel
        </a>
      </div>
    </form>
  </Layout>
)

/** What submits the form_post page (FormPostPage) at once; the CSP allows exactly this text, by its hash. */
export const FORM_POST_SCRIPT = 'document.forms[0].submit()'

/**
 * The form_post response mode (OAuth 2.0 Form Post Response Mode): the authorization response as
 * hidden fields the browser posts to the client's redirect URI. A one-line script submits it
 * at once; without script, the member presses Continue.
 */
export const FormPostPage: FC<{action: string; fields: Record<string, string>}> = ({action, fields}) => (
  <Layout title="Back to the application">
    <form method="post" action={action}>
      {Object.entries(fields).map(([name, value]) => (
        <input type="hidden" name={name} value={value} />
      ))}
      <p>Taking you back to the application.</p>
      <button class="primary" type="submit">
        Continue
      </button>
    </form>
    <script dangerouslySetInnerHTML={{__html: FORM_POST_SCRIPT}} />
  </Layout>
)

export const ErrorPage: FC<{title: string; message: string}> = ({title, message}) => (
  <Layout title={title}>
    <h1>{title}</h1>
    <p class="error" role="alert">
      {message}
    </p>
    <p class="muted">No information was sent to the application.</p>
  </Layout>
)

/** `serve --demo` only: where the demo client's redirect lands, showing the code to exchange. */
export const DemoCallbackPage: FC<{query: Record<string, string>; curl: string | null}> = ({query, curl}) => (
  <Layout title="Demo callback">
    <h1>Demo client callback</h1>
    <pre>{JSON.stringify(query, null, 2)}</pre>
    {curl ? (
      <>
        <p>Exchange the code (valid ten minutes, once):</p>
        <pre style="white-space:pre-wrap">{curl}</pre>
      </>
    ) : null}
  </Layout>
)
