/**
 * 2. Publishing: time to publish a maximal bundle (40 files, just under 8 MiB decoded, fresh
 * random bytes every time) as a new version of one site over the REST API, then time to republish
 * one of them unchanged, which must add no blob bytes; beside it, the raw cost of the same bytes
 * (JSON parse, base64 decode, SHA-256, write and fsync of every file) and the ratio of the two.
 * Beside each fresh publish, another with the site check turned off, in the same run and on the
 * same server, to tell what the check costs a publish. Then several maximal publishes at once,
 * with the API's latency meanwhile; last, a small publish after a quiet spell, beside the same
 * publish right after it.
 */
import { createHash } from 'node:crypto'
import { mkdir, open, rm } from 'node:fs/promises'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { treeSize } from './lib/blob-files.ts'
import { type Child, makeTempDir, spawnChild } from './lib/children.ts'
import { htmlPage, maximalBundle } from './lib/content.ts'
import { api, probedDuring } from './lib/http.ts'
import { fmtMiB, percentile, timed } from './lib/load.ts'
import { plinthEnv, SETTINGS } from './lib/settings.ts'
import { cpuSince, threadCpu } from './lib/thread-cpu.ts'

export interface PublishingResult {
  iterations: number
  bundleBytes: number
  bodyBytes: number
  fresh: { p50: number; p95: number; max: number }
  /** The same fresh publishes without the site check, interleaved with them. */
  withoutCheck: { p50: number; p95: number; max: number }
  /** What the site check adds to a fresh publish's p50, as a fraction of the p50 without it. */
  checkCost: number
  /** The server's CPU time (every thread) per fresh publish, p50, with the site check and without it. */
  cpu: { withCheck: number; withoutCheck: number }
  unchanged: { p50: number; p95: number; max: number }
  blobBytesAdded: number
  blobFilesAdded: number
  /** The bundle's bytes alone: JSON parse, base64 decode, SHA-256, write and fsync of every file. */
  raw: { p50: number; p95: number; max: number }
  /** Publish p50 over raw p50. */
  rawRatio: number
  /** A small publish after QUIET_MS without work, and one right after it, in ms. */
  afterQuiet: { quietMs: number; ms: number; warmMs: number }
  /** CONCURRENT_PUBLISHES maximal publishes to as many sites at once, CONCURRENT_ROUNDS times: the API's latency meanwhile. */
  concurrent: { publishes: number; rounds: number; wallP50: number; probeWorst: number; probeP50: number; probes: number }
}

/** Untimed publishes after version 1, before the measured ones. */
const WARM_UP_PUBLISHES = 3

/**
 * The quiet before a small publish: longer than an agent's usual pause between two publishes,
 * shorter than the time the content-scan threads wait for work (THREAD_IDLE_MS), so the publish
 * must find them started.
 */
const QUIET_MS = 15_000

/** Maximal publishes sent at once (to as many sites), and how many times, while GET /v1 is probed. */
const CONCURRENT_PUBLISHES = 4
const CONCURRENT_ROUNDS = 3

/** Publish time over the raw cost of its bytes, at most. */
export const PUBLISH_RAW_TARGET = 1.5

/** What the site check may add to a maximal publish's p50, at most (a fraction of the p50 without it). */
export const SITE_CHECK_COST_TARGET = 0.1

/**
 * What the bytes of one publish cost at least, in this process, on the same disk: parse the JSON
 * body, decode each file, hash it, and write and fsync it as a file of its own (and its folder).
 */
async function rawCost(body: Buffer, dir: string): Promise<number> {
  const started = performance.now()
  const { files } = JSON.parse(body.toString('utf8')) as { files: Array<{ path: string; content: string; contentEncoding?: string }> }
  await mkdir(dir, { recursive: true })
  await Promise.all(
    files.map(async (file, i) => {
      const bytes = Buffer.from(file.content, file.contentEncoding === 'base64' ? 'base64' : 'utf8')
      const hash = createHash('sha256').update(bytes).digest('hex')
      const handle = await open(path.join(dir, `${i}-${hash}`), 'w')
      try {
        await handle.writeFile(bytes)
        await handle.sync()
      } finally {
        await handle.close()
      }
    }),
  )
  const folder = await open(dir, 'r')
  await folder.sync()
  await folder.close()
  const ms = performance.now() - started
  await rm(dir, { recursive: true, force: true })
  return ms
}

const stats = (ms: number[]) => ({ p50: percentile(ms, 50), p95: percentile(ms, 95), max: Math.max(...ms) })
const line = (label: string, s: { p50: number; p95: number; max: number }, n: number) =>
  `  ${label.padEnd(44)} p50 ${s.p50.toFixed(0).padStart(6)} ms   p95 ${s.p95.toFixed(0).padStart(6)} ms   max ${s.max.toFixed(0).padStart(6)} ms   (${n} publishes)`

