/**
 * `npm run bench`: serving throughput against a bare node:http baseline, publish latency of a
 * maximal bundle beside the raw cost of its bytes (and of an unchanged republish, which must write
 * no blob bytes), resident memory after 1,000 small sites, and content: upsertEntries latency
 * against its targets, the API's worst latency while maximal rich text renders, listEntries on
 * 100,000 entries, and a warm entry page under load; and with DATABASE_URL set, two instances on
 * PostgreSQL and S3 under clients publishing and reading at once (lost publishes, 5xx), and one
 * instance's warm serving on S3 against the filesystem store (scale-out.ts); resident memory
 * before, during and after 20,000 hostile requests (fuzz-memory.ts); and start-up: the compiled
 * server's cold start to its first GET /v1 answer beside a bare node:http server's, its idle
 * memory, and `plinth user create` (startup.ts); and a one-word change to a 40-file site through a
 * draft (the edit and the publish; the draft's start apart) against a one-file publish, with the
 * blob bytes it adds (drafts.ts); serving with traffic counting on and off side by side (traffic.ts). Servers run in child processes on temp data dirs, listening on 127.0.0.1 only;
 * everything is cleaned up at the end, on failure and on Ctrl-C.
 *
 * `npm run bench -- serving`, `npm run bench -- publishing`, `npm run bench -- startup`, `npm run bench -- drafts` and `npm run bench -- traffic` run one phase alone.
 * Quick runs: BENCH_DURATION=3 BENCH_WARMUP=1 BENCH_PUBLISH_ITERATIONS=3 BENCH_SITES=100 npm run bench
 * Other knobs: BENCH_CONNECTIONS (50), BENCH_SLICES (5), BENCH_BR=0, BENCH_PROFILE=auto|1|0,
 * BENCH_PROFILE_SECONDS (5), BENCH_PROFILE_OUT=/path/file.cpuprofile, BENCH_DIAGNOSE=1,
 * BENCH_CONTENT_ENTRIES (100000), BENCH_SCALE_CLIENTS (50), BENCH_SCALE_PUBLISHERS (10),
 * BENCH_SCALE_SECONDS (30), BENCH_FUZZ_REQUESTS (20000).
 * See bench/README.md.
 */
import os from 'node:os'
import { performance } from 'node:perf_hooks'
import { type ContentResult, contentPhase, PROBE_TARGET_MS, UPSERT_P50_TARGET_MS, UPSERT_RATIO_TARGET } from './content.ts'
import { DRAFT_RATIO_TARGET, type DraftsResult, draftsPhase } from './drafts.ts'
import { cleanupAll, killAllSync } from './lib/children.ts'
import { FUZZ_GROWTH_TARGET, type FuzzMemoryResult, fuzzMemoryPhase } from './fuzz-memory.ts'
import { fmtInt, fmtMiB, fmtMs } from './lib/load.ts'
import { FORM_BURST_API_TARGET_MS, FORM_BURST_CONNECTIONS, FORM_BURST_POSTS } from './form-burst.ts'
import { SETTINGS } from './lib/settings.ts'
import { type MemoryResult, memoryPhase } from './memory.ts'
import { PUBLISH_RAW_TARGET, type PublishingResult, publishingPhase, SITE_CHECK_COST_TARGET } from './publishing.ts'
import { type ScaleOutResult, S3_SERVING_TARGET, scaleOutPhase } from './scale-out.ts'
import { SCREENSHOTS_API_TARGET_MS, SCREENSHOTS_AT_ONCE, type ScreenshotsResult, screenshotsPhase } from './screenshots.ts'
import {
  FORMS_SERVING_TARGET,
  MINIMAL_HEADERS_TARGET,
  passFail,
  RULES_SERVING_TARGET,
  SAME_RESPONSE_TARGET,
  type ServingResult,
  servingPhase,
} from './serving.ts'
import { IDLE_RSS_TARGET_BYTES, START_TARGET_MS, type StartupResult, startupPhase, USER_CREATE_TARGET_MS } from './startup.ts'
import { TRAFFIC_SERVING_TARGET, type TrafficResult, trafficPhase } from './traffic.ts'

