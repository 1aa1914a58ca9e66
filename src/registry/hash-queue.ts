/**
 * The process's password hashes, shared fairly among the callers who want them.
 *
 * A password hash is the costliest thing a request can make this service do (scrypt: tenths of a
 * second of a thread, 128 MiB), and anybody may ask for one by posting the sign-in form, with a
 * made-up e-mail too (that costs a decoy hash, so timing never tells which e-mails are members).
 * Without a bound, a flood from a dozen addresses queues every member's sign-in behind its
 * guesses in Node's thread pool, first come first served.
 *
 * So at most `slots` hashes run at once, and the others wait here, at most `queueLength` of them.
 * Which waiter goes next is fair queueing by recent use:
 *
 * - A browser holding the member's device cookie (it signed in before) goes before everyone.
 * - Then the waiter whose address (an IPv6 caller by its /64) has had the fewest hashes lately,
 *   a count that halves every `halfLifeSeconds`; among waiters from one address, the member with
 *   the fewest hashes lately; then (counts within half a hash of each other being equal) the
 *   earliest. Callers that keep hashing are thus served in turn, a round robin, and a caller
 *   that hashes now and then goes before all of them: a member signing in during a flood waits
 *   for one hash in flight, not for the flood.
 * - When the queue is full, a newcomer whose address has had fewer hashes lately (by at least one)
 *   than the last waiter in line's pushes that waiter out; else the newcomer is refused. Whoever is
 *   refused, at once or pushed out, has had nothing hashed: the caller answers 429.
 *
 * Only e-mails that name a member wait in line. An unknown e-mail has no password to check, only a
 * decoy hash that keeps its answer as slow as a wrong password's. It runs that decoy when a slot is
 * free and nobody waits; otherwise (the queue is under pressure) it takes no slot and no place in
 * line: it is answered after the time a member's attempt arriving with it would take (its wait
 * for a slot, from the hashes running and the waiters who would go before it, then one hash, as
 * long as the recent hashes took). So a flood of made-up e-mails, from however many addresses,
 * never stands between a member and the next free slot, and its answers keep the timing and
 * the refusals (a full queue refuses it as it would a member) of a wrong password.
 */

/** Who asks for a hash, as the queue tells callers apart. */
export interface HashCaller {
  /** The caller's address as the guessing limits key it (an IPv6 address by its /64). */
  address: string
  /** The member the e-mail names (known or not), normalised. */
  member: string
  /** The browser holds this member's device cookie: it goes before everyone else. */
  trusted: boolean
  /**
   * The e-mail names a member (false: a made-up one, checked against a decoy). Unknown e-mails
   * never wait in line; undefined counts as known.
   */
  known?: boolean | undefined
}

/** How a caller's work is run: in a slot (its hash runs), or as a stand-in with no hash. */
export type HashTurn = 'slot' | 'stand-in'

/** Refused by the queue, at once or pushed out of it: the caller answers 429. */
export class HashQueueFull extends Error {
  constructor() {
    super('too many password checks waiting')
  }
}

interface Waiter {
  caller: HashCaller
  /** Arrival order, the last tie-break. */
  seq: number
  grant: () => void
  refuse: (error: Error) => void
}

/** A count that halves every half-life, kept per key and decayed when read. */
class RecentUse {
  private readonly counts = new Map<string, {value: number; at: number}>()

  constructor(
    private readonly halfLifeMs: number,
    private readonly now: () => number,
  ) {}

  of(key: string): number {
    const entry = this.counts.get(key)
    return entry ? entry.value * 0.5 ** ((this.now() - entry.at) / this.halfLifeMs) : 0
  }

  add(key: string): void {
    const at = this.now()
    this.counts.set(key, {value: this.of(key) + 1, at})
    // Keys of callers gone quiet would pile up (every address of a botnet): when there are many,
    // those worth less than a twentieth of a hash go.
    if (this.counts.size > 4096) {
      for (const [other, entry] of this.counts) if (entry.value * 0.5 ** ((at - entry.at) / this.halfLifeMs) < 0.05) this.counts.delete(other)
    }
  }
}

export interface HashQueueOptions {
  /** Hashes running at once. */
  slots: number
  /** Hashes waiting for a slot; a caller beyond them is refused. */
  queueLength: number
  /** How fast a caller's recent hashes are forgotten. */
  halfLifeSeconds: number
  /** Milliseconds, for the recent-use counts (tests pass a fake). */
  now?: () => number
  /** Waits `ms` milliseconds: a stand-in's answer time (tests pass a fake). */
  sleep?: (ms: number) => Promise<void>
  /** A number in [0, 1) for the stand-in's spread (tests pass a fixed one). */
  random?: () => number
}

/** What one hash is taken to cost before any has finished: scrypt at the shipped cost on one core. */
const FIRST_GUESS_MS = 500

export class HashQueue {
  readonly slots: number
  readonly queueLength: number
  private running = 0
  private seq = 0
  private readonly waiting: Waiter[] = []
  private readonly byAddress: RecentUse
  private readonly byMember: RecentUse
  private readonly now: () => number
  private readonly sleep: (ms: number) => Promise<void>
  private readonly random: () => number
  /** When each running hash began, oldest first. */
  private readonly startedAt: number[] = []
  /** What a hash has taken lately (an average that follows the recent ones), or undefined before the first. */
  private hashMs: number | undefined
  private standIns = 0