export async function publishingPhase(): Promise<PublishingResult> {
  console.log('\n== 2. Publishing a maximal bundle ==')
  const iterations = Math.max(1, Math.floor(SETTINGS.publishIterations))
  const dataDir = await makeTempDir('publish')
  const blobsDir = path.join(dataDir, 'blobs')
  const plinth = await spawnChild('plinth', 'plinth-server.ts', plinthEnv(dataDir))
  const token = plinth.info.token as string

  // Version 1, then a few more versions, untimed: the publish path, the content-scan workers and the
  // heap are warmed up as a server that has been running is, so the figures are its steady state.
  const first = maximalBundle()
  const site = await api(plinth.port, token, 'POST', '/v1/websites', { name: 'Bench publish', category: 'other', slug: 'bench-publish', files: first.files })
  const versionsPath = `/v1/websites/${site.websiteId}/versions`
  for (let i = 0; i < WARM_UP_PUBLISHES; i++) {
    await plinth.ask('settled')
    await api(plinth.port, token, 'POST', versionsPath, { files: maximalBundle().files, message: `warm-up ${i}` })
  }
  console.log(
    `  bundle: ${first.files.length} files, ${first.bytes.toLocaleString('en-US')} B decoded (${fmtMiB(first.bytes)}; 15 HTML pages, 6 CSS/JS, 19 random images, 2 of them 1.5 MiB)`,
  )

  const fresh: number[] = []
  const withoutCheck: number[] = []
  const cpuWith: number[] = []
  const cpuWithout: number[] = []
  const raw: number[] = []
  let body = Buffer.alloc(0)
  let bundleBytes = 0
  let expected = 2 + WARM_UP_PUBLISHES
  // Each is measured on a quiet server: the compressed variants a publish leaves to make (off its
  // request) are made before the next measurement starts.
  const publishFresh = async (siteCheck: boolean) => {
    const bundle = maximalBundle()
    const sent = Buffer.from(JSON.stringify({ files: bundle.files, message: `bench ${expected}` }))
    await plinth.ask('site-check', { on: siteCheck })
    await plinth.ask('settled')
    const cpuBefore = threadCpu(plinth.pid)
    const result = await timed(siteCheck ? fresh : withoutCheck, () => api(plinth.port, token, 'POST', versionsPath, sent))
    ;(siteCheck ? cpuWith : cpuWithout).push(cpuSince(cpuBefore, threadCpu(plinth.pid)).all)
    if (result.version !== expected++ || result.bytesWritten !== bundle.bytes) throw new Error(`unexpected publish result ${JSON.stringify(result)}`)
    if (!Array.isArray(result.warnings) || (!siteCheck && result.warnings.length > 0)) throw new Error(`unexpected warnings ${JSON.stringify(result.warnings)}`)
    return { sent, bytes: bundle.bytes }
  }
  for (let i = 0; i < iterations; i++) {
    // The publish without the check goes first every other time, so neither always follows the other.
    if (i % 2 === 1) await publishFresh(false)
    ;({ sent: body, bytes: bundleBytes } = await publishFresh(true))
    if (i % 2 === 0) await publishFresh(false)
    await plinth.ask('settled')
    raw.push(await rawCost(body, path.join(dataDir, 'raw')))
  }
  await plinth.ask('site-check', { on: true })
  console.log(`  request body: ${body.length.toLocaleString('en-US')} B of JSON (${fmtMiB(body.length)}), sent over loopback, timed until the 201 arrives`)
  const freshStats = stats(fresh)
  console.log(line('new bytes (fresh random bundle each time)', freshStats, iterations))
  console.log(`    each: ${fresh.map((ms) => ms.toFixed(0)).join(', ')} ms`)
  const withoutStats = stats(withoutCheck)
  const checkCost = freshStats.p50 / withoutStats.p50 - 1
  console.log(line('the same without the site check (interleaved)', withoutStats, iterations))
  const cpu = { withCheck: percentile(cpuWith, 50), withoutCheck: percentile(cpuWithout, 50) }
  console.log(
    `  the site check adds ${(checkCost * 100).toFixed(1)}% to a maximal publish's p50 (target < ${SITE_CHECK_COST_TARGET * 100}%): ${checkCost < SITE_CHECK_COST_TARGET ? 'PASS' : 'FAIL'}; ` +
      `server CPU per publish (every thread, p50): ${cpu.withCheck.toFixed(0)} ms with it, ${cpu.withoutCheck.toFixed(0)} ms without`,
  )
  const rawStats = stats(raw)
  const rawRatio = freshStats.p50 / rawStats.p50
  console.log(line('raw cost of the same bytes', rawStats, iterations))
  console.log(
    `  publish p50 / raw p50: ${rawRatio.toFixed(2)} (target <= ${PUBLISH_RAW_TARGET}): ${rawRatio <= PUBLISH_RAW_TARGET ? 'PASS' : 'FAIL'}; the raw cost runs in this process on the same disk, after each publish, once the server is idle`,
  )

  // Republish the last bundle unchanged: same bytes, so every blob already exists. The server is
  // settled already: the fresh loop's last pass waited for its variants, and nothing was sent since.
  const before = await treeSize(blobsDir)
  const unchanged: number[] = []
  for (let i = 0; i < iterations; i++) {
    await plinth.ask('settled')
    await timed(unchanged, () => api(plinth.port, token, 'POST', versionsPath, body))
  }
  await plinth.ask('settled')
  const after = await treeSize(blobsDir)
  const unchangedStats = stats(unchanged)
  console.log(line('unchanged republish (same bundle again)', unchangedStats, iterations))
  console.log(`    each: ${unchanged.map((ms) => ms.toFixed(0)).join(', ')} ms`)
  const added = after.bytes - before.bytes
  console.log(
    `  blob store: ${before.bytes.toLocaleString('en-US')} B in ${before.files} files before the unchanged republishes, ` +
      `${after.bytes.toLocaleString('en-US')} B in ${after.files} files after: ${added} B added (${after.files - before.files} files): ${added === 0 && after.files === before.files ? 'PASS' : 'FAIL'}`,
  )

  const concurrent = await concurrentPublishes(plinth, token, versionsPath)

  const small = { files: [{ path: 'index.html', content: htmlPage(4096, 'After a quiet spell') }] }
  await sleep(QUIET_MS)
  const smallTimes: number[] = []
  for (let i = 0; i < 2; i++) await timed(smallTimes, () => api(plinth.port, token, 'POST', versionsPath, small))
  const afterQuiet = { quietMs: QUIET_MS, ms: smallTimes[0]!, warmMs: smallTimes[1]! }
  console.log(
    `  a small publish (one 4 KB page) after ${QUIET_MS / 1000} s of quiet: ${afterQuiet.ms.toFixed(1)} ms; the same right after it: ${afterQuiet.warmMs.toFixed(1)} ms`,
  )

  await plinth.stop()
  return {
    iterations,
    bundleBytes,
    bodyBytes: body.length,
    fresh: freshStats,
    withoutCheck: withoutStats,
    checkCost,
    cpu,
    unchanged: unchangedStats,
    blobBytesAdded: added,
    blobFilesAdded: after.files - before.files,
    raw: rawStats,
    rawRatio,
    afterQuiet,
    concurrent,
  }
}

