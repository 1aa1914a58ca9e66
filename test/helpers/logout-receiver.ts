import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'

/**
 * A client's back-channel logout endpoint on a loopback port: keeps every logout token posted to
 * it as a form (`logout_token=…`) while it answers `status`, and lets a test wait for the next one.
 */
export class LogoutReceiver {
  tokens: string[] = []
  /** Requests that were not a form POST carrying a logout_token. */
  malformed = 0
  status = 200
  url = ''
  private server: Server | undefined
  private waiting: ((token: string) => void)[] = []

  /** Listens on 127.0.0.1, on `port` when given (a receiver coming back up), else any free one. */
  async start(port = 0): Promise<this> {
    this.server = createServer((req, res) => {
      let body = ''
      req.on('data', (chunk: Buffer) => {
        body += chunk.toString('utf8')
      })
      req.on('end', () => {
        const token = new URLSearchParams(body).get('logout_token')
        if (req.method !== 'POST' || req.headers['content-type'] !== 'application/x-www-form-urlencoded' || !token) this.malformed++
        else if (this.status === 200) {
          this.tokens.push(token)
          for (const resolve of this.waiting.splice(0)) resolve(token)
        }
        res.writeHead(this.status).end()
      })
    })
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/backchannel-logout`
    return this
  }

  /** The first token taken, once it comes. */
  first(): Promise<string> {
    const taken = this.tokens[0]
    return taken === undefined ? new Promise((resolve) => this.waiting.push(resolve)) : Promise.resolve(taken)
  }

  async stop(): Promise<void> {
    await new Promise((resolve) => (this.server ? this.server.close(resolve) : resolve(undefined)))
  }
}
