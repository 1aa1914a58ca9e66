import {describe, expect, it} from 'vitest'
import {type HashCaller, HashQueue, HashQueueFull, type HashTurn} from '../../src/registry/hash-queue.js'

/**
 * The fair hash queue on its own: each "hash" is a promise the test finishes when it chooses, so
 * who runs, in what order, and who is refused are exact, with no timing involved.
 */

interface Job {
  name: string
  /** Settles with the work's outcome: 'done', 'stand-in' (answered without a slot), or 'refused' when the queue turned it away. */
  outcome: Promise<'done' | 'stand-in' | 'refused'>
}

function harness(slots: number, queueLength: number) {
  let clock = 0
  /** The stand-ins' waits, in milliseconds, each settled when the test says. */
  const sleeps: {ms: number; end: () => void}[] = []
  const sleep = (ms: number) => new Promise<void>((end) => sleeps.push({ms, end}))
  const queue = new HashQueue({slots, queueLength, halfLifeSeconds: 60, now: () => clock, sleep, random: () => 0.5})
  const started: string[] = []
  const standIns: string[] = []
  const finishers = new Map<string, () => void>()
  const submit = (name: string, caller: Partial<HashCaller> & {address: string}): Job => {
    const work = (turn: HashTurn) =>
      turn === 'stand-in'
        ? Promise.resolve(void standIns.push(name)).then(() => 'stand-in' as const)
        : new Promise<'done'>((resolve) => {
            started.push(name)
            finishers.set(name, () => resolve('done'))
          })
    const outcome = queue.run({member: 'm@x', trusted: false, ...caller}, work).then(
      (result) => result,
      (error) => {
        if (error instanceof HashQueueFull) return 'refused' as const
        throw error
      },
    )
    return {name, outcome}
  }
  /** Finishes a running hash and lets the queue hand its slot on. */
  const finish = async (name: string) => {
    const done = finishers.get(name)
    if (!done) throw new Error(`${name} is not running (started: ${started.join(', ')})`)
    finishers.delete(name)
    done()
    await new Promise((resolve) => setImmediate(resolve))
  }
  const settle = () => new Promise((resolve) => setImmediate(resolve))
  return {
    queue,
    started,
    standIns,
    sleeps,
    submit,
    finish,
    settle,
    advance: (ms: number) => {
      clock += ms
    },
  }
}

