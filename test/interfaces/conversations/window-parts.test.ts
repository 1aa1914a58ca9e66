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
