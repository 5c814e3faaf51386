/**
 * 3. Memory: the Plinth child's resident memory (VmRSS from /proc/<pid>/status) before and after
 * publishing N small sites (3 files each) through the API and serving each once.
 */
import { performance } from 'node:perf_hooks'
import { makeTempDir, rssOf, spawnChild } from './lib/children.ts'
import { smallSite } from './lib/content.ts'
import { api, pool, siteGet } from './lib/http.ts'
import { fmtMiB } from './lib/load.ts'
import { plinthEnv, SETTINGS, SITE_DOMAIN } from './lib/settings.ts'

export interface MemoryResult {
  sites: number
  rssBefore: number
  rssAfter: number
  perSite: number
  heapBefore: number
  heapAfter: number
  rssAfterGc: number
  publishSeconds: number
  serveSeconds: number
  cachedSites: number
  cachedBlobBytes: number
}

interface Stats {
  memory: NodeJS.MemoryUsage
  site: { sites: number; blobBytes: number; blobEntries: number }
}

const PUBLISH_CONCURRENCY = 4
const SERVE_CONCURRENCY = 8
const WARMUP_SITES = 20
const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`

export async function memoryPhase(): Promise<MemoryResult> {
  const sites = Math.max(1, Math.floor(SETTINGS.sites))
  console.log(`\n== 3. Memory after publishing ${sites.toLocaleString('en-US')} small sites and serving each once ==`)
  const dataDir = await makeTempDir('memory')
  const plinth = await spawnChild('plinth', 'plinth-server.ts', plinthEnv(dataDir, { PLINTH_MAX_WEBSITES: String(sites + WARMUP_SITES + 10) }), ['--expose-gc'])
  const token = plinth.info.token as string

  // Warm the publish and serve paths up (JIT, caches, SQLite pages) on a few sites not counted,
  // then take the baseline after a full GC so startup garbage (tsx compiling src/) is not in it.
  const publishSite = (slug: string, i: number) =>
    api(plinth.port, token, 'POST', '/v1/websites', { name: `Memory ${slug}`, category: 'other', slug, files: smallSite(i) })
  const serveSite = async (slug: string) => {
    const reply = await siteGet(plinth.port, `${slug}.${SITE_DOMAIN}`, '/')
    if (reply.status !== 200 || !reply.body.toString('utf8').startsWith('<!doctype html>')) throw new Error(`${slug} served ${reply.status}`)
  }
  await pool(WARMUP_SITES, PUBLISH_CONCURRENCY, async (i) => {
    await publishSite(`warm-site-${i}`, -i)
    await serveSite(`warm-site-${i}`)
  })
  const gcBefore = await plinth.ask<Stats>('gc')
  await new Promise((resolve) => setTimeout(resolve, 500))
  const rssBefore = rssOf(plinth.pid)

  const slug = (i: number) => `mem-site-${String(i).padStart(5, '0')}`
  const publishStarted = performance.now()
  await pool(sites, PUBLISH_CONCURRENCY, (i) => publishSite(slug(i), i))
  const publishSeconds = (performance.now() - publishStarted) / 1000
  const serveStarted = performance.now()
  await pool(sites, SERVE_CONCURRENCY, (i) => serveSite(slug(i)))
  const serveSeconds = (performance.now() - serveStarted) / 1000

  const rssAfter = rssOf(plinth.pid)
  const gcAfter = await plinth.ask<Stats>('gc')
  await new Promise((resolve) => setTimeout(resolve, 500))
  const rssAfterGc = rssOf(plinth.pid)
  const perSite = (rssAfter - rssBefore) / sites

  console.log(
    `  published ${sites} sites in ${publishSeconds.toFixed(1)} s (${(sites / publishSeconds).toFixed(0)} sites/s, ${PUBLISH_CONCURRENCY} at a time); served each once in ${serveSeconds.toFixed(1)} s`,
  )
  console.log(`  site server caches: ${gcAfter.site.sites} versions, ${gcAfter.site.blobEntries} blobs (${kib(gcAfter.site.blobBytes)})`)
  console.log(`  RSS before (after ${WARMUP_SITES} warm-up sites and a full GC): ${fmtMiB(rssBefore).padStart(10)}`)
  console.log(`  RSS after publishing and serving:                   ${fmtMiB(rssAfter).padStart(10)}   (+${fmtMiB(rssAfter - rssBefore)})`)
  console.log(`  RSS increment per site:                             ${kib(perSite).padStart(10)}`)
  console.log(
    `  after a forced full GC: RSS ${fmtMiB(rssAfterGc)}; JS heap used ${fmtMiB(gcBefore.memory.heapUsed)} -> ${fmtMiB(gcAfter.memory.heapUsed)} ` +
      `(${kib((gcAfter.memory.heapUsed - gcBefore.memory.heapUsed) / sites)} retained per site), external+buffers ${fmtMiB(gcBefore.memory.external)} -> ${fmtMiB(gcAfter.memory.external)}`,
  )

  await plinth.stop()
  return {
    sites,
    rssBefore,
    rssAfter,
    perSite,
    heapBefore: gcBefore.memory.heapUsed,
    heapAfter: gcAfter.memory.heapUsed,
    rssAfterGc,
    publishSeconds,
    serveSeconds,
    cachedSites: gcAfter.site.sites,
    cachedBlobBytes: gcAfter.site.blobBytes,
  }
}
