import countryList from '../../data/iso/countries.json' with {type: 'json'}

/** ISO 3166-1 entry as the balance API lists it. */
export interface Country {
  alpha_2_code: string
  short_name: string
}

const countries: readonly Country[] = countryList
const countryCodes = new Set(countries.map((c) => c.alpha_2_code))

export function listCountries(): readonly Country[] {
  return countries
}

export function isCountry(code: string): boolean {
  return countryCodes.has(code)
}
