import {DAY_MS} from './term-days.js'

/*
 * A search window [start, end], inclusive and to the millisecond as published_at is stored, cut
 * into whole UTC days and the edges that make it exact. Both stores count a summary's common terms
 * from the per-day statistics over the whole days; PostgreSQL also finds documents by the date
 * lexemes its index holds for each day (dateLexemes).
 */

/** A stretch of time whose documents a summary adds (the window's part of a day) or takes away (a counted day's part outside the window). */
export interface WindowEdge {
  start: string
  end: string
  sign: 1 | -1
}

/**
 * The window as whole UTC days and the edges that make it exact. A day the window covers only
 * in part is handled from whichever side is shorter: its part inside the window is counted and
 * added, or (when the part outside is shorter) the whole day is taken from the statistics and
 * its part outside the window is counted and taken away. A window ending at 23:59:59Z thus
 * reads the documents of one second, not of the day before it, and so does a one-day window
 * from midnight to 23:59:59Z. Without `days`, the window is one edge, counted by the index
 * alone. Times are inclusive and to the millisecond, as published_at is stored.
 */
export function splitWindow(start: string, end: string): {days?: {first: number; last: number}; edges: WindowEdge[]} {
  const from = Date.parse(start)
  const to = Date.parse(end)
  const at = (ms: number) => new Date(ms).toISOString()
  const firstDay = Math.floor(from / DAY_MS)
  const lastDay = Math.floor(to / DAY_MS)
  const dayStart = (day: number) => day * DAY_MS
  const dayEnd = (day: number) => (day + 1) * DAY_MS - 1
  const window: WindowEdge = {start, end, sign: 1}
  if (firstDay === lastDay) {
    // Inside one day: the window itself, or the day less what lies outside the window on either side.
    const outside = from - dayStart(firstDay) + (dayEnd(firstDay) - to)
    if (outside >= to - from + 1) return {edges: [window]}
    const edges: WindowEdge[] = []
    if (from > dayStart(firstDay)) edges.push({start: at(dayStart(firstDay)), end: at(from - 1), sign: -1})
    if (to < dayEnd(firstDay)) edges.push({start: at(to + 1), end: at(dayEnd(firstDay)), sign: -1})
    return {days: {first: firstDay, last: firstDay}, edges}
  }
  let first = firstDay
  let last = lastDay
  const edges: WindowEdge[] = []
  if (from > dayStart(firstDay)) {
    if (from - dayStart(firstDay) < dayEnd(firstDay) - from + 1) edges.push({start: at(dayStart(firstDay)), end: at(from - 1), sign: -1})
    else {
      first += 1
      edges.push({start, end: at(dayEnd(firstDay)), sign: 1})
    }
  }
  if (to < dayEnd(lastDay)) {
    if (dayEnd(lastDay) - to < to - dayStart(lastDay) + 1) edges.push({start: at(to + 1), end: at(dayEnd(lastDay)), sign: -1})
    else {
      last -= 1
      edges.push({start: at(dayStart(lastDay)), end, sign: 1})
    }
  }
  // Two days, each mostly outside the window: no day is worth its statistics.
  if (first > last) return {edges: [window]}
  return {days: {first, last}, edges}
}

/**
 * A tsquery over the date lexemes (`@2024`, `@2024-03`, `@2024-03-14`, see the 2026113001
 * migration) that holds for exactly the documents published on the UTC days first..last. Each
 * year and month is written the shorter way: as its own lexeme less the days or months it lacks
 * (`'@2024' & !'@2024-12-31'`), or as the months or days it has. Few lexemes keep the GIN scan
 * short: it steps through every lexeme's entries at each candidate the terms give it.
 */
export function dateLexemes(first: number, last: number): string {
  return or(years(first, last + 1))
}

/** A date query's parts (ORed), and how many lexemes each names. */
type Cover = {query: string; lexemes: number}[]

const or = (cover: Cover) => cover.map((part) => part.query).join(' | ')
const size = (cover: Cover) => cover.reduce((sum, part) => sum + part.lexemes, 0)
const dayOf = (ms: number) => ms / DAY_MS
/**
 * Midnight UTC of a date, for every year the window allows: Date.UTC reads years 0 to 99 as
 * 1900 to 1999, which once made the cover of a window in those years empty (an invalid tsquery).
 */
const utcMidnight = (year: number, month: number, day: number) => new Date(0).setUTCFullYear(year, month, day)
const label = (day: number, length: number) => `'@${new Date(day * DAY_MS).toISOString().slice(0, length)}'`

/**
 * Days [from, to) inside one span (a year or a month, [spanFrom, spanTo)), as the span's own
 * lexeme (whole, or less what it lacks) or as the smaller spans inside it, whichever names fewer.
 */
function within(span: string, spanFrom: number, spanTo: number, from: number, to: number, inner: (from: number, to: number) => Cover): Cover {
  if (from === spanFrom && to === spanTo) return [{query: span, lexemes: 1}]
  const have = inner(from, to)
  const lacks = [...inner(spanFrom, from), ...inner(to, spanTo)]
  if (1 + size(lacks) < size(have)) return [{query: `(${span} & !(${or(lacks)}))`, lexemes: 1 + size(lacks)}]
  return have
}

function years(from: number, to: number): Cover {
  const cover: Cover = []
  for (let day = from; day < to; ) {
    const year = new Date(day * DAY_MS).getUTCFullYear()
    const [yearFrom, yearTo] = [dayOf(utcMidnight(year, 0, 1)), dayOf(utcMidnight(year + 1, 0, 1))]
    const end = Math.min(to, yearTo)
    cover.push(...within(label(day, 4), yearFrom, yearTo, day, end, months))
    day = end
  }
  return cover
}

function months(from: number, to: number): Cover {
  const cover: Cover = []
  for (let day = from; day < to; ) {
    const date = new Date(day * DAY_MS)
    const [monthFrom, monthTo] = [dayOf(utcMidnight(date.getUTCFullYear(), date.getUTCMonth(), 1)), dayOf(utcMidnight(date.getUTCFullYear(), date.getUTCMonth() + 1, 1))]
    const end = Math.min(to, monthTo)
    cover.push(...within(label(day, 7), monthFrom, monthTo, day, end, days))
    day = end
  }
  return cover
}

function days(from: number, to: number): Cover {
  return Array.from({length: to - from}, (_, i) => ({query: label(from + i, 10), lexemes: 1}))
}
