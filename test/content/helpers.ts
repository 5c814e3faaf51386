/** Shared set-up of the content suites: a user with a site, and a collection of every field type. */
import { bundle, type TestServer } from '../helpers/server.ts'

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
  const user = await server.user()
  const created = await server.api('POST', '/v1/websites', { token: user.token, body: { name: 'Content site', category: 'other', files } })
  if (created.status !== 201) throw new Error(`site: ${created.status} ${created.text}`)
  const websiteId = created.body.websiteId as string
  const collection = await server.api('POST', `/v1/websites/${websiteId}/collections`, { token: user.token, body: { name, label: 'Posts', fields: FIELDS } })
  if (collection.status !== 201) throw new Error(`collection: ${collection.status} ${collection.text}`)
  return { user, websiteId, base: `/v1/websites/${websiteId}/collections/${name}` }
}
