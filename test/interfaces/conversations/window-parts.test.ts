import {describe, expect, it} from 'vitest'
import {defaultLimits} from '../../../src/interfaces/conversations/limits.js'
import {MAX_LEXEME_BYTES} from '../../../src/interfaces/conversations/migrations/2026113001_conversation_search_lexemes.js'
import {termLexemes} from '../../../src/interfaces/conversations/search-postgres.js'
import {DAY_MS} from '../../../src/interfaces/conversations/term-days.js'
import {dateLexemes} from '../../../src/interfaces/conversations/window.js'

/** The date query of the UTC days from `first` to `last`, both included. */
const dates = (first: string, last: string) => dateLexemes(Date.parse(first) / DAY_MS, Date.parse(last) / DAY_MS)

describe("PostgreSQL's date lexemes for a window's whole days", () => {
  it('name a whole year, month or day by its own lexeme', () => {
    expect(dates('2024-01-01', '2024-12-31')).toBe("'@2024'")
    expect(dates('2024-02-01', '2024-02-29')).toBe("'@2024-02'")
    expect(dates('2024-02-29', '2024-02-29')).toBe("'@2024-02-29'")
  })

  it('write a year or month less what it lacks when that names fewer lexemes', () => {
    expect(dates('2024-01-01', '2024-12-30')).toBe("('@2024' & !('@2024-12-31'))")
    expect(dates('2024-03-02', '2024-03-31')).toBe("('@2024-03' & !('@2024-03-01'))")
    expect(dates('2024-01-01', '2024-11-29')).toBe("('@2024' & !('@2024-11-30' | '@2024-12'))")
    expect(dates('2024-01-01', '2024-11-28')).toBe("('@2024' & !('@2024-11-29' | '@2024-11-30' | '@2024-12'))")
  })

  it('and as the months or days it has when those are fewer', () => {
    expect(dates('2023-11-30', '2025-02-02')).toBe("'@2023-11-30' | '@2023-12' | '@2024' | '@2025-01' | '@2025-02-01' | '@2025-02-02'")
    expect(dates('2024-03-14', '2024-03-16')).toBe("'@2024-03-14' | '@2024-03-15' | '@2024-03-16'")
  })
})

/** Whether a day (its three date lexemes) matches a date query of | & ! ( ) and quoted lexemes. */
function matches(query: string, day: number): boolean {
  const iso = new Date(day * DAY_MS).toISOString().slice(0, 10)
  const has = new Set([`@${iso.slice(0, 4)}`, `@${iso.slice(0, 7)}`, `@${iso}`])
  const tokens = query.match(/'[^']*'|[|&!()]/g) ?? []
  let at = 0
  const or = (): boolean => {
    let value = and()
    while (tokens[at] === '|') {
      at++
      value = and() || value
    }
    return value
  }
  const and = (): boolean => {
    let value = not()
    while (tokens[at] === '&') {
      at++
      value = not() && value
    }
    return value
  }
  const not = (): boolean => {
    const token = tokens[at++]
    if (token === '!') return !not()
    if (token === '(') {
      const value = or()
      if (tokens[at++] !== ')') throw new Error(`unbalanced: ${query}`)
      return value
    }
    if (!token?.startsWith("'")) throw new Error(`not a lexeme at ${at - 1}: ${query}`)
    return has.has(token.slice(1, -1))
  }
  const value = or()
  if (at !== tokens.length) throw new Error(`left over: ${query}`)
  return value
}

describe('the date lexemes of any window the interface allows, years 0000 to 9999', () => {
  const days = (text: string) => Date.parse(`${text}T00:00:00Z`) / DAY_MS
  const year = (y: number) => String(y).padStart(4, '0')

  it('cover exactly the days of the window, no more and no less', () => {
    const years = [...Array.from({length: 121}, (_, i) => i), ...Array.from({length: 270}, (_, i) => 121 + i * 37), 9998]
    for (const y of years) {
      for (const [from, to] of [
        [`${year(y)}-01-01`, `${year(y)}-12-31`],
        [`${year(y)}-02-27`, `${year(y)}-03-02`],
        [`${year(y)}-03-02`, `${year(y + 1)}-11-28`],
      ] as const) {
        const [first, last] = [days(from), days(to)]
        const query = dateLexemes(first, last)
        for (let day = first - 40; day <= last + 40; day += day < first + 3 || day > last - 3 ? 1 : 17) {
          expect(matches(query, day), `${from}..${to} on ${new Date(day * DAY_MS).toISOString().slice(0, 10)}: ${query}`).toBe(day >= first && day <= last)
        }
      }
    }
  })

  it('name the years before 100 by their own four digits', () => {
    expect(dates('0050-01-01', '0050-12-31')).toBe("'@0050'")
    expect(dates('0000-02-01', '0000-02-29')).toBe("'@0000-02'")
  })
})

describe("a term's lexemes", () => {
  it('are its token, or its pairs of adjacent tokens, exact up to two tokens', () => {
    expect(termLexemes(['pain'])).toEqual({query: "'pain'", exact: true})
    expect(termLexemes(['chest', 'pain'])).toEqual({query: "'chest pain'", exact: true})
    expect(termLexemes(['heart', 'failure', 'heart'])).toEqual({query: "'heart failure' & 'failure heart'", exact: false})
  })

  it('always fit a lexeme: a term is too short for a pair to pass its 2,047 bytes', () => {
    // four bytes per character at most, and the tokenizer folds each character to one
    expect(4 * defaultLimits().maxTermLength + 1).toBeLessThanOrEqual(MAX_LEXEME_BYTES)
  })

  it('quote what a tsquery would read as syntax', () => {
    expect(termLexemes(["o'brien", 'a\\b'])).toEqual({query: "'o''brien a\\\\b'", exact: true})
  })
})
