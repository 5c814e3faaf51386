/**
 * A webhook receiver on 127.0.0.1 for the webhook suites: records every request (headers, raw
 * body, arrival time) and answers as told, request by request, and verifies Standard Webhooks
 * signatures with node:crypto straight from the specification's words.
 */
import assert from 'node:assert/strict'
import { createHmac, timingSafeEqual } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Received {
  path: string
  headers: http.IncomingHttpHeaders
  body: string
  json: any
  at: number
}

/** How to answer one request: a status, or `hang` (never answer; the sender's time limit ends it). */
export type Answer = number | 'hang'

export class Receiver {
  readonly received: Received[] = []
  /** Answers for the next requests to a path, in order; then the path's fallback, else 204. */
  readonly answers = new Map<string, Answer[]>()
  readonly fallbacks = new Map<string, Answer>()
  private readonly hanging = new Set<http.ServerResponse>()

  private constructor(
    private readonly server: http.Server,
    readonly origin: string,
  ) {}

  static async start(): Promise<Receiver> {
    const state: { receiver?: Receiver } = {}
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8')
        let json: unknown
        try {
          json = JSON.parse(body)
        } catch {
          json = undefined
        }
        const receiver = state.receiver!
        receiver.received.push({ path: req.url ?? '', headers: req.headers, body, json, at: Date.now() })
        const path = req.url ?? ''
        const answer = receiver.answers.get(path)?.shift() ?? receiver.fallbacks.get(path) ?? 204
        if (answer === 'hang') {
          receiver.hanging.add(res)
          return
        }
        res.writeHead(answer).end()
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    state.receiver = new Receiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`)
    return state.receiver
  }

  /** Answers the next requests to `path` with `answers`, in order. */
  answer(path: string, ...answers: Answer[]): void {
    this.answers.set(path, answers)
  }

  /** Requests to one path (each webhook of a suite gets a path of its own). */
  to(path: string): Received[] {
    return this.received.filter((r) => r.path === path)
  }

  /** Waits until `path` got `count` requests (a deadline keeps a broken sender from hanging the suite). */
  async waitFor(path: string, count: number, deadlineMs = 15_000): Promise<Received[]> {
    const until = Date.now() + deadlineMs
    while (this.to(path).length < count) {
      if (Date.now() > until) assert.fail(`${path} got ${this.to(path).length} requests, not ${count}`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    return this.to(path)
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy()
    this.server.closeAllConnections()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }
}

/** Verifies a request as a receiver must: the v1 HMAC-SHA256 of `id.timestamp.body` under the secret's decoded bytes. */
export function assertSigned(request: Received, secret: string): void {
  const id = String(request.headers['webhook-id'])
  const timestamp = String(request.headers['webhook-timestamp'])
  const signatures = request.headers['webhook-signature']
  assert.equal(typeof request.headers['webhook-id'], 'string', 'webhook-id is sent')
  assert.match(String(timestamp), /^\d+$/, 'webhook-timestamp is Unix seconds')
  assert.ok(Math.abs(Number(timestamp) - Date.now() / 1000) < 300, 'webhook-timestamp is now')
  assert.equal(typeof signatures, 'string', 'webhook-signature is sent')
  assert.ok(secret.startsWith('whsec_'))
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64')
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${request.body}`).digest()
  const matches = String(signatures)
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .some((s) => {
      const given = Buffer.from(s.slice(3), 'base64')
      return given.length === expected.length && timingSafeEqual(given, expected)
    })
  assert.ok(matches, `the signature ${String(signatures)} verifies with the secret`)
}

/** Polls `read` until `done` holds of what it returns. */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, deadlineMs = 15_000): Promise<T> {
  const until = Date.now() + deadlineMs
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > until) assert.fail(`still not done: ${JSON.stringify(value).slice(0, 2000)}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}
