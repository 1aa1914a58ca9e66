import regionLists from '../../data/iso/regions.json' with {type: 'json'}
import {isCountry} from './iso3166.js'

/*
 * ISO 3166-2 regions, apart from the countries (iso3166.ts): the list is half a megabyte, and only
 * interface C's region checks and region listing need it, so commands that never touch a region
 * (list-clients, add-member) never load it.
 */

/** ISO 3166-2 entry; `postal_abbreviation` is the part of the code after the hyphen (US-CA → CA). */
export interface Region {
  region_code: string
  name: string
  alpha_2_code: string
  postal_abbreviation: string
}

const regionsByCountry: Readonly<Record<string, readonly Region[] | undefined>> = regionLists
const regionCodes = new Set(Object.values(regionsByCountry).flatMap((list) => (list ?? []).map((r) => r.region_code)))

/** The regions of a country (possibly none); undefined when the country code is unknown. */
export function regionsOf(countryCode: string): readonly Region[] | undefined {
  if (!isCountry(countryCode)) return undefined
  return regionsByCountry[countryCode] ?? []
}

/** True when `regionCode` is an ISO 3166-2 code of `countryCode`. */
export function isRegionOf(regionCode: string, countryCode: string): boolean {
  return regionCode.startsWith(`${countryCode}-`) && regionCodes.has(regionCode)
}
