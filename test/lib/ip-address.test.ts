import {describe, expect, it} from 'vitest'
import {limitKey, normalizeAddress} from '../../src/lib/ip-address.js'

/* One spelling per address: what the guessing limits key and the access log writes. */

describe('normalizeAddress', () => {
  it('drops a port, a zone id and brackets, and makes IPv4-mapped IPv6 plain IPv4', () => {
    expect(normalizeAddress('10.77.7.7:5123')).toBe('10.77.7.7')
    expect(normalizeAddress(' 10.77.7.7 ')).toBe('10.77.7.7')
    expect(normalizeAddress('::ffff:10.79.7.7')).toBe('10.79.7.7')
    expect(normalizeAddress('::FFFF:a4f:707')).toBe('10.79.7.7')
    expect(normalizeAddress('[::ffff:10.79.7.7]:443')).toBe('10.79.7.7')
    expect(normalizeAddress('fe80::1%eth0')).toBe('fe80::1')
    expect(normalizeAddress('[2001:DB8:0:0::1]:8080')).toBe('2001:db8::1')
    expect(normalizeAddress('2001:0db8:0000:0000:0000:0000:0000:0001')).toBe('2001:db8::1')
    expect(normalizeAddress('::1')).toBe('::1')
  })

  it('answers undefined for anything that is not an address', () => {
    for (const text of ['garbage addr=6.6.6.6', '', 'unknown', '10.0.0.256', '1.2.3', 'example.org', '::1::2', '10.0.0.1:99999']) {
      expect(normalizeAddress(text), text).toBeUndefined()
    }
  })
})

describe('limitKey', () => {
  it('keys IPv6 by its /64 and IPv4 by itself', () => {
    expect(limitKey('2001:db8:1:2:aaaa::1')).toBe(limitKey('2001:db8:1:2:ffff:ffff:ffff:ffff'))
    expect(limitKey('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64')
    expect(limitKey('2001:db8:1:3::1')).not.toBe(limitKey('2001:db8:1:2::1'))
    expect(limitKey('10.0.0.1')).toBe('10.0.0.1')
  })
})
