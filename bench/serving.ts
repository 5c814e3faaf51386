/**
 * 1. Serving: req/s and p99 of a published 4 KB HTML page, Plinth against two bare node:http
 * servers in the same run: one sending the same bytes with the same headers, one sending the same
 * body with only Content-Type, Content-Length and ETag. Every server runs in a child process;
 * autocannon runs here.
 */
import { copyFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { FORM_BURST_API_TARGET_MS, FORM_BURST_CONNECTIONS, FORM_BURST_POSTS, type FormBurstResult, formBurst } from './form-burst.ts'
import { type Child, makeTempDir, spawnChild } from './lib/children.ts'
import { fourKbPage, SMALL_CSS } from './lib/content.ts'
import { api, siteGet } from './lib/http.ts'
import { compare, type LoadResult, type Target } from './lib/load.ts'
import { describeProfile, diffProfiles, readProfile } from './lib/profile.ts'
import { plinthEnv, SETTINGS, SITE_DOMAIN } from './lib/settings.ts'

export interface ServingResult {
  plinth: LoadResult
  /** The same page on a site with a 100-rule `_redirects` and a `_headers`. */
  withRules: LoadResult
  /** withRules req/s over plinth req/s. */
  rulesRatio: number
  /**
   * Plinth's site handler alone, built without a form receiver and with one, serving the same
   * site (which has no form): two children of each, started and measured in the order without,
   * with, with, without, so that neither start order nor place in the round robin favours one.
   * Mean req/s of each.
   */
  withoutFormsRps: number
  withFormsRps: number
  /** withFormsRps over withoutFormsRps. */
  formsRatio: number
  /** The same ratio per server CPU-second. */
  formsCpuRatio: number
  /** The four runs, for the error check. */
  formsRuns: LoadResult[]
  /** 500 form posts at once to one site of the Plinth child, after the load runs. */
  formBurst: FormBurstResult
  /** A bare node:http server sending the same bytes with Plinth's exact header list. */
  bareSameResponse: LoadResult
  /** A bare node:http server sending the same body with only Content-Type, Content-Length and ETag. */
  bareMinimal: LoadResult
  br: LoadResult | null
  /** Plinth req/s over bareSameResponse req/s (target SAME_RESPONSE_TARGET). */
  ratioSameResponse: number
  /** Plinth req/s over bareMinimal req/s (target MINIMAL_HEADERS_TARGET). */
  ratioMinimal: number
  /** The same as ratioMinimal, per server CPU-second. */
  cpuRatioMinimal: number
  headerBytes: { plinth: number; bare: number }
  clean: boolean
}

const SLUG = 'bench-page'
const HOST = `${SLUG}.${SITE_DOMAIN}`
const RULES_SLUG = 'bench-rules'
const RULES_HOST = `${RULES_SLUG}.${SITE_DOMAIN}`

/** The serving rules of the second measured site: 100 redirects (the last one a single-page app rewrite) and the headers of a typical site. */
function servingRules(): Array<{ path: string; content: string }> {
  const redirects = Array.from({ length: 99 }, (_, i) => `/old/${i}/*  /new/${i}/:splat  301`)
  redirects.push('/*  /index.html  200')
  const headers = [
    '/assets/*',
    '  Cache-Control: public, max-age=31536000, immutable',
    '/api/*',
    '  Access-Control-Allow-Origin: *',
    '/*',
    '  X-Robots-Tag: noarchive',
    '  Permissions-Policy: camera=(), microphone=()',
    '  Link: </style.css>; rel=preload; as=style',
  ]
  return [
    { path: '_redirects', content: `${redirects.join('\n')}\n` },
    { path: '_headers', content: `${headers.join('\n')}\n` },
  ]
}
/** Headers Node adds itself on both servers; left out of the list handed to the bare server. */
const NODE_ADDED = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding'])

/** Node's raw header list (name, value, name, value, …) as pairs. */
function* headerPairs(raw: readonly string[]): Generator<[string, string]> {
  for (let i = 0; i + 1 < raw.length; i += 2) yield [raw[i] ?? '', raw[i + 1] ?? '']
}

function headerBlockBytes(raw: string[]): number {
  let n = 0
  for (const [name, value] of headerPairs(raw)) n += name.length + 2 + value.length + 2
  return n
}

/** A site with 100 redirect rules and a _headers serves a file at least this share of the plain site's req/s. */
export const RULES_SERVING_TARGET = 0.95
/** A site without forms is served by a site handler that takes forms at least this share of the req/s of one that takes none. */
export const FORMS_SERVING_TARGET = 0.95
/** Plinth serves the page at least this share of the req/s of a bare server sending the same bytes and headers. */
export const SAME_RESPONSE_TARGET = 0.9
/** Plinth serves the page at least this share of the req/s of a bare server sending only Content-Type, Content-Length and ETag. */
export const MINIMAL_HEADERS_TARGET = 0.8

export const passFail = (ok: boolean): string => (ok ? 'PASS' : 'FAIL')

export async function servingPhase(): Promise<ServingResult> {
  console.log('\n== 1. Serving a published 4 KB HTML page ==')
  const dataDir = await makeTempDir('serve')
  const page = fourKbPage()
  // Form posts are not throttled here: the burst below measures taking them, not refusing them.
  const plinth = await spawnChild(
    'plinth',
    'plinth-server.ts',
    plinthEnv(dataDir, { PLINTH_FORM_RATE_PER_SITE: '1000000', PLINTH_FORM_RATE_PER_ADDRESS: '1000000' }),
  )
  const token = plinth.info.token as string
  await api(plinth.port, token, 'POST', '/v1/websites', {
    name: 'Bench page',
    category: 'other',
    slug: SLUG,
    files: [
      { path: 'index.html', content: page },
      { path: 'style.css', content: SMALL_CSS },
    ],
  })

  // The same page again, on a site whose _redirects and _headers apply to every request.
  await api(plinth.port, token, 'POST', '/v1/websites', {
    name: 'Bench rules',
    category: 'other',
    slug: RULES_SLUG,
    files: [{ path: 'index.html', content: page }, { path: 'style.css', content: SMALL_CSS }, ...servingRules()],
  })
  const ruled = await siteGet(plinth.port, RULES_HOST, '/')
  if (ruled.status !== 200 || !ruled.body.equals(Buffer.from(page)) || ruled.headers['x-robots-tag'] !== 'noarchive') {
    throw new Error(`the site with rules served ${ruled.status} without its _headers`)
  }

  // Check what Plinth sends, and hand the bare server the same bytes and the same header list.
  const got = await siteGet(plinth.port, HOST, '/')
  if (got.status !== 200 || !got.body.equals(Buffer.from(page))) {
    throw new Error(`Plinth served ${got.status} with ${got.body.length} bytes instead of the 4,096-byte page`)
  }
  const brReply = await siteGet(plinth.port, HOST, '/', { 'accept-encoding': 'br' })
  const fullHeaders: string[] = []
  for (const [name, value] of headerPairs(got.rawHeaders)) if (!NODE_ADDED.has(name.toLowerCase())) fullHeaders.push(name, value)
  const bodyFile = path.join(dataDir, 'page.html')
  await writeFile(bodyFile, page)
  const bare = await spawnChild('bare', 'bare-server.ts', {
    BENCH_BODY_FILE: bodyFile,
    BENCH_ETAG: String(got.headers.etag),
    BENCH_FULL_HEADERS: JSON.stringify(fullHeaders),
  })
  const bareReply = await siteGet(bare.port, HOST, '/')
  if (bareReply.status !== 200 || !bareReply.body.equals(got.body)) throw new Error('the bare server does not send the same bytes')

  const headerBytes = { plinth: headerBlockBytes(got.rawHeaders), bare: headerBlockBytes(bareReply.rawHeaders) }
  console.log(`  page: ${got.body.length} B identity, ${brReply.body.length} B br (Content-Encoding: ${brReply.headers['content-encoding'] ?? 'none'})`)
  console.log(`  Plinth response headers (${headerBytes.plinth} B): ${got.rawHeaders.filter((_, i) => i % 2 === 0).join(', ')}`)
  console.log(`  bare   response headers (${headerBytes.bare} B): ${bareReply.rawHeaders.filter((_, i) => i % 2 === 0).join(', ')}`)
  console.log(
    `  autocannon: ${SETTINGS.connections} connections, keep-alive, no pipelining; per row ${SETTINGS.warmupSeconds} s warm-up, then ${SETTINGS.durationSeconds} s measured ` +
      `in ${SETTINGS.slices} slices run round robin with the other rows; ` +
      `Host: ${HOST}; servers in child processes (Plinth pid ${plinth.pid}, bare pid ${bare.pid})`,
  )

  const s = SETTINGS
  const host = { host: HOST }
  const targets: Target[] = [
    { label: 'Plinth, identity', url: `${plinth.info.address}/`, headers: host, pid: plinth.pid },
    { label: 'bare node:http, same bytes and headers', url: `${bare.info.address}/full`, headers: host, pid: bare.pid },
    { label: 'bare node:http, only Content-Type/Length/ETag', url: `${bare.info.address}/`, headers: host, pid: bare.pid },
  ]
  if (s.brotli)
    targets.push({ label: 'Plinth, Accept-Encoding: br', url: `${plinth.info.address}/`, headers: { ...host, 'accept-encoding': 'br' }, pid: plinth.pid })
  const rulesAt = targets.length
  targets.push({ label: 'Plinth, identity, 100-rule _redirects + _headers', url: `${plinth.info.address}/`, headers: { host: RULES_HOST }, pid: plinth.pid })
  // Serving a site without forms, by the site handler with and without the form receiver, side by side.
  const env = { ...plinthEnv(dataDir), BENCH_BODY_FILE: bodyFile, BENCH_FULL_HEADERS: JSON.stringify(fullHeaders) }
  const extra: Child[] = []
  const formsAt = targets.length
  // Two children of each kind, started and measured in the order without, with, with, without:
  // on a busy machine a child's start order and its row's place move req/s by up to a fifth.
  for (const [n, variant, label] of [
    [1, 'site-handler', 'site handler alone, no form receiver'],
    [1, 'site-handler-forms', 'site handler alone, with the form receiver'],
    [2, 'site-handler-forms', 'site handler alone, with the form receiver'],
    [2, 'site-handler', 'site handler alone, no form receiver'],
  ] as const) {
    const child = await spawnChild(`${variant}-${n}`, 'variant-server.ts', { ...env, VARIANT: variant })
    extra.push(child)
    targets.push({ label: `${label} (${n})`, url: `${child.info.address}/`, headers: host, pid: child.pid })
  }
  if (s.diagnose) {
    // Where the gap comes from: the bare handler inside a process running Plinth, and Plinth's
    // site handler without Fastify and server.ts in front of it.
    for (const [variant, label] of [['bare-in-plinth', 'bare handler in a Plinth process']] as const) {
      const child = await spawnChild(variant, 'variant-server.ts', { ...env, VARIANT: variant })
      extra.push(child)
      targets.push({ label: `diag: ${label}`, url: `${child.info.address}/`, headers: host, pid: child.pid })
    }
  }
  const results = await compare(targets, s)
  const [plinthResult, bareSameResponse, bareMinimal] = results
  if (!plinthResult || !bareSameResponse || !bareMinimal) throw new Error('compare() answers one result per target')
  const br = s.brotli ? (results[3] ?? null) : null
  const withRules = results[rulesAt]!
  const rulesRatio = withRules.rps / plinthResult.rps
  const formsRuns = results.slice(formsAt, formsAt + 4)
  const [without1, with1, with2, without2] = formsRuns as [LoadResult, LoadResult, LoadResult, LoadResult]
  const withoutFormsRps = (without1.rps + without2.rps) / 2
  const withFormsRps = (with1.rps + with2.rps) / 2
  const formsRatio = withFormsRps / withoutFormsRps
  const formsCpuRatio = (with1.perCpuSecond + with2.perCpuSecond) / (without1.perCpuSecond + without2.perCpuSecond)
  console.log(
    `  ratio with the form receiver / without, a site without forms (mean req/s of two runs each): ${formsRatio.toFixed(3)} (target >= ${FORMS_SERVING_TARGET}, the same within noise): ${passFail(formsRatio >= FORMS_SERVING_TARGET)}; per server CPU-second ${formsCpuRatio.toFixed(3)}`,
  )
  console.log(
    `  ratio with rules / without (req/s): ${rulesRatio.toFixed(3)} (target >= ${RULES_SERVING_TARGET}, the same within noise): ${passFail(rulesRatio >= RULES_SERVING_TARGET)}`,
  )

  const ratioSameResponse = plinthResult.rps / bareSameResponse.rps
  const ratioMinimal = plinthResult.rps / bareMinimal.rps
  const cpuRatioMinimal = plinthResult.perCpuSecond / bareMinimal.perCpuSecond
  console.log(
    `  ratio Plinth / bare, same bytes and headers (req/s): ${ratioSameResponse.toFixed(3)} (target >= ${SAME_RESPONSE_TARGET}): ${passFail(ratioSameResponse >= SAME_RESPONSE_TARGET)}`,
  )
  console.log(
    `  ratio Plinth / bare, only Content-Type/Length/ETag (req/s): ${ratioMinimal.toFixed(3)} (target >= ${MINIMAL_HEADERS_TARGET}): ${passFail(ratioMinimal >= MINIMAL_HEADERS_TARGET)}; ` +
      `per server CPU-second ${cpuRatioMinimal.toFixed(3)}`,
  )
  const busy = Math.max(...[plinthResult, bareSameResponse, bareMinimal].map((r) => r.otherCores))
  if (busy > 0.15) {
    console.log(
      `  note: other processes used up to ${(100 * busy).toFixed(0)}% of a core during these runs; req/s is noisy, the per-CPU-second figures much less`,
    )
  }
  const clean = [plinthResult, bareSameResponse, bareMinimal, br, withRules, ...formsRuns].every(
    (r) => r === null || (r.errors === 0 && r.timeouts === 0 && r.non2xx === 0),
  )
  if (!clean) console.log('  !! some runs had errors, timeouts or non-2xx responses: the figures above are not trustworthy')

  const burst = await formBurst(plinth.port, token)
  const worst = Math.max(...burst.apiProbes)
  const median = [...burst.apiProbes].sort((a, b) => a - b)[Math.floor(burst.apiProbes.length / 2)] ?? 0
  console.log(
    `  form burst: ${FORM_BURST_POSTS} posts from ${FORM_BURST_CONNECTIONS} connections in ${burst.seconds.toFixed(1)} s: ${burst.acknowledged} stored, ${burst.refused} refused (429), ` +
      `${burst.lost} lost, ${burst.unexpected} other answers; GET /v1 meanwhile (${burst.apiProbes.length} requests): median ${median.toFixed(1)} ms, worst ${worst.toFixed(1)} ms ` +
      `(target < ${FORM_BURST_API_TARGET_MS} ms): ${passFail(worst < FORM_BURST_API_TARGET_MS && burst.lost === 0 && burst.unexpected === 0)}`,
  )

  const wantProfile = s.profile === '1' || (s.profile === 'auto' && ratioSameResponse < SAME_RESPONSE_TARGET)
  if (wantProfile) await profileBoth(plinth, bare, dataDir)

  await Promise.all([plinth.stop(), bare.stop(), ...extra.map((c) => c.stop())])
  return {
    plinth: plinthResult,
    withRules,
    rulesRatio,
    withoutFormsRps,
    withFormsRps,
    formsRatio,
    formsCpuRatio,
    formsRuns,
    formBurst: burst,
    bareSameResponse,
    bareMinimal,
    br,
    ratioSameResponse,
    ratioMinimal,
    cpuRatioMinimal,
    headerBytes,
    clean,
  }
}

/**
 * CPU profiles of the Plinth child and of the bare child under the same identity load (extra runs,
 * not part of the figures), then where Plinth's extra time per request goes.
 */
async function profileBoth(plinth: Child, bare: Child, dataDir: string): Promise<void> {
  console.log(`\n  CPU profiles under the same identity load (${SETTINGS.profileSeconds} s each, extra runs, not part of the figures):`)
  const settings = { ...SETTINGS, warmupSeconds: 0, durationSeconds: SETTINGS.profileSeconds, slices: 1 }
  const run = async (child: Child, label: string, url: string) => {
    const file = path.join(dataDir, `${child.name}-serving.cpuprofile`)
    await child.ask('profile-start', { intervalUs: 200 })
    const [result] = await compare([{ label, url, headers: { host: HOST }, pid: child.pid }], settings)
    await child.ask('profile-stop', { file }, 60_000)
    return { file, result, profile: readProfile(file) }
  }
  const p = await run(plinth, 'Plinth, identity (profiled)', `${plinth.info.address}/`)
  const b = await run(bare, 'bare node:http, same bytes and headers (profiled)', `${bare.info.address}/full`)
  console.log('  Plinth child:')
  for (const line of describeProfile(p.profile, p.result.requests)) console.log(line)
  console.log('  Plinth vs bare:')
  for (const line of diffProfiles(p.profile, p.result.requests, b.profile, b.result.requests)) console.log(line)
  if (SETTINGS.profileOut) {
    await copyFile(p.file, SETTINGS.profileOut)
    console.log(`  raw Plinth profile saved to ${SETTINGS.profileOut} (open it in Chrome DevTools > Performance)`)
  }
}
