import {request as httpRequest} from 'node:http'
import {connect, type Socket} from 'node:net'
import {readFileSync, renameSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {cliJson, startCli, tempDir, type RunningCli} from '../helpers/cli.js'
import {basicAuth} from '../helpers/http-basic.js'

/*
 * What serve does on SIGTERM, a second SIGTERM, the drain time passing and SIGHUP
 * (docs/operations.md "Stopping and restarting"). Every wait is on an event: a line on serve's
 * stderr, an answer, the process's exit; the one slow request is a withdrawal whose body the
 * client sends in two parts, with the signal between them.
 */

const BASIC = basicAuth('demo-client', 'demo-client-secret')
const WITHDRAWAL = JSON.stringify({type: 'PAYPAL', amount: 0.01, member_details: {first_name: 'Dana', last_name: 'Whitfield', email: 'dana@example.com'}})
const running: RunningCli[] = []

afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.stop('SIGKILL')))
})

async function demoServe(flags: string[] = []): Promise<{server: RunningCli; db: string; dir: string}> {
  const dir = tempDir('medpanel-signals-')
  const db = join(dir, 'demo.db')
  const server = await startCli(['serve', '--demo', '--port', '0', '--no-worker', '--db', db, ...flags])
  running.push(server)
  return {server, db, dir}
}

/** Resolves once serve's stderr matches `pattern`. */
function stderrSays(server: RunningCli, pattern: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (!pattern.test(server.stderr())) return false
      server.child.stderr!.off('data', onData)
      server.child.off('exit', onExit)
      resolve()
      return true
    }
    // Our listener runs after the helper's, which has already added the chunk.
    const onData = () => check()
    const onExit = () => reject(new Error(`serve exited before saying ${pattern}: ${server.stderr()}`))
    if (check()) return
    server.child.stderr!.on('data', onData)
    server.child.once('exit', onExit)
  })
}

function exited(server: RunningCli): Promise<number | null> {
  return new Promise((resolve) => {
    if (server.child.exitCode !== null) resolve(server.child.exitCode)
    else server.child.once('exit', (code) => resolve(code))
  })
}

interface Answer {
  status: number
  body: string
  complete: boolean
}

/**
 * A withdrawal whose body is sent in two parts: `started` resolves once serve has read its headers
 * and handed it to the app (the 100 Continue it sends then), `finish` sends the rest.
 */
function twoPartWithdrawal(url: string): {started: Promise<void>; finish: () => void; answer: Promise<Answer>} {
  const {hostname, port} = new URL(url)
  let started: () => void = () => {}
  const startedPromise = new Promise<void>((resolve) => {
    started = resolve
  })
  const request = httpRequest({
    host: hostname,
    port,
    method: 'POST',
    path: '/balance/user_id/1/withdrawals',
    headers: {authorization: BASIC, 'content-type': 'application/json', 'content-length': Buffer.byteLength(WITHDRAWAL), expect: '100-continue', connection: 'close'},
  })
  const half = Math.floor(WITHDRAWAL.length / 2)
  request.on('continue', () => {
    request.write(WITHDRAWAL.slice(0, half))
    started()
  })
  const answer = new Promise<Answer>((resolve, reject) => {
    request.on('error', reject)
    request.on('response', (response) => {
      let body = ''
      response.setEncoding('utf8')
      response.on('data', (chunk) => (body += chunk))
      response.on('end', () => resolve({status: response.statusCode!, body, complete: response.complete}))
      response.on('error', reject)
    })
  })
  request.flushHeaders()
  return {started: startedPromise, finish: () => request.end(WITHDRAWAL.slice(half)), answer}
}

