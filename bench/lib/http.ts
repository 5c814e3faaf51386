/** Minimal HTTP client for the benchmark: keep-alive node:http, raw bytes back, JSON helpers. */
import http from 'node:http'
import { performance } from 'node:perf_hooks'

export const agent = new http.Agent({ keepAlive: true, maxSockets: 16 })

export interface Reply {
  status: number
  headers: http.IncomingHttpHeaders
  rawHeaders: string[]
  body: Buffer
}

export function request(
  port: number,
  options: { method?: string; path?: string; headers?: Record<string, string>; body?: Buffer },
  timeoutMs = 60_000,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...options.headers }
    if (options.body) headers['content-length'] = options.body.length
    const req = http.request({ host: '127.0.0.1', port, method: options.method ?? 'GET', path: options.path ?? '/', headers, agent }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks) }))
      res.on('error', reject)
    })
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`${options.method ?? 'GET'} ${options.path} timed out after ${timeoutMs} ms`)))
    req.on('error', reject)
    req.end(options.body)
  })
}

/** A JSON API call with a bearer token; throws with the server's message unless 2xx. */
export async function api<T = any>(port: number, token: string, method: string, path: string, body?: Buffer | object): Promise<T> {
  const bytes = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body))
  const headers: Record<string, string> = { authorization: `Bearer ${token}` }
  if (bytes) headers['content-type'] = 'application/json'
  const reply = await request(port, { method, path, headers, body: bytes })
  const text = reply.body.toString('utf8')
  if (reply.status < 200 || reply.status >= 300) {
    throw new Error(`${method} ${path} -> ${reply.status}: ${text.slice(0, 2000)}`)
  }
  return JSON.parse(text) as T
}

/** GET a page of a site by its host name. */
export function siteGet(port: number, host: string, path = '/', headers: Record<string, string> = {}): Promise<Reply> {
  return request(port, { path, headers: { host, ...headers } })
}

/** Runs `task(i)` for i in [0, count) with at most `limit` running at once. */
export async function pool(count: number, limit: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < count) await task(next++)
  }
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker))
}

/** Runs `task` on every item, at most `limit` at a time. */
export async function poolEach<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  const queue = items.values()
  const worker = async () => {
    for (const item of queue) await task(item)
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
}

/**
 * Runs `work` while asking the server for GET /v1 one request after another (5 ms apart), and
 * gives its result with each probe's latency in ms. A reply of megabytes should be read raw and
 * parsed after the work ends: parsing it meanwhile would stall this process's probe and count as
 * the server's latency.
 */
export async function probedDuring<T>(port: number, work: () => Promise<T>): Promise<{ result: T; probes: number[] }> {
  const probes: number[] = []
  let working = true
  const probing = (async () => {
    while (working) {
      const started = performance.now()
      const reply = await request(port, { path: '/v1' })
      if (reply.status !== 200) throw new Error(`GET /v1 -> ${reply.status}`)
      probes.push(performance.now() - started)
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  })()
  try {
    return { result: await work(), probes }
  } finally {
    working = false
    await probing
  }
}
