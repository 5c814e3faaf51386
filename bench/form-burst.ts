/**
 * A burst of form posts against a running Plinth child: 500 submissions to one form from 50
 * keep-alive connections at once, while GET /v1 is asked one request after another. Every post
 * must be acknowledged (201) or refused with 429 and Retry-After, and the form must hold exactly
 * the acknowledged ones afterwards; the figure is how long GET /v1 waited meanwhile.
 */
import http from 'node:http'
import { api, probedDuring } from './lib/http.ts'
import { SITE_DOMAIN } from './lib/settings.ts'

export const FORM_BURST_POSTS = 500
export const FORM_BURST_CONNECTIONS = 50
/** GET /v1 answers within this many ms at worst while the burst is taken. */
export const FORM_BURST_API_TARGET_MS = 200

export interface FormBurstResult {
  acknowledged: number
  refused: number
  /** Acknowledged posts the form does not hold, plus any it holds that were not acknowledged. */
  lost: number
  /** Other answers than 201 and 429 with Retry-After. */
  unexpected: number
  seconds: number
  apiProbes: number[]
}

const BOOKING = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Book</title></head><body>
<form method="post" action="/_forms/booking"><label>Name <input name="name" required></label><label>Guests <input name="party"></label>
<label>Notes <textarea name="notes"></textarea></label><button>Book</button></form></body></html>`

function post(agent: http.Agent, port: number, host: string, body: string): Promise<{ status: number; retryAfter: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/_forms/booking',
        agent,
        headers: { host, 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body), accept: 'application/json' },
      },
      (res) => {
        res.resume()
        res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] }))
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

export async function formBurst(port: number, token: string): Promise<FormBurstResult> {
  const site = await api<{ websiteId: string; slug: string }>(port, token, 'POST', '/v1/websites', {
    name: 'Bench bookings',
    category: 'restaurant',
    slug: 'bench-bookings',
    files: [{ path: 'index.html', content: BOOKING }],
  })
  const host = `${site.slug}.${SITE_DOMAIN}`
  const agent = new http.Agent({ keepAlive: true, maxSockets: FORM_BURST_CONNECTIONS })
  const started = performance.now()
  const { result: answers, probes } = await probedDuring(port, () =>
    Promise.all(
      Array.from({ length: FORM_BURST_POSTS }, (_, i) =>
        post(agent, port, host, new URLSearchParams({ name: `Guest ${i}`, party: String((i % 6) + 1), notes: `burst ${i}` }).toString()),
      ),
    ),
  )
  const seconds = (performance.now() - started) / 1000
  agent.destroy()
  const acknowledged = answers.filter((a) => a.status === 201).length
  const refused = answers.filter((a) => a.status === 429 && /^[1-9]\d*$/.test(a.retryAfter ?? '')).length
  const forms = await api<{ items: Array<{ name: string; submissions: number }> }>(port, token, 'GET', `/v1/websites/${site.websiteId}/forms`)
  const stored = forms.items.find((f) => f.name === 'booking')?.submissions ?? 0
  return { acknowledged, refused, lost: Math.abs(acknowledged - stored), unexpected: FORM_BURST_POSTS - acknowledged - refused, seconds, apiProbes: probes }
}
