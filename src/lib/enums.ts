/**
 * The one rule for enumerated values, on the command line and over HTTP alike: any letter case
 * is accepted, and the value is stored and printed in its canonical spelling (PAYPAL, HONORARIUM,
 * Completed, active). Returns undefined for a value that is none of them.
 */
export function canonical<T extends string>(value: string | undefined, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined
  const wanted = value.trim().toLowerCase()
  return allowed.find((candidate) => candidate.toLowerCase() === wanted)
}