describe('serve on signals', () => {
  it('on SIGTERM stops accepting, finishes the requests in flight, keeps every acknowledged withdrawal and exits 0', async () => {
    const {server, db} = await demoServe()
    const acknowledged: string[] = []
    const cut: string[] = []
    let stopped = false
    let enough: () => void = () => {}
    const twenty = new Promise<void>((resolve) => {
      enough = resolve
    })
    // Withdrawals one after another on four connections until serve has exited: some are in
    // flight when SIGTERM lands, the later ones are refused. An answer that started must end whole.
    const loop = async () => {
      while (!stopped) {
        let answer: Response
        try {
          answer = await fetch(`${server.url}/balance/user_id/1/withdrawals`, {
            method: 'POST',
            body: WITHDRAWAL,
            headers: {authorization: BASIC, 'content-type': 'application/json'},
          })
        } catch {
          // refused or closed before an answer: not acknowledged
          await new Promise((resolve) => setImmediate(resolve))
          continue
        }
        try {
          const text = await answer.text()
          if (answer.status === 201) acknowledged.push((JSON.parse(text) as {transaction_id: string}).transaction_id)
          else if (answer.status !== 503) cut.push(`unexpected ${answer.status}: ${text}`)
        } catch (error) {
          cut.push(`answer ${answer.status} cut: ${(error as Error).message}`)
        }
        if (acknowledged.length >= 20) enough()
      }
    }
    const loops = Promise.all([loop(), loop(), loop(), loop()])
    const slow = twoPartWithdrawal(server.url)
    await Promise.all([slow.started, twenty])
    const exit = exited(server)
    process.kill(server.child.pid!, 'SIGTERM')
    await stderrSays(server, /received SIGTERM, finishing requests in flight/)
    // serve is draining: a new connection is refused, the request it is reading still answered.
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow()
    slow.finish()
    const answer = await slow.answer
    expect(answer.status, answer.body).toBe(201)
    expect(answer.complete).toBe(true)
    acknowledged.push((JSON.parse(answer.body) as {transaction_id: string}).transaction_id)
    expect(await exit).toBe(0)
    stopped = true
    await loops
    expect(cut).toEqual([])
    expect(server.stderr()).not.toMatch(/stopped at once/)

    const stored = new Set(cliJson<{id: string}[]>(['list-transactions', 'user_id', '1', '--db', db, '--limit', '100000']).map((row) => row.id))
    expect(acknowledged.filter((id) => !stored.has(id))).toEqual([])
    expect(acknowledged.length).toBeGreaterThan(20)
  })

  it('on a second SIGTERM stops at once, says what it abandoned, and exits 143', async () => {
    const {server} = await demoServe()
    const slow = twoPartWithdrawal(server.url)
    slow.answer.catch(() => undefined)
    await slow.started
    const exit = exited(server)
    process.kill(server.child.pid!, 'SIGTERM')
    await stderrSays(server, /received SIGTERM/)
    process.kill(server.child.pid!, 'SIGTERM')
    expect(await exit).toBe(143)
    const lines = server.stderr().trim().split('\n')
    expect(lines.filter((line) => line.includes('stopped at once'))).toEqual(['stopped at once (a second SIGTERM): abandoned 1 request in flight and no delivery'])
  })

  it('when the drain time passes, stops at once in one JSON line and exits 124', async () => {
    const {server} = await demoServe(['--drain-seconds', '1', '--log-format', 'json'])
    const slow = twoPartWithdrawal(server.url)
    slow.answer.catch(() => undefined)
    await slow.started
    const exit = exited(server)
    process.kill(server.child.pid!, 'SIGTERM')
    expect(await exit).toBe(124)
    const abandoned = server
      .stderr()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.msg === 'stopped at once')
    expect(abandoned).toEqual([expect.objectContaining({level: 'error', reason: 'drain time passed', requests_in_flight: 1, delivery_in_progress: false})])
  })

  it('on SIGHUP reopens --access-log: after logrotate moves it, every request is in exactly one of the two files', async () => {
    const dir = tempDir('medpanel-signals-')
    const log = join(dir, 'access.log')
    const {server} = await demoServe(['--access-log', log])
    const ids: string[] = []
    const get = async (n: number) => {
      const id = `hup-${n}`
      ids.push(id)
      const answer = await fetch(`${server.url}/healthz`, {headers: {'x-request-id': id}})
      await answer.text()
    }
    let n = 0
    for (; n < 5; n++) await get(n)
    renameSync(log, `${log}.1`)
    // Requests keep coming while the file is moved and reopened.
    let hungUp = false
    const during = (async () => {
      while (!hungUp) await get(n++)
    })()
    const reopened = stderrSays(server, /reopened the access log/)
    process.kill(server.child.pid!, 'SIGHUP')
    await reopened
    hungUp = true
    await during
    const afterwards = n
    for (let i = 0; i < 5; i++) await get(n++)
    expect(await server.stop('SIGTERM')).toBe(0)

    const idsIn = (file: string) => readFileSync(file, 'utf8').match(/id=hup-\d+/g) ?? []
    const rotated = idsIn(`${log}.1`)
    const fresh = idsIn(log)
    const all = [...rotated, ...fresh].map((found) => found.slice(3))
    expect(all.sort()).toEqual([...ids].sort())
    expect(new Set(all).size).toBe(all.length)
    // What came after the reopen went to the new file.
    for (let i = afterwards; i < n; i++) expect(fresh).toContain(`id=hup-${i}`)
    expect(rotated).toContain('id=hup-0')
    expect(server.stderr()).not.toMatch(/id=hup-/)
  })
})

/** A raw keep-alive connection: what it wrote is up to the test, what came back is collected. */
async function rawConnection(url: string): Promise<{socket: Socket; received: () => string; ended: Promise<void>; host: string}> {
  const {hostname, port} = new URL(url)
  const socket = connect({host: hostname, port: Number(port)})
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('error', reject)
  })
  let text = ''
  socket.setEncoding('utf8')
  socket.on('data', (chunk: string) => (text += chunk))
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  return {socket, received: () => text, ended, host: new URL(url).host}
}

