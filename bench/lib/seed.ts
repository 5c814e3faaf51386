/**
 * Seeding for the content benchmark, run inside the Plinth child before it reports ready: a user's
 * site (the 4 KB page) with two collections created through the services (the same checks as the
 * API), then `count` entries written straight into the big one with EntriesRepository.insertMany,
 * as test/content/entries.test.ts fills 10,000. Those rows skip validation and rendering (their
 * `rendered` is hand-made HTML of the same shape), which only the listing reads.
 */

import type { Principal } from '../../src/core/principal.ts'
import { EntriesRepository } from '../../src/content/entries.repository.ts'
import { newId } from '../../src/core/ids.ts'
import type { startServer } from '../../src/server.ts'
import { CONTENT_FIELDS, fourKbPage, SMALL_CSS, seedWords as words } from './content.ts'

export const CONTENT_SITE = 'bench-content'
/** Written over REST by the benchmark (upsertEntries, the entry page). */
export const POSTS = 'posts'
/** Filled here with `count` entries (listEntries). */
export const ARCHIVE = 'archive'

type Server = Awaited<ReturnType<typeof startServer>>

export interface SeedInfo {
  websiteId: string
  siteSlug: string
  archiveId: string
  seeded: number
  seedSeconds: number
}

export async function seedContent(server: Server, principal: Principal, count: number): Promise<SeedInfo> {
  const { services } = server
  const { result } = await services.publishing.create(principal, {
    name: 'Bench content',
    category: 'other',
    slug: CONTENT_SITE,
    files: [
      { path: 'index.html', content: fourKbPage() },
      { path: 'style.css', content: SMALL_CSS },
    ],
  } as never)
  const fields = CONTENT_FIELDS as never
  await services.collections.create(principal, result.websiteId, { name: POSTS, label: 'Posts', fields })
  const archive = await services.collections.create(principal, result.websiteId, { name: ARCHIVE, label: 'Archive', fields })

  const started = performance.now()
  const repo = new EntriesRepository(server.db.kysely)
  const base = Date.UTC(2020, 0, 1)
  const CHUNK = 10_000 // rows built and inserted per transaction, to bound the memory held at once
  for (let from = 0; from < count; from += CHUNK) {
    const rows = []
    for (let i = from; i < Math.min(count, from + CHUNK); i++) {
      // Three entries per minute: publishedAt ties, so the id tie-break of the order is exercised.
      const at = new Date(base + Math.floor(i / 3) * 60_000).toISOString()
      const title = `${words(6, i)} ${i}`
      const summary = words(12, i + 7)
      const [a, b, c] = [words(30, i + 1), words(3, i + 2), words(25, i + 3)]
      rows.push({
        id: newId('ent'),
        collection_id: archive.id,
        slug: `entry-${i}`,
        published_at: at,
        created_at: at,
        updated_at: at,
        data: JSON.stringify({ title, summary, body: { markdown: `${a} **${b}**.\n\n${c}.\n` }, rank: i }),
        rendered: JSON.stringify({ title, summary, body: `<p>${a} <strong>${b}</strong>.</p>\n<p>${c}.</p>\n`, rank: i }),
        content_hash: `seed-${i}`,
      })
    }
    await repo.insertMany(rows)
  }
  return { websiteId: result.websiteId, siteSlug: result.slug, archiveId: archive.id, seeded: count, seedSeconds: (performance.now() - started) / 1000 }
}