/**
 * The API's latency while several maximal bundles are published at once, one per site, as several
 * agents would: each publish parses its body and hashes its bytes on the event loop, so these
 * figures show how long other requests wait behind them. For information; no target.
 */
async function concurrentPublishes(plinth: Child, token: string, firstVersionsPath: string): Promise<PublishingResult['concurrent']> {
  const paths = [firstVersionsPath]
  for (let i = 1; i < CONCURRENT_PUBLISHES; i++) {
    const files = [{ path: 'index.html', content: htmlPage(4096, `Concurrent ${i}`) }]
    const site = await api(plinth.port, token, 'POST', '/v1/websites', {
      name: `Bench concurrent ${i}`,
      category: 'other',
      slug: `bench-concurrent-${i}`,
      files,
    })
    paths.push(`/v1/websites/${site.websiteId}/versions`)
  }
  const walls: number[] = []
  const probes: number[] = []
  for (let round = 0; round < CONCURRENT_ROUNDS; round++) {
    // Built before the probe starts: stringifying 40 MiB here would stall this process's probe.
    const bodies = paths.map((_, i) => Buffer.from(JSON.stringify({ files: maximalBundle().files, message: `concurrent ${round}.${i}` })))
    await plinth.ask('settled')
    const started = performance.now()
    const probed = await probedDuring(plinth.port, () => Promise.all(paths.map((p, i) => api(plinth.port, token, 'POST', p, bodies[i]))))
    walls.push(performance.now() - started)
    probes.push(...probed.probes)
  }
  const result = {
    publishes: CONCURRENT_PUBLISHES,
    rounds: CONCURRENT_ROUNDS,
    wallP50: percentile(walls, 50),
    probeWorst: Math.max(...probes),
    probeP50: percentile(probes, 50),
    probes: probes.length,
  }
  console.log(
    `  ${CONCURRENT_PUBLISHES} maximal publishes at once, to ${CONCURRENT_PUBLISHES} sites (${CONCURRENT_ROUNDS} rounds): all answered in p50 ${result.wallP50.toFixed(0)} ms; ` +
      `GET /v1 meanwhile: worst ${result.probeWorst.toFixed(1)} ms, p50 ${result.probeP50.toFixed(1)} ms (${result.probes} requests; for information)`,
  )
  return result
}
