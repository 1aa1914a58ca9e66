/**
 * What a promise was refused with, checked to be a `kind` (an AppError, or any Error). A promise
 * that is kept, or refused with something else, fails the test with what it did instead.
 */
export async function rejectionOf<E extends Error>(promise: Promise<unknown>, kind: abstract new (...args: never[]) => E): Promise<E> {
  const outcome = await promise.then(
    (value: unknown) => ({kept: true as const, value}),
    (error: unknown) => ({kept: false as const, error}),
  )
  if (outcome.kept) throw new Error(`expected a refusal (${kind.name}), but the promise was kept with ${String(outcome.value)}`)
  if (!(outcome.error instanceof kind)) throw new Error(`expected a ${kind.name}, got ${String(outcome.error)}`)
  return outcome.error
}
