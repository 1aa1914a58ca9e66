import {expect} from 'vitest'
import type {TestContext} from './app.js'

/*
 * Reading an app's GET /metrics in a test: the samples by name and labels, one sample's value, and
 * how far one moved between two scrapes.
 */

export type Labels = Record<string, string>
export type Samples = Map<string, number>

export const key = (name: string, labels: Labels = {}) => {
  const parts = Object.keys(labels)
    .sort()
    .map((label) => `${label}=${JSON.stringify(labels[label])}`)
  return parts.length ? `${name}{${parts.join(',')}}` : name
}

/** The samples of an exposition text, by name and labels (a small reader: no escapes beyond \" and \\). */
export function parse(text: string): Samples {
  const samples: Samples = new Map()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (!match) throw new Error(`not a sample line: ${line}`)
    const labels: Labels = {}
    for (const [, label, value] of (match[2] ?? '').matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)) labels[label!] = value!.replace(/\\(.)/g, '$1')
    samples.set(key(match[1]!, labels), Number(match[3]))
  }
  return samples
}

export async function scrape(app: TestContext['app']): Promise<Samples> {
  const res = await app.request('/metrics')
  expect(res.status).toBe(200)
  return parse(await res.text())
}

/** One sample's value; 0 when it is not there. */
export const at = (samples: Samples, name: string, labels: Labels = {}) => samples.get(key(name, labels)) ?? 0

/** How much each listed sample moved between two scrapes. */
export function moved(before: Samples, after: Samples, name: string, labels: Labels = {}): number {
  return at(after, name, labels) - at(before, name, labels)
}