/** A markdown table: the first row is the header; a row shorter than it has empty cells. */
function table(rows: string[][]): string {
  const [header = [], ...body] = rows
  const widths = header.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)))
  const fmt = (r: string[]) => `| ${widths.map((width, c) => (r[c] ?? '').padEnd(width)).join(' | ')} |`
  const rule = `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`
  return [fmt(header), rule, ...body.map(fmt)].join('\n')
}

function summary(
  serving: ServingResult,
  publishing: PublishingResult,
  memory: MemoryResult,
  content: ContentResult,
  scaleOut: ScaleOutResult,
  fuzz: FuzzMemoryResult,
  startup: StartupResult,
  drafts: DraftsResult,
  screenshots: ScreenshotsResult,
): string {
  const ms = (n: number) => `${n.toFixed(0)} ms`
  const rows = [['Benchmark', 'Figure', 'Value', 'Target', 'Result'], ...servingRows(serving)]
  rows.push(...publishingRows(publishing))
  rows.push(
    [`Memory, ${memory.sites.toLocaleString('en-US')} small sites`, 'RSS before', fmtMiB(memory.rssBefore), '', ''],
    ['', 'RSS after publish + serve', fmtMiB(memory.rssAfter), '', ''],
    ['', 'RSS increment per site', `${(memory.perSite / 1024).toFixed(1)} KiB`, '', ''],
    ['', 'JS heap retained per site (after GC)', `${((memory.heapAfter - memory.heapBefore) / memory.sites / 1024).toFixed(1)} KiB`, '(info)', ''],
  )
  const ms1 = (n: number) => `${n.toFixed(1)} ms`
  const upsertRatio = content.fresh.p50 / content.unchanged.p50
  rows.push(
    [
      `upsertEntries, ${content.batchSize} entries (REST)`,
      'new entries p50 / p95',
      `${ms(content.fresh.p50)} / ${ms(content.fresh.p95)}`,
      `p50 <= ${UPSERT_P50_TARGET_MS} ms`,
      passFail(content.fresh.p50 <= UPSERT_P50_TARGET_MS),
    ],
    ['', 'same batch again (all unchanged) p50', ms(content.unchanged.p50), '', ''],
    ['', 'ratio new / unchanged (p50)', upsertRatio.toFixed(2), `<= ${UPSERT_RATIO_TARGET}`, passFail(upsertRatio <= UPSERT_RATIO_TARGET)],
    [
      'Maximal rich-text batch (30 x pathological)',
      'worst GET /v1 latency meanwhile',
      `${content.probe.worst.toFixed(1)} ms (p50 ${content.probe.p50.toFixed(1)} ms)`,
      `< ${PROBE_TARGET_MS} ms`,
      passFail(content.probe.worst < PROBE_TARGET_MS),
    ],
    [
      `listEntries, ${content.entries.toLocaleString('en-US')} entries`,
      `first page (${content.pageLimit}) p50 / p95`,
      `${ms1(content.firstPage.p50)} / ${ms1(content.firstPage.p95)}`,
      '',
      '',
    ],
    [
      '',
      `page at entry ${content.deepPosition.toLocaleString('en-US')} (cursor) p50 / p95`,
      `${ms1(content.deepPage.p50)} / ${ms1(content.deepPage.p95)}`,
      '',
      '',
    ],
    ['Entry page, warm (default template)', 'Plinth req/s, p99', `${fmtInt(content.entryPage.rps)} req/s, ${fmtMs(content.entryPage.p99)}`, '', ''],
    ['', 'same site, static 4 KB page, req/s, p99', `${fmtInt(content.staticPage.rps)} req/s, ${fmtMs(content.staticPage.p99)}`, '', ''],
    ['', 'ratio entry page / static page', (content.entryPage.rps / content.staticPage.rps).toFixed(3), '(info)', ''],
  )
  rows.push(...scaleOutRows(scaleOut))
  const growth = fuzz.rssAfter - fuzz.rssBefore
  rows.push(
    [
      `Memory, ${fmtInt(fuzz.requests)} hostile requests`,
      'RSS before / peak / after a full GC',
      `${fmtMiB(fuzz.rssBefore)} / ${fmtMiB(fuzz.rssPeak)} / ${fmtMiB(fuzz.rssAfter)}`,
      '',
      '',
    ],
    ['', 'RSS growth after a full GC', fmtMiB(growth), `<= ${fmtMiB(FUZZ_GROWTH_TARGET)}`, passFail(growth <= FUZZ_GROWTH_TARGET)],
  )
  rows.push(...startupRows(startup))
  rows.push(...draftsRows(drafts))
  rows.push(...screenshotsRows(screenshots))
  return table(rows)
}