/** A withdrawal's head; `expect` asks for a 100 Continue, which says serve has read the head and handed it on. */
function withdrawalHead(host: string, length: number, expect = false): string {
  return `POST /balance/user_id/1/withdrawals HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${BASIC}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n${expect ? 'Expect: 100-continue\r\n' : ''}\r\n`
}

/** Resolves once what `conn` received matches `pattern`. */
function receives(conn: {socket: Socket; received: () => string}, pattern: RegExp): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (!pattern.test(conn.received())) return
      conn.socket.off('data', check)
      resolve()
    }
    conn.socket.on('data', check)
    check()
  })
}

/** The status lines and Connection headers of the answers in `text`, in order. */
function answersIn(text: string): {status: number; connection: string | undefined}[] {
  return [...text.matchAll(/HTTP\/1\.1 (\d{3})[^\r]*\r\n((?:[^\r]+\r\n)*)\r\n/g)]
    .filter((match) => match[1] !== '100')
    .map((match) => ({
      status: Number(match[1]),
      connection: /^connection: (.*)$/im.exec(match[2]!)?.[1]?.trim().toLowerCase(),
    }))
}

describe('serve stopping under keep-alive clients (no socket outlives its last answer)', () => {
  it('a body split across SIGTERM is answered with Connection: close, the socket ends, a request pipelined behind it never runs, and serve exits 0 at once', async () => {
    // A drain time far beyond the test's: an exit 0 can only come from the last answer, not a timer.
    const {server, db} = await demoServe(['--drain-seconds', '3600'])
    const before = cliJson<unknown[]>(['list-transactions', 'user_id', '1', '--db', db, '--limit', '100000']).length
    // An idle keep-alive connection that has had its answer, and keeps the socket open.
    const idle = await rawConnection(server.url)
    idle.socket.write(`GET /healthz HTTP/1.1\r\nHost: ${idle.host}\r\n\r\n`)
    await receives(idle, /\r\n\r\n/)
    expect(answersIn(idle.received())[0]).toMatchObject({status: 200, connection: 'keep-alive'})
    // A withdrawal whose body is half sent when the signal comes.
    const busy = await rawConnection(server.url)
    const half = Math.floor(WITHDRAWAL.length / 2)
    busy.socket.write(withdrawalHead(server.url.slice(7), Buffer.byteLength(WITHDRAWAL), true))
    await receives(busy, /^HTTP\/1\.1 100 Continue\r\n\r\n/)
    busy.socket.write(WITHDRAWAL.slice(0, half))
    const exit = exited(server)
    process.kill(server.child.pid!, 'SIGTERM')
    await stderrSays(server, /received SIGTERM, finishing requests in flight/)
    // The idle one is closed at once.
    await idle.ended
    // The rest of the body, and a second withdrawal pipelined behind it.
    busy.socket.write(WITHDRAWAL.slice(half) + withdrawalHead(server.url.slice(7), Buffer.byteLength(WITHDRAWAL)) + WITHDRAWAL)
    await busy.ended
    expect(answersIn(busy.received())).toEqual([{status: 201, connection: 'close'}])
    expect(await exit).toBe(0)
    expect(server.stderr()).not.toMatch(/stopped at once/)
    // The pipelined one was never run: one withdrawal more, not two.
    expect(cliJson<unknown[]>(['list-transactions', 'user_id', '1', '--db', db, '--limit', '100000']).length).toBe(before + 1)
  })

  it('a request pipelined before the signal is answered, and only the last answer says close', async () => {
    const {server} = await demoServe(['--drain-seconds', '3600'])
    const conn = await rawConnection(server.url)
    // A whole GET, then a withdrawal whose body is half sent: both owed on one connection.
    const half = Math.floor(WITHDRAWAL.length / 2)
    conn.socket.write(`GET /healthz HTTP/1.1\r\nHost: ${conn.host}\r\n\r\n${withdrawalHead(server.url.slice(7), Buffer.byteLength(WITHDRAWAL), true)}`)
    await receives(conn, /100 Continue\r\n\r\n/)
    conn.socket.write(WITHDRAWAL.slice(0, half))
    const exit = exited(server)
    process.kill(server.child.pid!, 'SIGTERM')
    await stderrSays(server, /received SIGTERM, finishing requests in flight/)
    conn.socket.write(WITHDRAWAL.slice(half))
    await conn.ended
    expect(answersIn(conn.received())).toEqual([
      {status: 200, connection: 'keep-alive'},
      {status: 201, connection: 'close'},
    ])
    expect(await exit).toBe(0)
  })
})
