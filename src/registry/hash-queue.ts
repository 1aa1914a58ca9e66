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
 */

/** Who asks for a hash, as the queue tells callers apart. */
export interface HashCaller {
  /** The caller's address as the guessing limits key it (an IPv6 address by its /64). */
  address: string
  /** The member the e-mail names (known or not), normalised. */
  member: string
  /** The browser holds this member's device cookie: it goes before everyone else. */
  trusted: boolean
}

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
}

export class HashQueue {
  readonly slots: number
  readonly queueLength: number
  private running = 0
  private seq = 0
  private readonly waiting: Waiter[] = []
  private readonly byAddress: RecentUse
  private readonly byMember: RecentUse

  constructor(options: HashQueueOptions) {
    this.slots = options.slots
    this.queueLength = options.queueLength
    const now = options.now ?? (() => performance.now())
    this.byAddress = new RecentUse(options.halfLifeSeconds * 1000, now)
    this.byMember = new RecentUse(options.halfLifeSeconds * 1000, now)
  }

  /** Hashes running and waiting now, for the metrics. */
  counts(): {running: number; waiting: number} {
    return {running: this.running, waiting: this.waiting.length}
  }

  /**
   * Runs `work` (which hashes) once a slot is the caller's. Throws HashQueueFull, with `work`
   * never run, when the queue is full of callers with a better claim, at once or later.
   */
  async run<T>(caller: HashCaller, work: () => Promise<T>): Promise<T> {
    if (this.running < this.slots && this.waiting.length === 0) this.start(caller)
    else await this.wait(caller)
    try {
      return await work()
    } finally {
      this.running -= 1
      this.next()
    }
  }

  private start(caller: HashCaller): void {
    this.running += 1
    this.byAddress.add(caller.address)
    this.byMember.add(caller.member)
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
