/** Shared set-up of the content suites: a user with a site, a collection of every field type, an image host. */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { RICH_TEXT_MAX_CHARS } from '../../src/core/limits.ts'
import { createSite, createUser } from './factories.ts'
import { bundle, type TestServer } from './server.ts'

/**
 * A local image host on 127.0.0.1 serving `/img/{n}.png` from `image(n)` (404 when it returns
 * undefined), counting the requests per path. Plinth reaches it through PLINTH_FETCH_ALLOW_HOSTS.
 */
export async function startImageHost(image: (n: number) => Buffer | undefined) {
  const hits = new Map<string, number>()
  const server = http.createServer((req, res) => {
    hits.set(req.url!, (hits.get(req.url!) ?? 0) + 1)
    const match = /^\/img\/(\d+)\.png$/.exec(req.url ?? '')
    const bytes = match ? image(Number(match[1])) : undefined
    if (!bytes) return res.writeHead(404).end()
    res.writeHead(200, { 'content-type': 'image/png' }).end(bytes)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    origin,
    hits,
    /** The setting that lets Plinth fetch from this host. */
    env: { PLINTH_FETCH_ALLOW_HOSTS: new URL(origin).host },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

/** The costliest rich text of its size we know: nothing but tiny elements, as long as a value may be. */
export const PATHOLOGICAL_RICH_TEXT = '<p>a <b>b</b></p>'.repeat(Math.floor(RICH_TEXT_MAX_CHARS / '<p>a <b>b</b></p>'.length))

export const FIELDS = [
  { name: 'title', label: 'Title', type: 'text', required: true, maxLength: 100 },
  { name: 'body', label: 'Body', type: 'richText' },
  { name: 'cover', label: 'Cover', type: 'image' },
  { name: 'day', label: 'Day', type: 'date' },
  { name: 'price', label: 'Price', type: 'number', min: 0, max: 1000 },
  { name: 'featured', label: 'Featured', type: 'boolean' },
  { name: 'link', label: 'Link', type: 'url' },
  { name: 'kind', label: 'Kind', type: 'choice', options: ['news', 'review'] },
]

export async function siteWithCollection(server: TestServer, name = 'posts', files = bundle()) {
  const user = await createUser(server)
  const { websiteId, slug } = await createSite(server, { owner: user, name: 'Content site', files })
  const collection = await server.api('POST', `/v1/websites/${websiteId}/collections`, { token: user.token, body: { name, label: 'Posts', fields: FIELDS } })
  if (collection.status !== 201) throw new Error(`collection: ${collection.status} ${collection.text}`)
  return { user, websiteId, slug, base: `/v1/websites/${websiteId}/collections/${name}` }
}
