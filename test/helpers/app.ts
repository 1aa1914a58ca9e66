import {createApp} from '../../src/app.js'
import type {Readiness} from '../../src/deps.js'
import {ManualClock} from '../../src/lib/clock.js'
import type {Store} from '../../src/store/db.js'
import {openTestStore} from './store.js'

export interface TestContext {
  store: Store
  db: Store['db']
  clock: ManualClock
  app: ReturnType<typeof createApp>
  logs: string[]
}

/**
 * A fresh migrated store (see helpers/store.ts), with an app on a manual clock. Close it with
 * `ctx.store.close()`. `readiness`, as serve holds it, is the test's to change (always ready without).
 */
export async function freshApp(options: {demo?: boolean; readiness?: Readiness} = {}): Promise<TestContext> {
  const store = await openTestStore()
  const clock = new ManualClock()
  const logs: string[] = []
  const app = createApp({store, clock, log: (line) => logs.push(line), demo: options.demo, ...(options.readiness ? {readiness: options.readiness} : {})})
  return {store, db: store.db, clock, app, logs}
}

/** A form body as application/x-www-form-urlencoded request init. */
export function form(fields: Record<string, string | string[]>, headers: Record<string, string> = {}): RequestInit {
  const body = new URLSearchParams()
  for (const [key, value] of Object.entries(fields)) for (const v of [value].flat()) body.append(key, v)
  return {method: 'POST', body, headers: {'content-type': 'application/x-www-form-urlencoded', ...headers}}
}
