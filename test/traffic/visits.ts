/**
 * A scripted set of visits to a site and the figures they must give: three people and a bot,
 * pages, a stylesheet, a HEAD, links from other sites and from the site itself, and a broken link.
 */
import assert from 'node:assert/strict'
import { bundle, type TestServer } from '../helpers/server.ts'

export const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'
export const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0'
export const SAFARI = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15'
export const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'

/** The site the visits are made to: bundle() and an about page. */
export const SITE_FILES = bundle('Counted', [
  {
    path: 'about.html',
    content:
      '<!doctype html><html lang="en"><head><meta name="viewport" content="width=device-width, initial-scale=1"><title>About</title></head><body><p>About</p></body></html>',
  },
])

/** Env a server of these tests runs with: the address is the X-Forwarded-For one, as behind a proxy on loopback. */
export const TRAFFIC_ENV = { PLINTH_TRUST_PROXY: 'loopback' }

interface Visit {
  path: string
  agent: string
  address: string
  referer?: string
  method?: string
}

/** The visits, in order; `own` is a page of the site itself (its own links are not referrers). */
export function scriptedVisits(slug: string): Visit[] {
  const own = `http://${slug}.plinth.test:8080/about`
  const a = { agent: CHROME, address: '203.0.113.1' }
  const b = { agent: FIREFOX, address: '203.0.113.2' }
  // Same address as a, another browser: another visitor, though here it only meets a 404.
  const c = { agent: SAFARI, address: '203.0.113.1' }
  return [
    { ...a, path: '/', referer: 'https://news.example.com/item?id=1' },
    { ...a, path: '/about', referer: `http://${slug}.plinth.test:8080/` },
    { ...a, path: '/style.css', referer: `http://${slug}.plinth.test:8080/` },
    { ...a, path: '/', method: 'HEAD' },
    { ...b, path: '/?utm_source=x', referer: 'https://www.search.example/?q=plinth' },
    { ...b, path: '/missing-page', referer: own },
    { ...c, path: '/missing-page' },
    { agent: GOOGLEBOT, address: '66.249.66.1', path: '/' },
    { agent: GOOGLEBOT, address: '66.249.66.1', path: '/wp-admin' },
  ]
}

/** Makes the visits on `server` (each to the server given for it, when a list), returning the body bytes sent. */
export async function visit(servers: TestServer | TestServer[], slug: string, visits: Visit[]): Promise<number> {
  const list = Array.isArray(servers) ? servers : [servers]
  let bytes = 0
  for (const [i, one] of visits.entries()) {
    const server = list[i % list.length]!
    const headers: Record<string, string> = { 'user-agent': one.agent, 'x-forwarded-for': one.address }
    if (one.referer) headers.referer = one.referer
    const res = await server.site(slug, one.path, { method: one.method ?? 'GET', headers })
    assert.ok(res.status === 200 || res.status === 404, `${one.path}: ${res.status}`)
    bytes += res.body.length
  }
  return bytes
}

/** What the scripted visits give, made `times` times (the people come back; visitors stay 2). */
export function expectedTotals(bytes: number, times = 1) {
  return { requests: 9 * times, pageViews: 3 * times, visitors: 2, bytes, notFound: 2 * times, bots: 2 * times }
}

export async function trafficOf(server: TestServer, token: string, websiteId: string, query = ''): Promise<any> {
  const res = await server.api('GET', `/v1/websites/${websiteId}/traffic${query}`, { token })
  assert.equal(res.status, 200, res.text)
  return res.body
}

/** The lists the scripted visits give, made `times` times. */
export function assertLists(traffic: any, slug: string, times = 1): void {
  assert.deepEqual(traffic.topPaths, [
    { path: '/', pageViews: 2 * times },
    { path: '/about', pageViews: times },
  ])
  assert.deepEqual(traffic.topReferrers, [
    { host: 'news.example.com', pageViews: times },
    { host: 'www.search.example', pageViews: times },
  ])
  assert.deepEqual(traffic.notFoundPaths, [
    { path: '/missing-page', count: 2 * times, referrers: [{ url: `http://${slug}.plinth.test:8080/about`, count: times }] },
  ])
}
