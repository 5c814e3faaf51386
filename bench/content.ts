/**
 * 4. Content: upsertEntries of 100 entries over REST (fresh entries, then the same batch again,
 * all unchanged), the API's worst latency while a batch of maximal pathological rich text renders, listEntries on a collection of BENCH_CONTENT_ENTRIES entries (first page and a
 * page deep in the listing reached by cursor), and a warm entry page (default template) under
 * load next to the same site's static 4 KB page. One Plinth child, which creates the site and
 * collections and bulk-inserts the big collection before it reports ready (lib/seed.ts).
 */
import { randomBytes } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { makeTempDir, spawnChild } from './lib/children.ts'
import { entryBatch, fourKbPage } from './lib/content.ts'
import { RICH_TEXT_MAX_CHARS } from '../src/core/limits.ts'
import { api, probedDuring, request, siteGet } from './lib/http.ts'
import { compare, fmtInt, type LoadResult, percentile, timed } from './lib/load.ts'
import { ARCHIVE, POSTS, type SeedInfo } from './lib/seed.ts'
import { plinthEnv, SETTINGS, SITE_DOMAIN } from './lib/settings.ts'

interface Timing {
  p50: number
  p95: number
  max: number
  n: number
}

export interface ContentResult {
  batchSize: number
  fresh: Timing
  unchanged: Timing
  /** Worst and median GET /v1 latency while a batch of maximal pathological rich text is written. */
  probe: { worst: number; p50: number; n: number; batchMs: number; results: Record<string, number> }
  entries: number
  seedSeconds: number
  firstPage: Timing
  deepPage: Timing
  deepPosition: number
  walkSeconds: number
  walkRequests: number
  pageLimit: number
  entryPage: LoadResult
  staticPage: LoadResult
  entryBytes: number
  clean: boolean
}

const BATCH = 100
const BATCHES = 15
/** Targets: 100 new entries at most this p50, and at most this many times the unchanged batch. */
export const UPSERT_P50_TARGET_MS = 100
export const UPSERT_RATIO_TARGET = 5
/** Worst GET /v1 latency while a maximal rich-text batch is written, under this. */
export const PROBE_TARGET_MS = 100
const PATHOLOGICAL_ITEMS = 30
const LIST_REQUESTS = 50
const WALK_LIMIT = 100
const DEFAULT_LIMIT = 20

const timing = (ms: number[]): Timing => ({ p50: percentile(ms, 50), p95: percentile(ms, 95), max: Math.max(...ms), n: ms.length })
const line = (label: string, t: Timing) =>
  `  ${label.padEnd(52)} p50 ${t.p50.toFixed(1).padStart(7)} ms   p95 ${t.p95.toFixed(1).padStart(7)} ms   max ${t.max.toFixed(1).padStart(7)} ms   (${t.n} requests)`

