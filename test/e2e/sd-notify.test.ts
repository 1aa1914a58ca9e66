import {spawn, spawnSync, type ChildProcess} from 'node:child_process'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {startCli, tempDir} from '../helpers/cli.js'

/*
 * serve under systemd's Type=notify (deploy/medpanel.service): a fake $NOTIFY_SOCKET, a unix
 * datagram socket that python3 binds and prints (Node cannot), receives READY=1 once /healthz
 * answers 200, RELOADING=1 and READY=1 around SIGHUP, and STOPPING=1 on SIGTERM.
 */
const python = spawnSync('python3', ['--version']).status === 0
const notifyTool = spawnSync('systemd-notify', ['--version']).status === 0
const RECEIVER = `
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print('listening', flush=True)
while True:
    print(s.recv(4096).decode().replace('\\n', ' ').strip(), flush=True)
`

describe.skipIf(!python || !notifyTool)('serve tells systemd how it is doing (skipped without python3 for the fake socket or systemd-notify)', () => {
  const children: ChildProcess[] = []
  afterAll(() => {
    for (const child of children) child.kill('SIGKILL')
  })

  it('sends READY=1 once /healthz answers 200, RELOADING=1 then READY=1 on SIGHUP, STOPPING=1 on SIGTERM', async () => {
    const dir = tempDir('medpanel-notify-')
    const socket = join(dir, 'notify.sock')
    const receiver = spawn('python3', ['-u', '-c', RECEIVER, socket], {stdio: ['ignore', 'pipe', 'inherit']})
    children.push(receiver)
    const messages: string[] = []
    const waiters: {pattern: RegExp; from: number; resolve: () => void}[] = []
    let text = ''
    receiver.stdout!.on('data', (chunk) => {
      text += chunk
      const lines = text.split('\n')
      text = lines.pop()!
      for (const line of lines) messages.push(line)
      for (const waiter of [...waiters]) {
        if (messages.slice(waiter.from).some((line) => waiter.pattern.test(line))) {
          waiters.splice(waiters.indexOf(waiter), 1)
          waiter.resolve()
        }
      }
    })
    /** Resolves once a message from index `from` on matches. */
    const received = (pattern: RegExp, from = 0) =>
      new Promise<void>((resolve) => {
        if (messages.slice(from).some((line) => pattern.test(line))) resolve()
        else waiters.push({pattern, from, resolve})
      })
    await received(/^listening$/)

    const server = await startCli(['serve', '--demo', '--port', '0', '--no-worker', '--db', join(dir, 'demo.db')], {NOTIFY_SOCKET: socket})
    try {
      await received(/^READY=1$/)
      // READY=1 came after the app was made and the demo seeded: /healthz answers 200 now.
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
      expect(messages.filter((line) => line !== 'listening' && line !== 'BARRIER=1')).toEqual(['READY=1'])

      const beforeHup = messages.length
      process.kill(server.child.pid!, 'SIGHUP')
      await received(/^READY=1$/, beforeHup)
      const reload = messages.slice(beforeHup).filter((line) => line !== 'BARRIER=1')
      expect(reload).toEqual([expect.stringMatching(/^RELOADING=1 MONOTONIC_USEC=\d+$/), 'READY=1'])

      const beforeStop = messages.length
      const stopping = received(/^STOPPING=1$/, beforeStop)
      expect(await server.stop('SIGTERM')).toBe(0)
      await stopping
      expect(messages.slice(beforeStop).filter((line) => line !== 'BARRIER=1')).toEqual(['STOPPING=1'])
      expect(server.stderr()).not.toMatch(/could not tell systemd/)
    } finally {
      await server.stop('SIGKILL')
    }
  })
})
