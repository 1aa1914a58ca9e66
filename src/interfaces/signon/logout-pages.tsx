/** The pages of RP-initiated logout (OpenID Connect): plain HTML forms, no JavaScript. */
import type {FC} from 'hono/jsx'
import {Layout} from './pages.js'

/** Asked when the request cannot prove it comes from the member's own application (no valid id_token_hint for them). */
export const ConfirmSignOutPage: FC<{memberName: string; clientName: string | undefined; params: Record<string, string | undefined>; csrf: string}> = ({
  memberName,
  clientName,
  params,
  csrf,
}) => (
  <Layout title="Sign out">
    <h1>Sign out of medpanel?</h1>
    <p>
      {memberName}, {clientName ? <strong>{clientName}</strong> : 'an application'} asks to sign you out of medpanel on this browser.
    </p>
    <form method="post" action="/oauth/end_session">
      {Object.entries(params).map(([name, value]) => (value === undefined ? null : <input type="hidden" name={name} value={value} />))}
      <input type="hidden" name="csrf_token" value={csrf} />
      <input type="hidden" name="confirm" value="yes" />
      <button class="primary" type="submit">
        Sign out
      </button>
    </form>
    <p class="muted">If you did not expect this, close this page: you stay signed in.</p>
  </Layout>
)

export const SignedOutPage: FC = () => (
  <Layout title="Signed out">
    <h1>You are signed out</h1>
    <p>This browser is no longer signed in to medpanel. You can close this page.</p>
  </Layout>
)
