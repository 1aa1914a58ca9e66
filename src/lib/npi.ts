/**
 * NPI check: 10 digits whose last digit is the Luhn check digit of "80840" + the first nine
 * (the card-issuer prefix the NPI standard prescribes).
 */
export function isValidNpi(npi: string): boolean {
  if (!/^\d{10}$/.test(npi)) return false
  return luhnCheckDigit(`80840${npi.slice(0, 9)}`) === Number(npi[9])
}

/** The digit that makes `payload` + digit pass the Luhn check. */
export function luhnCheckDigit(payload: string): number {
  let sum = 0
  let double = true
  for (let i = payload.length - 1; i >= 0; i--) {
    let d = Number(payload[i])
    if (double) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
    double = !double
  }
  return (10 - (sum % 10)) % 10
}

/** Completes a 9-digit base into a valid NPI (for seeds and tests). */
export function npiFromBase(base: string): string {
  if (!/^\d{9}$/.test(base)) throw new Error('an NPI base is nine digits')
  return base + String(luhnCheckDigit(`80840${base}`))
}