describe('the fair hash queue', () => {
  it('runs at most its slots at once; the rest wait and run as slots free up', async () => {
    const h = harness(2, 10)
    for (const name of ['a1', 'a2', 'a3', 'a4']) h.submit(name, {address: '10.0.0.1'})
    await h.settle()
    expect(h.started).toEqual(['a1', 'a2'])
    expect(h.queue.counts()).toEqual({running: 2, waiting: 2, standIns: 0})
    await h.finish('a1')
    expect(h.started).toEqual(['a1', 'a2', 'a3'])
    await h.finish('a2')
    await h.finish('a3')
    await h.finish('a4')
    expect(h.queue.counts()).toEqual({running: 0, waiting: 0, standIns: 0})
  })

  it('serves addresses that keep asking in turn, a round robin, not first come first served', async () => {
    const h = harness(1, 20)
    h.submit('first', {address: '10.0.0.9'})
    // Three from A arrive before three from B.
    for (const name of ['a1', 'a2', 'a3']) h.submit(name, {address: '10.0.0.1'})
    for (const name of ['b1', 'b2', 'b3']) h.submit(name, {address: '10.0.0.2'})
    await h.settle()
    for (const name of ['first', 'a1', 'b1', 'a2', 'b2', 'a3']) await h.finish(name)
    expect(h.started).toEqual(['first', 'a1', 'b1', 'a2', 'b2', 'a3', 'b3'])
  })

  it('a caller who rarely hashes goes before a flood that keeps hashing', async () => {
    const h = harness(1, 40)
    const flood = Array.from({length: 12}, (_, i) => `10.1.0.${i + 1}`)
    // The flood has kept the slot busy: each address has had several hashes.
    let n = 0
    for (let round = 0; round < 3; round++) {
      for (const address of flood) h.submit(`f${n++}`, {address})
    }
    await h.settle()
    for (let i = 0; i < 24; i++) await h.finish(h.started.at(-1)!)
    // Now a member at an address of its own: it runs next, before the twelve flood hashes waiting.
    h.submit('member', {address: '192.0.2.7', member: 'own@x'})
    await h.settle()
    expect(h.queue.counts().waiting).toBe(12)
    await h.finish(h.started.at(-1)!)
    expect(h.started.at(-1)).toBe('member')
  })

  it("within one address (a hospital's exit), members take turns", async () => {
    const h = harness(1, 20)
    h.submit('first', {address: '10.0.0.9'})
    for (const name of ['x1', 'x2', 'x3']) h.submit(name, {address: '10.0.0.1', member: 'x@x'})
    for (const name of ['y1', 'y2']) h.submit(name, {address: '10.0.0.1', member: 'y@x'})
    await h.settle()
    for (const name of ['first', 'x1', 'y1', 'x2', 'y2']) await h.finish(name)
    expect(h.started).toEqual(['first', 'x1', 'y1', 'x2', 'y2', 'x3'])
  })

  it('a browser with a device cookie goes before everyone, even a quiet caller', async () => {
    const h = harness(1, 20)
    h.submit('busy', {address: '10.0.0.1'})
    h.submit('quiet', {address: '10.0.0.2'})
    h.submit('trusted', {address: '10.0.0.1', trusted: true})
    await h.settle()
    await h.finish('busy')
    expect(h.started).toEqual(['busy', 'trusted'])
  })

  it('a full queue refuses a newcomer no better than those waiting, at once and without hashing', async () => {
    const h = harness(1, 2)
    h.submit('running', {address: '10.0.0.1'})
    const waiting = [h.submit('w1', {address: '10.0.0.2'}), h.submit('w2', {address: '10.0.0.3'})]
    const newcomer = h.submit('late', {address: '10.0.0.4'})
    expect(await newcomer.outcome).toBe('refused')
    await h.finish('running')
    await h.finish('w1')
    await h.finish('w2')
    expect(await Promise.all(waiting.map((job) => job.outcome))).toEqual(['done', 'done'])
    expect(h.started).toEqual(['running', 'w1', 'w2'])
  })

  it("a quiet newcomer pushes the busiest address's last waiter out of a full queue, which is refused unhashed", async () => {
    const h = harness(1, 3)
    // Address A has hashed twice already and waits with two more; B waits with one.
    h.submit('a0', {address: '10.0.0.1'})
    await h.settle()
    await h.finish('a0')
    h.submit('a1', {address: '10.0.0.1'})
    const a2 = h.submit('a2', {address: '10.0.0.1'})
    const a3 = h.submit('a3', {address: '10.0.0.1'})
    h.submit('b1', {address: '10.0.0.2'})
    await h.settle()
    expect(h.started).toEqual(['a0', 'a1'])
    expect(h.queue.counts()).toEqual({running: 1, waiting: 3, standIns: 0})
    const member = h.submit('member', {address: '192.0.2.7'})
    // a3, the last in line (its address has had the most), goes; a2 stays.
    expect(await a3.outcome).toBe('refused')
    // Then the quiet ones by arrival, then A.
    for (const name of ['a1', 'b1', 'member', 'a2']) await h.finish(name)
    expect(h.started).toEqual(['a0', 'a1', 'b1', 'member', 'a2'])
    expect(await a2.outcome).toBe('done')
    expect(await member.outcome).toBe('done')
  })

  it('a browser with a device cookie pushes out a waiter without one; those with one are never pushed out', async () => {
    const h = harness(1, 1)
    h.submit('running', {address: '10.0.0.1'})
    const plain = h.submit('plain', {address: '10.0.0.2'})
    const trusted = h.submit('trusted', {address: '10.0.0.3', trusted: true})
    expect(await plain.outcome).toBe('refused')
    const another = h.submit('another', {address: '10.0.0.4', trusted: true})
    expect(await another.outcome).toBe('refused')
    await h.finish('running')
    await h.finish('trusted')
    expect(await trusted.outcome).toBe('done')
  })

  it('forgets: an address that flooded an hour ago is an ordinary caller again', async () => {
    const h = harness(1, 20)
    for (let i = 0; i < 5; i++) {
      h.submit(`old${i}`, {address: '10.0.0.1'})
      await h.settle()
      await h.finish(`old${i}`)
    }
    h.advance(3600_000)
    h.submit('running', {address: '10.0.0.3'})
    h.submit('again', {address: '10.0.0.1'})
    h.submit('other', {address: '10.0.0.2'})
    await h.settle()
    await h.finish('running')
    // Sixty half-lives later both count nothing: first come, first served.
    expect(h.started.at(-1)).toBe('again')
  })

  it('a hash that fails frees its slot for the next', async () => {
    const queue = new HashQueue({slots: 1, queueLength: 4, halfLifeSeconds: 60})
    const failing = queue.run({address: 'a', member: 'm', trusted: false}, () => Promise.reject(new Error('store down')))
    const next = queue.run({address: 'b', member: 'm', trusted: false}, async () => 'ran')
    await expect(failing).rejects.toThrow('store down')
    expect(await next).toBe('ran')
    expect(queue.counts()).toEqual({running: 0, waiting: 0, standIns: 0})
  })

  describe('unknown e-mails (a made-up e-mail has only a decoy hash to run)', () => {
    const unknown = (n: number) => ({address: `10.9.${Math.floor(n / 250)}.${(n % 250) + 1}`, member: `nobody-${n}@x`, known: false})

    it('run their decoy in a free slot when nobody waits, as any sign-in', async () => {
      const h = harness(2, 16)
      const job = h.submit('u0', unknown(0))
      await h.settle()
      expect(h.started).toEqual(['u0'])
      await h.finish('u0')
      expect(await job.outcome).toBe('done')
    })

    it('under pressure take no slot and no place in line: a member from a fresh address, a busy one or the same exit gets the next slot', async () => {
      // 24 in flight from 200 addresses, the flood security round five measured: the slots are
      // busy with decoys and every newcomer finds them so.
      const h = harness(2, 16)
      h.submit('u0', unknown(0))
      h.submit('u1', unknown(1))
      const flood = Array.from({length: 200}, (_, n) => h.submit(`u${n + 2}`, unknown(n + 2)))
      await h.settle()
      expect(h.started).toEqual(['u0', 'u1'])
      expect(h.queue.counts()).toEqual({running: 2, waiting: 0, standIns: 200})
      // Members: one at an address of its own, one at an address the flood uses (a shared exit).
      const fresh = h.submit('fresh', {address: '192.0.2.7', member: 'ana@x'})
      const shared = h.submit('shared', {address: unknown(5).address, member: 'ben@x'})
      await h.settle()
      expect(h.queue.counts().waiting).toBe(2)
      await h.finish('u0')
      await h.finish('u1')
      expect(h.started).toEqual(['u0', 'u1', 'fresh', 'shared'])
      await h.finish('fresh')
      await h.finish('shared')
      expect(await fresh.outcome).toBe('done')
      expect(await shared.outcome).toBe('done')
      // The stand-ins are answered once their time has passed (the wait, then the hash), never refused.
      for (const {end} of h.sleeps.splice(0)) end()
      await h.settle()
      expect(h.standIns).toHaveLength(200)
      for (const {end} of h.sleeps.splice(0)) end()
      expect(new Set(await Promise.all(flood.map((job) => job.outcome)))).toEqual(new Set(['stand-in']))
    })

    it('never push a member out of a full line; a full line refuses them as it would a member', async () => {
      const h = harness(1, 2)
      h.submit('running', {address: '10.0.0.1', member: 'a@x'})
      const waiting = [h.submit('w1', {address: '10.0.0.2', member: 'b@x'}), h.submit('w2', {address: '10.0.0.3', member: 'c@x'})]
      await h.settle()
      // A member from a quiet address would be refused here (no waiter's claim is worse by a hash):
      // so is an unknown e-mail from one, with the same answer.
      expect(await h.submit('member', {address: '10.0.0.4', member: 'd@x'}).outcome).toBe('refused')
      expect(await h.submit('made-up', {...unknown(1), address: '10.0.0.5'}).outcome).toBe('refused')
      await h.finish('running')
      await h.finish('w1')
      await h.finish('w2')
      expect(await Promise.all(waiting.map((job) => job.outcome))).toEqual(['done', 'done'])
    })

    it("are answered after a member's time: the running hash's rest, a hash per round of waiters before it, then one hash", async () => {
      const h = harness(2, 16)
      // Two hashes of 600 ms teach the queue what a hash takes.
      for (const name of ['k1', 'k2']) h.submit(name, {address: '10.0.0.1', member: `${name}@x`})
      await h.settle()
      h.advance(600)
      await h.finish('k1')
      await h.finish('k2')
      // Two run (one began 200 ms ago, one just now), three members wait from the address that hashed.
      h.submit('r1', {address: '10.0.0.2', member: 'r1@x'})
      h.advance(200)
      h.submit('r2', {address: '10.0.0.3', member: 'r2@x'})
      for (const n of [1, 2, 3]) h.submit(`w${n}`, {address: '10.0.0.1', member: `w${n}@x`})
      await h.settle()
      // From the waiters' own address, all three go before it (they came first): slots free in
      // 400 and 600 ms, the three waiters take them and the first again, so its slot comes at
      // 1,200 ms; then its own hash (600 ms at the middle of its ±15 % spread).
      h.submit('u-busy', {address: '10.0.0.1', member: 'u@x', known: false})
      // From a quiet address, nobody goes before it: the running hash's rest, then its own.
      h.submit('u-quiet', {address: '192.0.2.9', member: 'v@x', known: false})
      await h.settle()
      // First each one's wait for a slot, then (the attempt counted meanwhile) its hash's time.
      expect(h.sleeps.map(({ms}) => Math.round(ms))).toEqual([600 + 600, 400])
      expect(h.queue.counts()).toEqual({running: 2, waiting: 3, standIns: 2})
      for (const {end} of h.sleeps.splice(0)) end()
      await h.settle()
      expect(h.sleeps.map(({ms}) => Math.round(ms))).toEqual([600, 600])
    })
  })
})