function servingRows(r: ServingResult): string[][] {
  const rows = [
    ['Serving 4 KB page (identity)', 'Plinth req/s', `${fmtInt(r.plinth.rps)} req/s`, '', ''],
    ['', 'Plinth p99 latency', fmtMs(r.plinth.p99), '', ''],
    ['', 'bare node:http, same bytes and headers, req/s', `${fmtInt(r.bareSameResponse.rps)} req/s`, '', ''],
    ['', 'bare node:http, same bytes and headers, p99', fmtMs(r.bareSameResponse.p99), '', ''],
    [
      '',
      'ratio Plinth / bare (same bytes and headers)',
      r.ratioSameResponse.toFixed(3),
      `>= ${SAME_RESPONSE_TARGET}`,
      passFail(r.ratioSameResponse >= SAME_RESPONSE_TARGET),
    ],
    ['', 'bare node:http, only Content-Type/Length/ETag, req/s', `${fmtInt(r.bareMinimal.rps)} req/s`, '', ''],
    [
      '',
      'ratio Plinth / bare (only Content-Type/Length/ETag)',
      r.ratioMinimal.toFixed(3),
      `>= ${MINIMAL_HEADERS_TARGET}`,
      passFail(r.ratioMinimal >= MINIMAL_HEADERS_TARGET),
    ],
    ['', 'same, per server CPU-second', r.cpuRatioMinimal.toFixed(3), '(info)', ''],
    ['', 'with 100-rule _redirects + _headers, req/s', `${fmtInt(r.withRules.rps)} req/s`, '', ''],
    ['', 'ratio with rules / without', r.rulesRatio.toFixed(3), `>= ${RULES_SERVING_TARGET}`, passFail(r.rulesRatio >= RULES_SERVING_TARGET)],
    [
      '',
      'site handler alone, no forms on the site: without / with the form receiver, req/s',
      `${fmtInt(r.withoutFormsRps)} / ${fmtInt(r.withFormsRps)} req/s`,
      '',
      '',
    ],
    ['', 'ratio with the form receiver / without', r.formsRatio.toFixed(3), `>= ${FORMS_SERVING_TARGET}`, passFail(r.formsRatio >= FORMS_SERVING_TARGET)],
    ['', 'same, per server CPU-second', r.formsCpuRatio.toFixed(3), '(info)', ''],
    [
      `Form burst, ${FORM_BURST_POSTS} posts / ${FORM_BURST_CONNECTIONS} connections`,
      'stored, refused (429), lost, other answers',
      `${r.formBurst.acknowledged}, ${r.formBurst.refused}, ${r.formBurst.lost}, ${r.formBurst.unexpected}`,
      '0 lost, 0 other',
      passFail(r.formBurst.lost === 0 && r.formBurst.unexpected === 0),
    ],
    [
      '',
      'GET /v1 during the burst: worst',
      fmtMs(Math.max(...r.formBurst.apiProbes)),
      `< ${FORM_BURST_API_TARGET_MS} ms`,
      passFail(Math.max(...r.formBurst.apiProbes) < FORM_BURST_API_TARGET_MS),
    ],
  ]
  if (r.br) rows.push(['Serving 4 KB page (br)', 'Plinth req/s, p99', `${fmtInt(r.br.rps)} req/s, ${fmtMs(r.br.p99)}`, '(info)', ''])
  return rows
}

function trafficRows(r: TrafficResult): string[][] {
  return [
    ['Traffic counting, 4 KB page', 'req/s counting off / on', `${fmtInt(r.off.rps)} / ${fmtInt(r.on.rps)} req/s`, '', ''],
    ['', 'ratio on / off', r.ratio.toFixed(3), `>= ${TRAFFIC_SERVING_TARGET}`, passFail(r.ratio >= TRAFFIC_SERVING_TARGET)],
    ['', 'same, per server CPU-second', r.cpuRatio.toFixed(3), '(info)', ''],
    ['', 'requests the counting servers stored', fmtInt(r.counted), `>= ${fmtInt(r.answered)}`, passFail(r.counted >= r.answered)],
  ]
}