  constructor(options: HashQueueOptions) {
    this.slots = options.slots
    this.queueLength = options.queueLength
    this.now = options.now ?? (() => performance.now())
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)))
    this.random = options.random ?? Math.random
    this.byAddress = new RecentUse(options.halfLifeSeconds * 1000, this.now)
    this.byMember = new RecentUse(options.halfLifeSeconds * 1000, this.now)
  }

  /** Hashes running and waiting now, and unknown e-mails being answered without one, for the metrics. */
  counts(): {running: number; waiting: number; standIns: number} {
    return {running: this.running, waiting: this.waiting.length, standIns: this.standIns}
  }

  /**
   * Runs `work` once a slot is the caller's, with 'slot' (it hashes). An unknown e-mail that finds
   * no free slot runs `work` at once with 'stand-in' (it must not hash) and is answered no sooner
   * than a member's attempt arriving now would be. Throws HashQueueFull, with `work` never run,
   * when the queue is full of callers with a better claim, at once or later.
   */
  async run<T>(caller: HashCaller, work: (turn: HashTurn) => Promise<T>): Promise<T> {
    if (this.running < this.slots && this.waiting.length === 0) this.start(caller)
    else if (caller.known === false) return this.standIn(caller, work)
    else await this.wait(caller)
    const began = this.now()
    this.startedAt.push(began)
    try {
      return await work('slot')
    } finally {
      this.startedAt.splice(this.startedAt.indexOf(began), 1)
      this.took(this.now() - began)
      this.running -= 1
      this.next()
    }
  }

  private start(caller: HashCaller): void {
    this.running += 1
    this.use(caller)
  }

  private use(caller: HashCaller): void {
    this.byAddress.add(caller.address)
    this.byMember.add(caller.member)
  }

  /** Follows what hashes take: each new one weighs a quarter. */
  private took(ms: number): void {
    this.hashMs = this.hashMs === undefined ? ms : 0.75 * this.hashMs + 0.25 * ms
  }

  /**
   * An unknown e-mail under pressure: refused as a member would be by a full queue, else answered
   * without a slot after the time a member's attempt would take, counted as a hash by its
   * address and e-mail (so the line treats its address as if it had hashed).
   */
  private async standIn<T>(caller: HashCaller, work: (turn: HashTurn) => Promise<T>): Promise<T> {
    if (this.waiting.length >= this.queueLength && this.pushedOutBy(caller) === undefined) throw new HashQueueFull()
    const {wait, hash} = this.memberTime(caller)
    this.use(caller)
    this.standIns += 1
    try {
      // In a member's order: the wait for a slot, then the attempt counted (a lock refuses it
      // there, as it would a member's once its slot came), then the hash's time.
      await this.sleep(wait)
      const result = await work('stand-in')
      await this.sleep(hash)
      return result
    } finally {
      this.standIns -= 1
    }
  }

  /**
   * How long a member's attempt from `caller`'s address arriving now would take: the wait until a
   * slot is its (the running hashes' remaining time, and one hash for each round of waiters who
   * would go before it), then its own hash, spread by ±15 % as hashes themselves vary.
   */
  memberTime(caller: HashCaller): {wait: number; hash: number} {
    const hash = this.hashMs ?? Math.max(FIRST_GUESS_MS, ...this.startedAt.map((at) => this.now() - at))
    const newcomer: Waiter = {caller: {...caller, known: true}, seq: Number.POSITIVE_INFINITY, grant: () => undefined, refuse: () => undefined}
    const ahead = this.waiting.filter((waiter) => this.before(waiter, newcomer)).length
    const remaining = this.startedAt.map((at) => Math.max(0, hash - (this.now() - at))).sort((a, b) => a - b)
    const free = this.running < this.slots ? 0 : (remaining[ahead % this.slots] ?? 0)
    return {wait: free + Math.floor(ahead / this.slots) * hash, hash: hash * (0.85 + 0.3 * this.random())}
  }

  private wait(caller: HashCaller): Promise<void> {
    if (this.waiting.length >= this.queueLength) {
      const victim = this.pushedOutBy(caller)
      if (victim === undefined) return Promise.reject(new HashQueueFull())
      this.waiting.splice(this.waiting.indexOf(victim), 1)
      victim.refuse(new HashQueueFull())
    }
    return new Promise((grant, refuse) => {
      this.waiting.push({caller, seq: this.seq++, grant, refuse})
    })
  }

  /** Whether `a` goes before `b`. Recent uses within half a hash of each other are a tie. */
  private before(a: Waiter, b: Waiter): boolean {
    if (a.caller.trusted !== b.caller.trusted) return a.caller.trusted
    const [left, right] = this.claims(a.caller, b.caller)
    return Math.abs(left - right) >= 0.5 ? left < right : a.seq < b.seq
  }

  /** The two callers' recent hashes, by address, or by member when they share one. */
  private claims(a: HashCaller, b: HashCaller): [number, number] {
    return a.address !== b.address ? [this.byAddress.of(a.address), this.byAddress.of(b.address)] : [this.byMember.of(a.member), this.byMember.of(b.member)]
  }

  /** The waiter a newcomer pushes out of a full queue: the last in line, if the newcomer's claim is better by a hash. */
  private pushedOutBy(caller: HashCaller): Waiter | undefined {
    let last: Waiter | undefined
    for (const waiter of this.waiting) if (last === undefined || this.before(last, waiter)) last = waiter
    if (last === undefined) return undefined
    if (last.caller.trusted) return undefined
    if (caller.trusted) return last
    const [newcomer, waiter] = this.claims(caller, last.caller)
    return waiter >= newcomer + 1 ? last : undefined
  }

  /** Gives free slots to the first waiters in line. */
  private next(): void {
    while (this.running < this.slots && this.waiting.length > 0) {
      let first = 0
      for (let i = 1; i < this.waiting.length; i++) if (this.before(this.waiting[i]!, this.waiting[first]!)) first = i
      const [waiter] = this.waiting.splice(first, 1)
      this.start(waiter!.caller)
      waiter!.grant()
    }
  }
}