export async function contentPhase(): Promise<ContentResult> {
  const entries = Math.max(1, Math.floor(SETTINGS.contentEntries))
  console.log(`\n== 4. Content: upsertEntries, listEntries on ${entries.toLocaleString('en-US')} entries, a warm entry page ==`)
  const dataDir = await makeTempDir('content')
  const spawned = performance.now()
  const plinth = await spawnChild('plinth', 'plinth-server.ts', plinthEnv(dataDir, { BENCH_SEED_ENTRIES: String(entries) }), [], 180_000)
  const token = plinth.info.token as string
  const seed = plinth.info.seed as SeedInfo
  console.log(
    `  child ready in ${((performance.now() - spawned) / 1000).toFixed(1)} s; ${seed.seeded.toLocaleString('en-US')} entries bulk-inserted into "${ARCHIVE}" ` +
      `with EntriesRepository.insertMany in ${seed.seedSeconds.toFixed(1)} s (${fmtInt(seed.seeded / seed.seedSeconds)} rows/s)`,
  )
  const collections = `/v1/websites/${seed.websiteId}/collections`

  // 1. upsertEntries: batches of 100 fresh entries (all created), then one batch re-sent (all unchanged).
  const batchPath = `${collections}/${POSTS}/entries/batch`
  const nonce = randomBytes(4).toString('hex')
  const send = async (body: Buffer, expect: 'created' | 'unchanged') => {
    const result = await api<{ counts: Record<string, number> }>(plinth.port, token, 'POST', batchPath, body)
    if (result.counts[expect] !== BATCH) throw new Error(`upsertEntries: expected ${BATCH} ${expect}, got ${JSON.stringify(result.counts)}`)
  }
  const batchBody = (n: number) => Buffer.from(JSON.stringify({ entries: entryBatch('post', n * BATCH, BATCH, nonce) }))
  await send(batchBody(0), 'created') // warm-up (JIT, markdown-it, DOMPurify on jsdom); not timed
  const fresh: number[] = []
  let last = Buffer.alloc(0)
  for (let b = 1; b <= BATCHES; b++) {
    last = batchBody(b)
    await timed(fresh, () => send(last, 'created'))
  }
  const unchanged: number[] = []
  for (let b = 0; b < BATCHES; b++) await timed(unchanged, () => send(last, 'unchanged'))
  const freshT = timing(fresh)
  const unchangedT = timing(unchanged)
  console.log(
    `  upsertEntries: ${BATCH} entries a batch (text, text, markdown rich text ~1.2 KB, number; no images), ${fmtInt(last.length)} B of JSON, timed until the 200 arrives`,
  )
  console.log(line(`${BATCH} new entries (created)`, freshT))
  console.log(line(`the same ${BATCH} again (unchanged)`, unchangedT))
  const ratio = freshT.p50 / unchangedT.p50
  console.log(
    `  new p50 ${freshT.p50.toFixed(1)} ms (target <= ${UPSERT_P50_TARGET_MS} ms): ${freshT.p50 <= UPSERT_P50_TARGET_MS ? 'PASS' : 'FAIL'}; ` +
      `new / unchanged p50 ${ratio.toFixed(2)} (target <= ${UPSERT_RATIO_TARGET}): ${ratio <= UPSERT_RATIO_TARGET ? 'PASS' : 'FAIL'}`,
  )

  // 1b. The API's latency while a batch of maximal pathological rich text is rendered: 30 items of
  // `<p>a <b>b</b></p>` as long as accepted. GET /v1 is asked one request after another meanwhile.
  const unit = '<p>a <b>b</b></p>'
  const pathological = unit.repeat(Math.floor(RICH_TEXT_MAX_CHARS / unit.length))
  const heavy = Buffer.from(
    JSON.stringify({
      entries: Array.from({ length: PATHOLOGICAL_ITEMS }, (_, i) => ({
        slug: `heavy-${nonce}-${i}`,
        data: { title: `Heavy ${i}`, body: { html: pathological } },
      })),
    }),
  )
  const heavyStarted = performance.now()
  const { result: heavyReply, probes } = await probedDuring(plinth.port, () =>
    request(plinth.port, {
      method: 'POST',
      path: batchPath,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: heavy,
    }),
  )
  const batchMs = performance.now() - heavyStarted
  if (heavyReply.status !== 200) throw new Error(`pathological batch -> ${heavyReply.status}: ${heavyReply.body.toString('utf8').slice(0, 500)}`)
  const heavyResult = JSON.parse(heavyReply.body.toString('utf8')) as { results: Array<{ error?: { code: string } }> }
  const outcomes: Record<string, number> = {}
  for (const r of heavyResult.results) outcomes[r.error?.code ?? 'created'] = (outcomes[r.error?.code ?? 'created'] ?? 0) + 1
  const probe = { worst: Math.max(...probes), p50: percentile(probes, 50), n: probes.length, batchMs, results: outcomes }
  console.log(
    `  ${PATHOLOGICAL_ITEMS} entries of ${RICH_TEXT_MAX_CHARS.toLocaleString('en-US')} characters of ${unit} (${fmtInt(heavy.length)} B): answered in ${(batchMs / 1000).toFixed(1)} s, ${JSON.stringify(outcomes)}`,
  )
  console.log(
    `  GET /v1 meanwhile: worst ${probe.worst.toFixed(1)} ms, p50 ${probe.p50.toFixed(1)} ms (${probe.n} requests; target worst < ${PROBE_TARGET_MS} ms): ${probe.worst < PROBE_TARGET_MS ? 'PASS' : 'FAIL'}`,
  )

  // 2. listEntries on the big collection: the first page, then a page deep in the listing.
  const listPath = `${collections}/${ARCHIVE}/entries`
  type Page = { items: Array<{ slug: string }>; nextCursor: string | null }
  const list = (query: string) => api<Page>(plinth.port, token, 'GET', `${listPath}${query}`)
  for (let i = 0; i < 5; i++) await list('') // warm-up
  const first: number[] = []
  for (let i = 0; i < LIST_REQUESTS; i++) {
    const page = await timed(first, () => list(''))
    if (page.items.length !== Math.min(DEFAULT_LIMIT, entries) || !page.items[0]?.slug.startsWith('entry-'))
      throw new Error('listEntries: unexpected first page')
  }
  // Walk by cursor (pages of 100) to the middle of the listing, then time the default page from there.
  const walkPages = Math.floor(entries / 2 / WALK_LIMIT)
  let cursor: string | null = null
  const walkStarted = performance.now()
  for (let p = 0; p < walkPages; p++) {
    const page: Page = await list(`?limit=${WALK_LIMIT}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
    if (page.items.length !== WALK_LIMIT || !page.nextCursor) throw new Error(`listEntries: walk ended early at page ${p + 1}`)
    cursor = page.nextCursor
  }
  const walkSeconds = (performance.now() - walkStarted) / 1000
  const deepPosition = walkPages * WALK_LIMIT
  const deep: number[] = []
  const deepQuery = cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''
  for (let i = 0; i < LIST_REQUESTS; i++) {
    const page = await timed(deep, () => list(deepQuery))
    if (page.items.length !== Math.min(DEFAULT_LIMIT, entries - deepPosition)) throw new Error('listEntries: unexpected deep page')
  }
  const firstT = timing(first)
  const deepT = timing(deep)
  console.log(`  listEntries on "${ARCHIVE}" (${entries.toLocaleString('en-US')} entries, ~0.9 KB of data + rendered each), default limit ${DEFAULT_LIMIT}:`)
  console.log(line('first page', firstT))
  console.log(line(`page at entry ${deepPosition.toLocaleString('en-US')} (by cursor)`, deepT))
  console.log(
    `    reached by walking ${walkPages} pages of ${WALK_LIMIT} by cursor in ${walkSeconds.toFixed(1)} s (${((1000 * walkSeconds) / Math.max(1, walkPages)).toFixed(1)} ms a page)`,
  )

  // 3. A warm entry page (default template) under load, next to the same site's static page.
  const host = `${seed.siteSlug}.${SITE_DOMAIN}`
  const entryPath = `/${POSTS}-post-1`
  const entryReply = await siteGet(plinth.port, host, entryPath)
  const staticReply = await siteGet(plinth.port, host, '/')
  if (entryReply.status !== 200 || !String(entryReply.headers['content-type']).startsWith('text/html') || !entryReply.body.toString('utf8').includes(nonce)) {
    throw new Error(`entry page ${entryPath} served ${entryReply.status}: ${entryReply.body.toString('utf8').slice(0, 500)}`)
  }
  if (staticReply.status !== 200 || !staticReply.body.equals(Buffer.from(fourKbPage()))) throw new Error(`static page served ${staticReply.status}`)
  console.log(
    `  entry page ${entryPath}: ${fmtInt(entryReply.body.length)} B (default template, rendered once, then from the page cache); static page /: ${fmtInt(staticReply.body.length)} B; ` +
      `Host: ${host}; same autocannon settings and interleaving as section 1`,
  )
  const h = { host }
  const [entryPage, staticPage] = await compare(
    [
      { label: 'Plinth, entry page (default template)', url: `${plinth.info.address}${entryPath}`, headers: h, pid: plinth.pid },
      { label: 'Plinth, same site, static 4 KB page', url: `${plinth.info.address}/`, headers: h, pid: plinth.pid },
    ],
    SETTINGS,
  )
  console.log(`  ratio entry page / static page (req/s): ${(entryPage.rps / staticPage.rps).toFixed(3)}`)
  const clean = [entryPage, staticPage].every((r) => r.errors === 0 && r.timeouts === 0 && r.non2xx === 0)
  if (!clean) console.log('  !! some runs had errors, timeouts or non-2xx responses: the figures above are not trustworthy')

  await plinth.stop()
  return {
    batchSize: BATCH,
    fresh: freshT,
    unchanged: unchangedT,
    probe,
    entries,
    seedSeconds: seed.seedSeconds,
    firstPage: firstT,
    deepPage: deepT,
    deepPosition,
    walkSeconds,
    walkRequests: walkPages,
    pageLimit: DEFAULT_LIMIT,
    entryPage,
    staticPage,
    entryBytes: entryReply.body.length,
    clean,
  }
}
