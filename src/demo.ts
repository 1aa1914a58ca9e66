import {AppError} from './errors.js'
import {narrow, narrowParts, type StoreParts} from './store/database.js'
import type {Kysely} from 'kysely'
import {findClient, findMemberByEmail} from './registry/repository.js'
import {addMember, getClient, memberView, registerClient, updateClient, type MemberView} from './registry/service.js'
import type {Database} from './schema.js'
import {conversationDemo} from './interfaces/conversations/demo.js'
import {pulseDemo} from './interfaces/pulse/demo.js'
import {balanceDemoPart} from './interfaces/balance/demo.js'

export {DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, DEMO_MEMBER, type DemoPart} from './demo-data.js'
import {DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, DEMO_MEMBER, type DemoPart} from './demo-data.js'

/** Register interface demo parts here (one import and one entry each). */
export const DEMO_PARTS: DemoPart[] = [conversationDemo, pulseDemo, balanceDemoPart]

export interface DemoInfo {
  base_url: string
  client: {client_id: string; client_secret: string; name: string; redirect_uri: string; grants: string[]}
  member: MemberView & {password: string}
  authorize_url: string
  curl: string[]
  /** What each interface's demo part seeded, by part name. */
  parts: Record<string, unknown>
  part_lines: Record<string, string[]>
}

/**
 * Seeds the demo data set and returns what a person needs to try it. Idempotent: a second run
 * finds what the first made (and adds the callback of a new base URL to the client's redirects).
 */
export async function seedDemo(store: StoreParts<Kysely<Database>>, baseUrl: string, now: Date, options: {force?: boolean; warn?: (line: string) => void} = {}): Promise<DemoInfo> {
  const {db} = store
  const redirectUri = `${baseUrl}/demo/callback`
  await ensureDemoClient(store, redirectUri, now, options)
  const client = await getClient(narrow(db), DEMO_CLIENT_ID)
  const member = await ensureDemoMember(db, now)

  const authorize = new URL('/oauth/authorize', baseUrl)
  authorize.search = new URLSearchParams({client_id: DEMO_CLIENT_ID, redirect_uri: redirectUri, response_type: 'code', state: 'demo-state'}).toString()

  const parts: Record<string, unknown> = {}
  const partLines: Record<string, string[]> = {}
  for (const part of DEMO_PARTS) {
    const seeded = await part.seed(db, {baseUrl, now, clientId: DEMO_CLIENT_ID, memberId: member.user_id})
    parts[part.name] = seeded.info
    partLines[part.name] = seeded.lines
  }

  return {
    base_url: baseUrl,
    client: {client_id: client.client_id, client_secret: DEMO_CLIENT_SECRET, name: client.name, redirect_uri: redirectUri, grants: client.grants},
    member: {...member, password: DEMO_MEMBER.password},
    authorize_url: authorize.toString(),
    curl: signonCurl(baseUrl, redirectUri),
    parts,
    part_lines: partLines,
  }
}

/**
 * Registers the demo client, or adds this base URL's callback to the one already there. Refused
 * in a store that holds clients or members the demo did not make, unless forced.
 */
async function ensureDemoClient(store: StoreParts<Kysely<Database>>, redirectUri: string, now: Date, options: {force?: boolean; warn?: (line: string) => void}): Promise<void> {
  const {db} = store
  const existing = await findClient(narrow(db), DEMO_CLIENT_ID)
  if (existing) {
    const uris = existing.redirect_uris
    if (!uris.includes(redirectUri)) await updateClient(narrowParts(store), DEMO_CLIENT_ID, {redirect_uris: [...uris, redirectUri]}, now)
    const logoutUris = existing.post_logout_redirect_uris
    if (!logoutUris.includes(redirectUri)) await updateClient(narrowParts(store), DEMO_CLIENT_ID, {post_logout_redirect_uris: [...logoutUris, redirectUri]}, now)
    return
  }
  await refuseForeignStore(db, options)
  await registerClient(
    narrowParts(store),
    {
      name: 'Demo Research Partner',
      url: 'https://partner.example.com',
      logo_url: 'https://partner.example.com/logo.png',
      redirect_uris: [redirectUri],
      // OpenID Connect's logout comes back to the same demo page, which shows the state.
      post_logout_redirect_uris: [redirectUri],
      grants: ['signon', 'balance', 'pulses', 'conversations'],
      admin: false,
      token_ttl: 7200,
    },
    now,
    {id: DEMO_CLIENT_ID, secret: DEMO_CLIENT_SECRET},
  )
}

/**
 * The demo client's secret is published: planting it in a store that already has real clients or
 * members would open every balance there to anyone who read the README. Refused unless forced.
 */
async function refuseForeignStore(db: Kysely<Database>, options: {force?: boolean; warn?: (line: string) => void}): Promise<void> {
  const [clients, members] = await Promise.all([
    db
      .selectFrom('clients')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('members')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow(),
  ])
  if (Number(clients.n) + Number(members.n) === 0) return
  const what = `this store already holds ${clients.n} client(s) and ${members.n} member(s) that the demo did not make`
  if (!options.force) {
    throw new AppError(
      'conflict',
      `${what}; seeding would add the demo client with its published secret. Give the demo a store of its own (the default ./medpanel-demo.db), or add --force`,
    )
  }
  options.warn?.(`${what}; seeding anyway (--force): the demo client and its published secret are now in it`)
}

/** The demo member, added on the first run. */
async function ensureDemoMember(db: Kysely<Database>, now: Date): Promise<MemberView> {
  let memberRow = await findMemberByEmail(narrow(db), DEMO_MEMBER.email)
  if (!memberRow) {
    await addMember(
      narrow(db),
      {
        email: DEMO_MEMBER.email,
        password: DEMO_MEMBER.password,
        first_name: 'Dana',
        last_name: 'Whitfield',
        country: 'US',
        specialty: 'Cardiology',
        npi: '1234567893',
        me: '03512345671',
      },
      now,
    )
    memberRow = await findMemberByEmail(narrow(db), DEMO_MEMBER.email)
  }
  return memberView(memberRow!)
}

/** The sign-on calls that follow the browser's allow: the code exchange, then the token's and member's info. */
function signonCurl(baseUrl: string, redirectUri: string): string[] {
  return [
    `curl -s -X POST ${baseUrl}/oauth/token -d grant_type=authorization_code -d client_id=${DEMO_CLIENT_ID} -d client_secret=${DEMO_CLIENT_SECRET} --data-urlencode redirect_uri=${redirectUri} -d code=CODE_FROM_REDIRECT`,
    `curl -s ${baseUrl}/user/oauth/token/info -H "Authorization: Bearer ACCESS_TOKEN"`,
    `curl -s ${baseUrl}/user/oauth/user/info -H "Authorization: Bearer ACCESS_TOKEN"`,
  ]
}

/** The demo as a person reads it. */
export function describeDemo(info: DemoInfo): string {
  return [
    `Demo client   ${info.client.client_id} / ${info.client.client_secret}  (${info.client.name})`,
    `Demo member   ${info.member.email} / ${info.member.password}  (user_id ${info.member.user_id})`,
    '',
    'Sign in and allow, in a browser:',
    `  ${info.authorize_url}`,
    '',
    'Then, with the code from the redirect:',
    ...info.curl.map((line) => `  ${line}`),
    ...Object.entries(info.part_lines).flatMap(([name, lines]) => ['', `${name}:`, ...lines.map((line) => `  ${line}`)]),
  ].join('\n')
}
