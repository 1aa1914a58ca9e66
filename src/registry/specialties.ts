import conversations from '../../data/conversations/vocabulary.json' with {type: 'json'}
import demographics from '../../data/pulses/demographics.json' with {type: 'json'}

/**
 * The primary specialties a member may have: every one the demo's pulses and conversations use
 * (the seeds draw from these lists), so a member added by hand matches pulse screeners and
 * partner quotas (`matching_specialties`) the way seeded ones do. A free-text value such as a typo
 * would silently match nothing there, so add-member checks against this list.
 */
export const SPECIALTIES: readonly string[] = [...new Set([...demographics.specialties, ...conversations.specialties])].sort()

/** The list's spelling of `value`, matched case-insensitively and ignoring surrounding spaces. */
export function canonicalSpecialty(value: string): string | undefined {
  const wanted = value.trim().replace(/\s+/g, ' ').toLowerCase()
  return SPECIALTIES.find((s) => s.toLowerCase() === wanted)
}

/** Why `value` is refused, naming a few specialties close to it (or a few common ones). */
export function specialtyProblem(value: string): string | undefined {
  if (canonicalSpecialty(value) !== undefined) return undefined
  const wanted = value.trim().toLowerCase()
  // A word of the list starting like the value ("cardio", "onco") or inside it ("pediatric surgery").
  const start = wanted.slice(0, 4)
  const near =
    start.length >= 3
      ? SPECIALTIES.filter((s) =>
          s
            .toLowerCase()
            .split(' ')
            .some((word) => word.startsWith(start) || (word.length > 4 && wanted.includes(word))),
        )
      : []
  const examples = (near.length > 0 ? near : ['Cardiology', 'Family Medicine', 'Neurology', 'Oncology', 'Pediatrics']).slice(0, 5)
  return `"${value.trim().slice(0, 60)}" is not a known specialty (for example ${examples.join(', ')}; ${SPECIALTIES.length} in all, listed in add-member --help)`
}
