import type {StoreHandle} from './store/database.js'

/**
 * The demo's fixed names, in a module of their own that imports nothing of the service: every
 * interface's demo part and the sign-on routes use them, and src/demo.ts uses the parts.
 */
/** Where `serve --demo` listens unless told otherwise; the API reference's examples use it. */
export const DEMO_BASE_URL = 'http://127.0.0.1:8080'
export const DEMO_CLIENT_ID = 'demo-client'
/** Demo only: a fixed, published secret so the printed curl lines work on every run. */
export const DEMO_CLIENT_SECRET = 'demo-client-secret'
export const DEMO_MEMBER = {email: 'demo.doctor@medpanel.test', password: 'demo-password'}
/**
 * Demo only: a fixed, published API key for interface E so the printed curl lines work on every
 * run. Real keys are random and shown once; never issue this one outside the demo data set.
 */
export const DEMO_API_KEY = 'mpk_demo_conversations_key'

/**
 * Each interface adds its slice of the demo data set as one part: it seeds idempotently and
 * returns what a person needs (a JSON-able summary and ready-to-paste lines).
 */
export interface DemoPart {
  name: string
  seed(db: StoreHandle, ctx: {baseUrl: string; now: Date; clientId: string; memberId: number}): Promise<{info: unknown; lines: string[]}>
}
