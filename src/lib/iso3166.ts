import countryList from '../../data/iso/countries.json' with {type: 'json'}
import regionLists from '../../data/iso/regions.json' with {type: 'json'}

/** ISO 3166-1 entry as the balance API lists it. */
export interface Country {
  alpha_2_code: string
  short_name: string
}

/** ISO 3166-2 entry; `postal_abbreviation` is the part of the code after the hyphen (US-CA → CA). */
export interface Region {
  region_code: string
  name: string
  alpha_2_code: string
  postal_abbreviation: string
}

const countries: readonly Country[] = countryList
const regionsByCountry: Readonly<Record<string, readonly Region[] | undefined>> = regionLists
const countryCodes = new Set(countries.map((c) => c.alpha_2_code))
const regionCodes = new Set(Object.values(regionsByCountry).flatMap((list) => (list ?? []).map((r) => r.region_code)))

export function listCountries(): readonly Country[] {
  return countries
}

export function isCountry(code: string): boolean {
  return countryCodes.has(code)
}

/** The regions of a country (possibly none); undefined when the country code is unknown. */
export function regionsOf(countryCode: string): readonly Region[] | undefined {
  if (!countryCodes.has(countryCode)) return undefined
  return regionsByCountry[countryCode] ?? []
}

/** True when `regionCode` is an ISO 3166-2 code of `countryCode`. */
export function isRegionOf(regionCode: string, countryCode: string): boolean {
  return regionCode.startsWith(`${countryCode}-`) && regionCodes.has(regionCode)
}
