import {type Clock, iso} from '../../lib/clock.js'
import {DELIVERY_OUTCOMES, defineMetrics} from '../../metrics/define.js'
import type {SignonDb as Db} from './tables.js'
import {ISSUED_BY} from './grant-types.js'
import {countLiveSessions} from './repository.js'

export const SIGNIN_OUTCOMES = ['success', 'failure'] as const
export type SigninOutcome = (typeof SIGNIN_OUTCOMES)[number]

/**
 * Sign-on's own metrics: the tokens it issues, by the grant that issued them (the codes it hands
 * out and the tokens revoked are counted by grants, src/grants/metrics.ts).
 * The sessions gauge reads the store when scraped, on its read-only connection where there is
 * one, so a scrape never waits behind a batch of writes.
 */
export const signonMetrics = defineMetrics('signon', (kit, {reader, clock}: {reader: Db; clock: Clock}) => {
  const made = {
    tokensIssued: kit.children(
      'signon_tokens_issued_total',
      'Access tokens issued, by grant type (operator: always 0, issue-token runs in a process of its own)',
      'grant_type',
      ISSUED_BY,
    ),
    signins: kit.children(
      'signon_signins_total',
      'Sign-ins on the consent page, by outcome (failure: wrong e-mail or password, inactive member, or refused by the guessing limits)',
      'outcome',
      SIGNIN_OUTCOMES,
    ),
    /** The logout worker's posts, with the delivery worker's outcomes (the client for the partner). */
    logoutAttempts: kit.children(
      'signon_backchannel_logout_attempts_total',
      'Logout tokens posted to clients (back-channel logout) by the logout worker, by outcome',
      'outcome',
      DELIVERY_OUTCOMES,
    ),
  }
  kit.scraped({name: 'signon_active_sessions', help: 'Sign-in sessions that have neither ended nor expired, in the store'}, async (gauge) =>
    gauge.set(await countLiveSessions(reader, iso(clock.now()))),
  )
  return made
})
