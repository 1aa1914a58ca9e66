import {describe, expect, it} from 'vitest'
import {toAppError} from '../../src/http/error-shape.js'
import {storeFailure} from '../../src/store/failure.js'

/*
 * How a store error becomes an answer (store/failure.ts, http/error-shape.ts), with the errors
 * pg and Node really throw when PostgreSQL restarts or cannot be reached (as seen in
 * test/e2e/faults-db-restart): none of them may fall through to a 500.
 */
const withCode = (message: string, code: string) => Object.assign(new Error(message), {code})

describe('store failures from PostgreSQL', () => {
  it.each([
    ['the server refuses connections', withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['the server is shutting down or starting up', withCode('the database system is starting up', '57P03')],
    ['too many connections', withCode('sorry, too many clients already', '53300')],
    ['the database takes no new connections', withCode('database "medpanel" is not currently accepting connections', '55000')],
    ['the database is gone', withCode('database "medpanel" does not exist', '3D000')],
    ['the password is no longer accepted', withCode('password authentication failed for user "medpanel"', '28P01')],
    ['the pool gave up waiting for a connection', new Error('timeout exceeded when trying to connect')],
    ['a connection timed out while opening', new Error('Connection terminated due to connection timeout')],
    [
      'every address of the name refused',
      new AggregateError([withCode('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED'), withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')]),
    ],
  ])('%s: unavailable, nothing was changed', (_, error) => {
    expect(storeFailure(error)).toBe('unavailable')
    const answer = toAppError(error)
    expect([answer.status, answer.headers['Retry-After'], answer.message]).toEqual([503, '30', 'the store cannot take this request right now; nothing was changed'])
  })

  it.each([
    ['the server stopped under a statement', withCode('terminating connection due to administrator command', '57P01')],
    ['the server crashed under it', withCode('terminating connection because of crash of another server process', '57P02')],
    ['the connection failed', withCode('connection failure', '08006')],
    ['the socket was reset', withCode('read ECONNRESET', 'ECONNRESET')],
    ['the socket closed', new Error('Connection terminated unexpectedly')],
    ['a statement on a broken connection', new Error('Client has encountered a connection error and is not queryable')],
  ])('%s: lost, and the caller is told it may have been saved', (_, error) => {
    expect(storeFailure(error)).toBe('lost')
    const answer = toAppError(error)
    expect([answer.status, answer.headers['Retry-After']]).toEqual([503, '5'])
    expect(answer.message).toMatch(/may or may not have been saved; send it again/)
    expect(answer.message).not.toMatch(/terminat|ECONN|Client/)
  })

  it('other errors are not store failures', () => {
    expect(storeFailure(new Error('Connection terminated unexpectedly, or so they say'))).toBeUndefined()
    expect(storeFailure(new AggregateError([new Error('x')]))).toBeUndefined()
    expect(storeFailure(withCode('duplicate key value violates unique constraint', '23505'))).toBeUndefined()
    expect(toAppError(new Error('boom')).status).toBe(500)
  })
})
