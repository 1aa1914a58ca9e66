import {describe, expect, it} from 'vitest'
import {fits, HostSelector, type HostPort, isServerGone, NoTargetError, parseTargets, type ServerRole} from '../../../src/store/postgres/hosts.js'
import {printableUrl} from '../../../src/store/postgres/open.js'
import {storeFailure} from '../../../src/store/failure.js'
import {toAppError} from '../../../src/http/error-shape.js'

/*
 * Several hosts in one database URL (store/postgres/hosts.ts): pg reads one host only, so medpanel
 * picks among them as libpq does with target_session_attrs. The servers here are stand-ins: a
 * probe answers what each one "is" (primary, standby, down).
 */

const PRIMARY: ServerRole = {recovery: false, readOnly: false}
const STANDBY: ServerRole = {recovery: true, readOnly: true}

describe('multi-host database URLs', () => {
  it('reads the hosts, ports and target_session_attrs, and leaves pg a URL of one host', () => {
    expect(parseTargets('postgres://app:secret@db1:5432,db2:5433/medpanel?target_session_attrs=read-write&sslmode=disable')).toEqual({
      hosts: [
        {host: 'db1', port: 5432},
        {host: 'db2', port: 5433},
      ],
      attrs: 'read-write',
      base: 'postgres://app:secret@db1:5432/medpanel?sslmode=disable',
    })
    // A host without a port takes 5432; an IPv6 literal keeps its brackets.
    expect(parseTargets('postgresql://[::1]:6000,db2/x')).toEqual({
      hosts: [
        {host: '::1', port: 6000},
        {host: 'db2', port: 5432},
      ],
      attrs: 'any',
      base: 'postgresql://[::1]:6000/x',
    })
    // One host and no target_session_attrs: pg reads it itself.
    expect(parseTargets('postgres://u@db1:5432/medpanel')).toBeUndefined()
    expect(parseTargets('postgres://u@db1/medpanel?target_session_attrs=prefer-standby')?.attrs).toBe('prefer-standby')
  })

  it('refuses a target_session_attrs libpq would refuse, naming the ones it takes', () => {
    expect(() => parseTargets('postgres://h1,h2/db?target_session_attrs=master')).toThrow(/target_session_attrs must be one of any, read-write, .*prefer-standby \(got "master"\)/)
  })

  it('prints such a URL without its password', () => {
    expect(printableUrl('postgres://app:secret@db1:5432,db2:5433/medpanel?target_session_attrs=read-write')).toBe(
      'postgres://app:***@db1:5432,db2:5433/medpanel?target_session_attrs=read-write',
    )
  })

  it('tells which servers fit each target_session_attrs', () => {
    const table = (['any', 'read-write', 'read-only', 'primary', 'standby', 'prefer-standby'] as const).map((attrs) => [attrs, fits(attrs, PRIMARY), fits(attrs, STANDBY)])
    expect(table).toEqual([
      ['any', true, true],
      ['read-write', true, false],
      ['read-only', false, true],
      ['primary', true, false],
      ['standby', false, true],
      ['prefer-standby', true, true],
    ])
    // A primary made read-only by default_transaction_read_only takes no writes.
    expect(fits('read-write', {recovery: false, readOnly: true})).toBe(false)
  })

  it('counts a demoted, stopped or unreachable server as gone, and a rule broken by the request as not', () => {
    const withCode = (message: string, code: string) => Object.assign(new Error(message), {code})
    expect(isServerGone(withCode('cannot execute INSERT in a read-only transaction', '25006'))).toBe(true)
    expect(isServerGone(withCode('terminating connection due to administrator command', '57P01'))).toBe(true)
    expect(isServerGone(withCode('read ECONNRESET', 'ECONNRESET'))).toBe(true)
    expect(isServerGone(withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'))).toBe(true)
    expect(isServerGone(new Error('Connection terminated unexpectedly'))).toBe(true)
    expect(isServerGone(withCode('duplicate key value violates unique constraint', '23505'))).toBe(false)
    expect(isServerGone(withCode('could not serialize access', '40001'))).toBe(false)
  })

  it('answers a write refused by a demoted primary, and no primary at all, with 503 and Retry-After', () => {
    for (const error of [
      Object.assign(new Error('cannot execute UPDATE in a read-only transaction'), {code: '25006'}),
      new NoTargetError('no server of the database URL is writable'),
    ]) {
      expect(storeFailure(error)).toBe('unavailable')
      const answer = toAppError(error)
      expect([answer.status, answer.headers['Retry-After']]).toEqual([503, '30'])
      expect(answer.message).not.toMatch(/read-only|server/)
    }
  })
})

/** A selector over stand-in servers whose roles the test sets; counts the probes. */
function servers(roles: (ServerRole | 'down')[], attrs: ConstructorParameters<typeof HostSelector>[1]) {
  const hosts: HostPort[] = roles.map((_, i) => ({host: '127.0.0.1', port: 5000 + i}))
  const probed: number[] = []
  const selector = new HostSelector(hosts, attrs, async (host) => {
    probed.push(host.port)
    const role = roles[host.port - 5000]!
    if (role === 'down') throw Object.assign(new Error(`connect ECONNREFUSED 127.0.0.1:${host.port}`), {code: 'ECONNREFUSED'})
    return role
  })
  return {hosts, probed, selector, roles}
}

describe('choosing a host', () => {
  it('read-write takes the primary wherever it is in the list, and keeps it until it fails', async () => {
    const {selector, probed} = servers([STANDBY, PRIMARY], 'read-write')
    expect(await selector.pick()).toEqual({host: '127.0.0.1', port: 5001})
    expect(await selector.pick()).toEqual({host: '127.0.0.1', port: 5001})
    expect(probed, 'asked once, then remembered').toEqual([5000, 5001])
  })

  it('after a failover, a forgotten host makes the next pick find the new primary', async () => {
    const {selector, roles, hosts} = servers([PRIMARY, STANDBY], 'read-write')
    expect((await selector.pick()).port).toBe(5000)
    // The primary dies; the standby is promoted.
    roles[0] = 'down'
    roles[1] = PRIMARY
    expect((await selector.pick()).port, 'remembered until told').toBe(5000)
    selector.forget(hosts[0]!)
    expect((await selector.pick()).port).toBe(5001)
    expect(selector.stats.switches).toBe(1)
    // Forgetting a host that is not the chosen one changes nothing.
    selector.forget(hosts[0]!)
    expect(selector.current?.port).toBe(5001)
  })

  it('with no primary (mid-failover), a pick fails with a connection error that says why for each host', async () => {
    const {selector} = servers(['down', STANDBY], 'read-write')
    const error = await selector.pick().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(NoTargetError)
    expect((error as Error).message).toMatch(/^no server of the database URL is writable .*127\.0\.0\.1:5000: connect ECONNREFUSED.*127\.0\.0\.1:5001 is a standby/)
    expect(storeFailure(error)).toBe('unavailable')
  })

  it('prefer-standby takes a standby, and the primary when no standby answers', async () => {
    expect((await servers([PRIMARY, STANDBY], 'prefer-standby').selector.pick()).port).toBe(5001)
    expect((await servers([PRIMARY, 'down'], 'prefer-standby').selector.pick()).port).toBe(5000)
    expect((await servers(['down', PRIMARY], 'any').selector.pick()).port).toBe(5001)
  })

  it('concurrent picks share one search', async () => {
    const {selector, probed} = servers([STANDBY, PRIMARY], 'primary')
    const picks = await Promise.all([selector.pick(), selector.pick(), selector.pick()])
    expect(picks.map((pick) => pick.port)).toEqual([5001, 5001, 5001])
    expect(probed).toEqual([5000, 5001])
  })
})

describe('time without a primary', () => {
  it('counts from the host given up to the next that fits, and reports the failover', async () => {
    let now = 1_000_000
    const roles: (ServerRole | 'down')[] = [PRIMARY, STANDBY]
    const hosts: HostPort[] = [
      {host: '127.0.0.1', port: 5000},
      {host: '127.0.0.1', port: 5001},
    ]
    const selector = new HostSelector(
      hosts,
      'read-write',
      async (host) => {
        const role = roles[host.port - 5000]!
        if (role === 'down') throw Object.assign(new Error('connect ECONNREFUSED'), {code: 'ECONNREFUSED'})
        return role
      },
      () => now,
    )
    const seen: string[] = []
    selector.events.failover = () => seen.push('failover')
    selector.events.restored = (seconds) => seen.push(`restored after ${seconds} s`)
    await selector.pick()
    expect([selector.secondsWithout(), seen]).toEqual([0, []])
    roles[0] = 'down'
    selector.forget(hosts[0]!)
    now += 4_000
    expect(selector.secondsWithout()).toBe(4)
    // Mid-failover: the standby is not promoted yet.
    await expect(selector.pick()).rejects.toBeInstanceOf(NoTargetError)
    now += 2_500
    roles[1] = PRIMARY
    expect((await selector.pick()).port).toBe(5001)
    expect([selector.secondsWithout(), seen]).toEqual([0, ['failover', 'restored after 6.5 s']])
  })
})
