/** The password form of a protected site, posted to a site host as a browser posts it, and the cookie it sets. */
import http from 'node:http'
import { SITE_DOMAIN, type TestServer } from './server.ts'

/** A POST of the password form to `/.plinth/unlock` on the site host `label` (`slug`, `slug--v2`, a draft's `slug--d…`). */
export function unlockSite(
  server: TestServer,
  label: string,
  password: string,
  options: { next?: string; origin?: string; cookie?: string; forwardedFor?: string } = {},
) {
  const body = new URLSearchParams({ password, ...(options.next ? { next: options.next } : {}) }).toString()
  const { port } = new URL(server.url)
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/.plinth/unlock',
        method: 'POST',
        agent: false,
        headers: {
          host: `${label}.${SITE_DOMAIN}`,
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': String(Buffer.byteLength(body)),
          ...(options.origin ? { origin: options.origin } : {}),
          ...(options.cookie ? { cookie: options.cookie } : {}),
          ...(options.forwardedFor ? { 'x-forwarded-for': options.forwardedFor } : {}),
        },
      },
      (res) => {
        let text = ''
        res.on('data', (c) => (text += c))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }))
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

/** The `name=value` of the first cookie a response sets ('' when none). */
export const cookieOf = (res: { headers: http.IncomingHttpHeaders }) => String(res.headers['set-cookie']?.[0] ?? '').split(';')[0]!
