import {registerClient, type RegisteredClient} from '../../src/registry/service.js'

// What registerClient takes, read off its last overload (the one for clients holding a secret).
type Store = Parameters<typeof registerClient>[0]
type NewClientInput = Parameters<typeof registerClient>[1]

/** What a test says about its client: a name, and any field it cares about. */
export type TestClientInput = Partial<NewClientInput> & {name: string}

/**
 * Registers a client the way `register-client` would, with a site made from its name
 * (`Pulse Co` → https://pulse-co.example) and a logo under the site unless the test gives them, and the
 * arguments in registerClient's order: the fields a test would
 * otherwise spell out by hand only to satisfy the registry. `fixed` gives a known id and secret.
 */
export function registerTestClient(store: Store, input: TestClientInput, now: Date, fixed?: {id: string; secret: string}): Promise<RegisteredClient> {
  const site =
    input.url ??
    `https://${input.name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')}.example`
  return registerClient(store, {url: site, logo_url: `${site}/logo.png`, ...input}, now, fixed)
}
