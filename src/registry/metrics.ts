import {defineMetrics} from '../metrics/define.js'

/** The guessing limits' kinds of secret (registry/throttle.ts); never a member, client or address. */
export const CREDENTIALS = ['password', 'client_secret', 'api_key'] as const
export type Credential = (typeof CREDENTIALS)[number]

/**
 * The registry's metrics: this process's password hashes (read when scraped from
 * `passwordHashes`, throttle.ts's passwordHashCounts, which src/instrument.ts hands over: the
 * throttle counts into this set, so this module cannot import it), and what the guessing limits
 * refused.
 */
export const registryMetrics = defineMetrics('registry', (kit, {passwordHashes}: {passwordHashes(): {running: number; waiting: number; standIns: number}}) => {
  kit.scraped(
    {
      name: 'signon_password_hashes',
      help: "This process's password hashes (sign-in checks): running, waiting for one of serve --password-hashes' slots, and unknown e-mails answered without one (stand_in)",
      labelNames: ['state'],
    },
    (gauge) => {
      const {running, waiting, standIns} = passwordHashes()
      gauge.set({state: 'running'}, running)
      gauge.set({state: 'waiting'}, waiting)
      gauge.set({state: 'stand_in'}, standIns)
    },
  )
  return {
    guessing: kit.children(
      'guessing_refusals_total',
      'Requests refused 429 by the guessing limits, by the kind of secret guessed (password, client_secret, api_key)',
      'credential',
      CREDENTIALS,
    ),
  }
})
