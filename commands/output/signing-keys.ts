import type {SigningKeyView} from '../../src/interfaces/signon/signing-key-list.js'
import type {SigningKeyRotation} from '../../src/interfaces/signon/signing-keys.js'
import {formatTable} from '../../src/lib/table.js'

/** Human output of rotate-signing-key and list-signing-keys. */

export function rotationText(rotation: SigningKeyRotation): string {
  const lines = [`New ID-token signing keys, published now: ${rotation.current.map((key) => `${key.kid} (${key.alg})`).join(', ')}.`]
  const from = rotation.current[0]?.signs_from
  if (rotation.retired.length === 0) lines.push(`No key was in use before: these sign from ${from}.`)
  else {
    lines.push(`They sign from ${from}. The keys they replace sign until then, and stay published for the ID tokens they signed:`)
    for (const key of rotation.retired) lines.push(`  ${key.kid}  signs until ${key.signs_until}, published until ${key.published_until}`)
  }
  return lines.join('\n')
}

export function signingKeyTable(keys: SigningKeyView[]): string {
  if (keys.length === 0) return 'No signing keys yet: the first ID token of each algorithm makes one (or run rotate-signing-key).'
  return formatTable(keys, [
    {header: 'kid', get: (k) => k.kid},
    {header: 'alg', get: (k) => k.alg},
    {header: 'status', get: (k) => k.status},
    {header: 'created_at', get: (k) => k.created_at},
    {header: 'retired_at', get: (k) => k.retired_at},
    {header: 'published_until', get: (k) => k.published_until},
  ])
}
