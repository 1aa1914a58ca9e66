import {Counter, Gauge, Histogram, type Registry} from 'prom-client'
import {type Child, METRICS_PREFIX, type MetricKit} from './define.js'

/** The kit that registers into `registry`. */
export function kitFor(registry: Registry): MetricKit {
  const registers = [registry]
  const name = (rest: string) => `${METRICS_PREFIX}${rest}`
  const counter = <T extends string>(rest: string, help: string, labelNames: readonly T[] = []) => new Counter<T>({name: name(rest), help, labelNames, registers})
  return {
    counter,
    single(rest, help) {
      const made = counter(rest, help)
      made.inc(0)
      return made
    },
    children: (rest, help, label, values) => childrenOf(counter(rest, help, [label]), values),
    histogram: (rest, help, buckets) => new Histogram({name: name(rest), help, buckets: [...buckets], registers}),
    scraped: (options, read) => scraped({...options, name: name(options.name), registers}, read),
  }
}

/** A counter's child for every value of its one label, each made at 0. */
function childrenOf<V extends string>(counter: Counter<string>, values: readonly V[]): Record<V, Child> {
  const out = {} as Record<V, Child>
  for (const value of values) {
    const child = counter.labels(value)
    child.inc(0)
    out[value] = child
  }
  return out
}

function scraped<T extends string>(
  options: {name: string; help: string; labelNames?: readonly T[]; registers: Registry[]},
  read: (gauge: Gauge<T>) => Promise<void> | void,
): Gauge<T> {
  return new Gauge<T>({
    ...options,
    async collect() {
      try {
        await read(this)
      } catch {
        this.reset()
      }
    },
  })
}