function startupRows(r: StartupResult): string[][] {
  const ms = (n: number) => `${n.toFixed(0)} ms`
  return [
    [
      `Start-up, median of ${r.runs} cold processes`,
      'node dist/main.js to first GET /v1 answer',
      ms(r.startMs),
      `<= ${START_TARGET_MS} ms`,
      passFail(r.startMs <= START_TARGET_MS),
    ],
    ['', 'bare node:http, same measure', ms(r.bareStartMs), '(info)', ''],
    ['', 'CPU used up to the answer: server / bare', `${ms(r.startCpuMs)} / ${ms(r.bareStartCpuMs)}`, '(info)', ''],
    ['', 'npm start (npm, build check, server)', ms(r.npmStartMs), '(info)', ''],
    ['', 'idle RSS after start', fmtMiB(r.idleRss), `<= ${fmtMiB(IDLE_RSS_TARGET_BYTES)}`, passFail(r.idleRss <= IDLE_RSS_TARGET_BYTES)],
    ['', 'plinth user create', ms(r.userCreateMs), `<= ${USER_CREATE_TARGET_MS} ms`, passFail(r.userCreateMs <= USER_CREATE_TARGET_MS)],
  ]
}

const screenshotsFailed = (r: ScreenshotsResult) => r.skipped === undefined && r.failures.length > 0

function screenshotsRows(r: ScreenshotsResult): string[][] {
  const title = `Screenshots, ${SCREENSHOTS_AT_ONCE} at once`
  if (r.skipped !== undefined) return [[title, 'skipped', r.skipped, '', '']]
  return [
    [title, 'PNGs answered', `${r.pngs} of ${SCREENSHOTS_AT_ONCE} in ${r.seconds.toFixed(1)} s`, `${SCREENSHOTS_AT_ONCE}`, passFail(r.failures.length === 0)],
    [
      '',
      'GET /v1 meanwhile: worst (median)',
      `${fmtMs(r.worstMs)} (${fmtMs(r.medianMs)})`,
      `< ${SCREENSHOTS_API_TARGET_MS} ms`,
      passFail(r.worstMs < SCREENSHOTS_API_TARGET_MS),
    ],
  ]
}

function draftsRows(r: DraftsResult): string[][] {
  const ms = (t: { p50: number; p90: number }) => `${t.p50.toFixed(0)} / ${t.p90.toFixed(0)} ms`
  const cpu = (f: { cpu: number }) => `${f.cpu.toFixed(1)} ms`
  return [
    [`One-word change, ${r.siteFiles}-file site (${(r.siteBytes / 1024).toFixed(0)} KiB)`, 'draft edit + publish p50 / p90', ms(r.change.wall), '', ''],
    ['', 'new version of a one-file site p50 / p90', ms(r.onePublish.wall), '', ''],
    ['', 'ratio edit + publish / one-file publish (p50)', r.ratio.toFixed(2), `<= ${DRAFT_RATIO_TARGET}`, passFail(r.ratio <= DRAFT_RATIO_TARGET)],
    ['', 'server CPU p50: edit + publish / one-file publish', `${cpu(r.change)} / ${cpu(r.onePublish)} (${r.cpuRatio.toFixed(2)})`, '(info)', ''],
    ['', 'starting the draft p50 / p90 (apart)', ms(r.start.wall), '(info)', ''],
    [
      '',
      'blob bytes added by the edits and publishes',
      `${r.blobs.bytesAdded} B (${r.blobs.filesAdded} files)`,
      `${r.blobs.bytesExpected} B (${r.blobs.filesExpected} files)`,
      passFail(draftBlobsExact(r)),
    ],
  ]
}

/** Every edit-and-publish added exactly the edited file's blob and its variants. */
const draftBlobsExact = (r: DraftsResult) => r.blobs.exact === r.iterations
/** The drafts phase missed its target or added other blob bytes than the edited file's. */
const draftsFailed = (r: DraftsResult) => r.ratio > DRAFT_RATIO_TARGET || !draftBlobsExact(r)

