import {describe, expect, it} from 'vitest'
import {type HashCaller, HashQueue, HashQueueFull} from '../../src/registry/hash-queue.js'

/**
 * The fair hash queue on its own: each "hash" is a promise the test finishes when it chooses, so
 * who runs, in what order, and who is refused are exact, with no timing involved.
 */

interface Job {
  name: string
  /** Settles with the work's outcome: 'done', or 'refused' when the queue turned it away. */
  outcome: Promise<'done' | 'refused'>
}

function harness(slots: number, queueLength: number) {
  let clock = 0
  const queue = new HashQueue({slots, queueLength, halfLifeSeconds: 60, now: () => clock})
  const started: string[] = []
  const finishers = new Map<string, () => void>()
  const submit = (name: string, caller: Partial<HashCaller> & {address: string}): Job => {
    const work = () =>
      new Promise<void>((resolve) => {
        started.push(name)
        finishers.set(name, resolve)
      })
    const outcome = queue.run({member: 'm@x', trusted: false, ...caller}, work).then(
      () => 'done' as const,
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
    expect(h.queue.counts()).toEqual({running: 2, waiting: 2})
    await h.finish('a1')
    expect(h.started).toEqual(['a1', 'a2', 'a3'])
    await h.finish('a2')
    await h.finish('a3')
    await h.finish('a4')
    expect(h.queue.counts()).toEqual({running: 0, waiting: 0})
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
    expect(h.queue.counts()).toEqual({running: 1, waiting: 3})
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
    expect(queue.counts()).toEqual({running: 0, waiting: 0})
  })
})
