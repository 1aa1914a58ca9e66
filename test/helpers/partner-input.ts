import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

/**
 * An open specialty quota for Cardiology in California, as push-quota reads it from a file; a test
 * overrides what it checks (its id, limit, URL, regions, closing time).
 */
export function specialtyQuota(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    quota_id: 'Q1',
    status: 'open',
    limit: 2,
    incidence_rate: 0.35,
    type: 'specialty',
    matching_specialties: ['Cardiology'],
    matching_regions: ['CA'],
    cost_per_complete: '140.00',
    honoraria: 90.5,
    url: 'https://survey.example/s?npi=<npi>',
    closes_at: '2030-12-31T23:00:00Z',
    ...overrides,
  }
}

/** Writes specialtyQuota(overrides) to DIR/quota.json for push-quota --file; returns the path. */
export function specialtyQuotaFile(dir: string, overrides: Record<string, unknown> = {}): string {
  const file = join(dir, 'quota.json')
  writeFileSync(file, JSON.stringify(specialtyQuota(overrides)))
  return file
}
