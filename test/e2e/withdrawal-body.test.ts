import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {join} from 'node:path'
import {startCli, tempDir, type RunningCli} from '../helpers/cli.js'
import {basicAuth} from '../helpers/http-basic.js'

// Over a real socket, a withdrawal's body is read straight from Node's request stream (not through
// a Fetch body, as in-process requests are); the same limits and answers hold there.
describe('withdrawal bodies over HTTP', () => {
  let server: RunningCli
  const basic = basicAuth('demo-client', 'demo-client-secret')
  const details = {first_name: 'Dana', last_name: 'Whitfield', email: 'dana@example.com'}
  beforeAll(async () => {
    server = await startCli(['serve', '--demo', '--port', '0', '--no-worker', '--db', join(tempDir(), 'demo.db')])
  })
  afterAll(() => server?.stop())
  const post = (body: BodyInit, headers: Record<string, string> = {}) =>
    fetch(`${server.url}/balance/user_id/1/withdrawals`, {
      method: 'POST',
      body,
      headers: {authorization: basic, 'content-type': 'application/json', ...headers},
      duplex: 'half',
    } as RequestInit)
  const balance = async () =>
    ((await (await fetch(`${server.url}/balance/user_id/1/summary`, {headers: {authorization: basic}})).json()) as {available_funds: number}).available_funds

  it('reads a body sent in several chunks, after a byte order mark', async () => {
    const before = await balance()
    const text = JSON.stringify({type: 'PAYPAL', amount: 10.1, member_details: details})
    const chunks = [`\uFEFF${text.slice(0, 20)}`, text.slice(20)]
    const stream = new ReadableStream({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk))
        controller.close()
      },
    })
    const answer = await post(stream)
    expect(answer.status, await answer.clone().text()).toBe(201)
    expect(answer.headers.get('cache-control')).toBe('no-store')
    expect(answer.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    expect(answer.headers.get('location')).toMatch(/^\/balance\/transactions\//)
    const {transaction_id: id} = (await answer.json()) as {transaction_id: string}
    const stored = (await (await fetch(`${server.url}/balance/transactions/${id}`, {headers: {authorization: basic}})).text()) as string
    expect(stored).toContain('"amount":-10.1')
    expect(await balance()).toBeCloseTo(before - 10.1, 6)
  })

  it('refuses a body over 16 KiB with 413, declared or streamed, and changes nothing', async () => {
    const before = await balance()
    const big = JSON.stringify({type: 'PAYPAL', amount: 10, member_details: {...details, pad: 'x'.repeat(20_000)}})
    const declared = await post(big)
    expect(declared.status).toBe(413)
    expect(declared.headers.get('cache-control')).toBe('no-store')
    expect(await declared.json()).toEqual({message: 'the request body is larger than 16 KiB'})
    const streamed = await post(
      new ReadableStream({
        start(controller) {
          for (let i = 0; i < 5; i++) controller.enqueue(new TextEncoder().encode(big.slice(i * 5000, (i + 1) * 5000)))
          controller.close()
        },
      }),
    )
    expect(streamed.status).toBe(413)
    expect(await balance()).toBe(before)
  })
})
