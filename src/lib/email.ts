import {domainToASCII} from 'node:url'
import {z} from 'zod'

/** The local part's rules of an ASCII address, checked against a domain known to be good. */
const ASCII_ADDRESS = z.regexes.email
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/

/**
 * Whether `value` is an e-mail address, internationalised ones included (RFC 6530: UTF-8 in the
 * local part, an IDN domain such as clínica.example). The domain must be a host name of two or
 * more labels once written in ASCII (punycode, so an IDN top-level domain counts), with a
 * top-level domain that is not a number; the local part follows the rules of an ASCII one, with
 * any non-ASCII letter allowed where a letter is. `a@b`, spaces and `..` are refused.
 */
export function isEmailAddress(value: string): boolean {
  const at = value.lastIndexOf('@')
  if (at <= 0 || value.length > 254) return false
  const domain = domainToASCII(value.slice(at + 1)).toLowerCase()
  const labels = domain.split('.')
  if (domain.length > 253 || labels.length < 2 || !labels.every((label) => LABEL.test(label)) || /^\d+$/.test(labels.at(-1)!)) return false
  const local = value.slice(0, at).replace(/[^\x00-\x7f]/gu, 'a')
  return ASCII_ADDRESS.test(`${local}@example.com`)
}

/**
 * An address as it is kept and looked up: trimmed, lower case, and in Unicode's composed form, so
 * that "josé" typed with a combining accent finds the member stored with the precomposed letter.
 */
export function normalEmail(value: string): string {
  return value.trim().normalize('NFC').toLowerCase()
}
