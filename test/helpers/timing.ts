/*
 * Tests that bound how long something takes run on loaded machines too (a second suite beside
 * them, load twice the cores), where every step takes several times what it takes alone. So a
 * bound is never a fixed number of milliseconds alone: it scales with a baseline the same test
 * measured a moment before, on the machine as loaded as it is then.
 */

/** Milliseconds `step` takes now: a baseline for a bound in the same test. */
export async function timeOf(step: () => unknown): Promise<number> {
  const started = performance.now()
  await step()
  return performance.now() - started
}

/**
 * The most a step may take: `times` baselines, and never less than `floorMs`, what it may take
 * on a quiet machine. A step that waits for a fixed deadline instead of an event (a poll, a
 * cache's lifetime) still fails it on a quiet machine.
 */
export function scaledBound(floorMs: number, baselineMs: number, times = 20): number {
  return Math.max(floorMs, times * baselineMs)
}