/** The phases that can run alone (`npm run bench -- serving`, `… startup`, `… drafts`). */
const ALONE: Record<string, () => Promise<string[][]>> = {
  publishing: async () => {
    const publishing = await publishingPhase()
    if (publishing.blobBytesAdded !== 0 || publishing.blobFilesAdded !== 0) process.exitCode = 1
    return publishingRows(publishing)
  },
  serving: async () => {
    const serving = await servingPhase()
    if (!serving.clean) process.exitCode = 1
    return servingRows(serving)
  },
  startup: async () => startupRows(await startupPhase()),
  traffic: async () => trafficRows(await trafficPhase()),
  drafts: async () => {
    const drafts = await draftsPhase()
    if (draftsFailed(drafts)) process.exitCode = 1
    return draftsRows(drafts)
  },
  screenshots: async () => {
    const screenshots = await screenshotsPhase()
    if (screenshotsFailed(screenshots)) process.exitCode = 1
    return screenshotsRows(screenshots)
  },
}

function publishingRows(publishing: PublishingResult): string[][] {
  const ms = (n: number) => `${n.toFixed(0)} ms`
  return [
    [`Publishing ${fmtMiB(publishing.bundleBytes)}, 40 files`, 'new bytes p50 / p95', `${ms(publishing.fresh.p50)} / ${ms(publishing.fresh.p95)}`, '', ''],
    ['', 'the same without the site check p50', ms(publishing.withoutCheck.p50), '', ''],
    ['', 'server CPU per publish with / without the check', `${ms(publishing.cpu.withCheck)} / ${ms(publishing.cpu.withoutCheck)}`, '(info)', ''],
    [
      '',
      'site check cost (p50 with / without - 1)',
      `${(publishing.checkCost * 100).toFixed(1)}%`,
      `< ${SITE_CHECK_COST_TARGET * 100}%`,
      passFail(publishing.checkCost < SITE_CHECK_COST_TARGET),
    ],
    ['', 'raw cost of the same bytes p50', ms(publishing.raw.p50), '', ''],
    ['', 'ratio publish / raw (p50)', publishing.rawRatio.toFixed(2), `<= ${PUBLISH_RAW_TARGET}`, passFail(publishing.rawRatio <= PUBLISH_RAW_TARGET)],
    ['', 'unchanged republish p50 / p95', `${ms(publishing.unchanged.p50)} / ${ms(publishing.unchanged.p95)}`, '', ''],
    [
      '',
      `small publish after ${publishing.afterQuiet.quietMs / 1000} s quiet / right after`,
      `${ms(publishing.afterQuiet.ms)} / ${ms(publishing.afterQuiet.warmMs)}`,
      '(info)',
      '',
    ],
    [
      '',
      `worst GET /v1 while ${publishing.concurrent.publishes} publish at once`,
      `${publishing.concurrent.probeWorst.toFixed(1)} ms (p50 ${publishing.concurrent.probeP50.toFixed(1)} ms)`,
      '(info)',
      '',
    ],
    [
      '',
      'blob bytes added by republishes',
      `${publishing.blobBytesAdded} B (${publishing.blobFilesAdded} files)`,
      '0 B',
      publishing.blobBytesAdded === 0 && publishing.blobFilesAdded === 0 ? 'PASS' : 'FAIL',
    ],
  ]
}

function scaleOutRows(r: ScaleOutResult): string[][] {
  if (r.skipped !== null) return [['Two instances, PostgreSQL + S3', 'skipped', r.skipped, '', '']]
  const rate = (n: number) => (n < 100 ? n.toFixed(1) : fmtInt(n))
  return [
    [
      `Two instances, PostgreSQL + S3, ${r.clients} clients, ${r.seconds} s`,
      `publishes/s, p99 (${r.publishers} publishing clients)`,
      `${rate(r.publishes.perSecond)}/s, ${fmtMs(r.publishes.p99)}`,
      '',
      '',
    ],
    ['', `reads/s, p99 (${r.clients - r.publishers} reading clients)`, `${rate(r.reads.perSecond)}/s, ${fmtMs(r.reads.p99)}`, '', ''],
    ['', '5xx responses', String(r.serverErrors), '0', passFail(r.serverErrors === 0)],
    ['', `lost publishes (of ${fmtInt(r.acknowledged)} acknowledged)`, String(r.lost), '0', passFail(r.lost === 0)],
    ['', 'stale read on the other instance right after the ack', `${r.readAfterPublish.stale} of ${fmtInt(r.readAfterPublish.checked)}`, '(info)', ''],
    ['One instance warm, 4 KB page', 'S3 store req/s, p99', `${fmtInt(r.serving.s3.rps)} req/s, ${fmtMs(r.serving.s3.p99)}`, '', ''],
    ['', 'filesystem store req/s, p99', `${fmtInt(r.serving.fs.rps)} req/s, ${fmtMs(r.serving.fs.p99)}`, '', ''],
    ['', 'ratio S3 / filesystem', r.serving.ratio.toFixed(3), `>= ${S3_SERVING_TARGET}`, passFail(r.serving.ratio >= S3_SERVING_TARGET)],
  ]
}

let cleaning: Promise<void> | null = null
const cleanup = () => (cleaning ??= cleanupAll())

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping the servers and removing temp dirs...`)
    cleanup()
      .catch((error: unknown) => console.error(error))
      .finally(() => process.exit(130))
  })
}
process.once('exit', killAllSync)

async function main(): Promise<void> {
  const started = performance.now()
  const cpu = os.cpus()
  console.log('Plinth benchmark')
  console.log(`  node ${process.version}, ${os.platform()} ${os.arch()}, ${cpu.length} CPU(s): ${cpu[0]?.model ?? 'unknown'}, ${fmtMiB(os.totalmem())} RAM`)
  console.log(`  SQLite store on temp dirs under ${os.tmpdir()}; every server listens on 127.0.0.1 in its own child process`)
  console.log(
    `  settings: ${SETTINGS.connections} connections, ${SETTINGS.warmupSeconds} s warm-up + ${SETTINGS.durationSeconds} s (${SETTINGS.slices} slices) per load run, ` +
      `${SETTINGS.publishIterations} publishes per kind, ${SETTINGS.sites} small sites, ${SETTINGS.contentEntries} content entries, profile=${SETTINGS.profile}`,
  )
  if (cpu.length <= 2) console.log('  note: with 2 cores, autocannon takes one and the server under test the other')
  const only = process.argv.slice(2)
  const unknown = only.filter((name) => !(name in ALONE))
  if (unknown.length > 0) throw new Error(`unknown phase ${unknown.join(', ')}: the phases that run alone are ${Object.keys(ALONE).join(', ')}`)
  try {
    if (only.length > 0) {
      const rows = [['Benchmark', 'Figure', 'Value', 'Target', 'Result']]
      for (const name of only) rows.push(...(await ALONE[name]!()))
      console.log('\n== Summary ==')
      console.log(table(rows))
      console.log(`Total time: ${((performance.now() - started) / 1000).toFixed(0)} s`)
      return
    }
    const serving = await servingPhase()
    const publishing = await publishingPhase()
    const memory = await memoryPhase()
    const content = await contentPhase()
    const scaleOut = await scaleOutPhase()
    const fuzz = await fuzzMemoryPhase()
    const startup = await startupPhase()
    const drafts = await draftsPhase()
    const screenshots = await screenshotsPhase()
    const traffic = await trafficPhase()
    console.log('\n== Summary ==')
    console.log(summary(serving, publishing, memory, content, scaleOut, fuzz, startup, drafts, screenshots))
    console.log(table([['Benchmark', 'Figure', 'Value', 'Target', 'Result'], ...trafficRows(traffic)]))
    if (!serving.clean || !content.clean) console.log('!! load runs had errors or non-2xx responses (see above)')
    const scaleOutClean = scaleOut.skipped !== null || scaleOut.clean
    if (!scaleOutClean) console.log('!! the two-instance run had 5xx responses, failed requests or lost publishes (see above)')
    console.log(`Total time: ${((performance.now() - started) / 1000).toFixed(0)} s`)
    if (
      publishing.blobBytesAdded !== 0 ||
      publishing.blobFilesAdded !== 0 ||
      !serving.clean ||
      !content.clean ||
      !scaleOutClean ||
      draftsFailed(drafts) ||
      screenshotsFailed(screenshots)
    )
      process.exitCode = 1
  } finally {
    await cleanup()
  }
}

main().catch((error) => {
  console.error('\nBenchmark failed:', error instanceof Error ? (error.stack ?? error.message) : error)
  process.exitCode = 1
})
