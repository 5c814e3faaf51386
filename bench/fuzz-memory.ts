/**
 * 6. Memory under hostile requests: the Plinth child's resident memory (VmRSS from
 * /proc/<pid>/status, read from outside) while a bounded loop sends it varied hostile requests
 * from 127.0.0.1: random and long paths on sites with `_headers` and `_redirects`, a flood of Host variants (site labels, previews, custom-looking
 * names, long and malformed hosts), random methods, random and malformed JSON bodies to /v1 with
 * the bench token and without. Every structure a request can add to must be bounded, so RSS
 * levels off instead of growing with the number of distinct hosts and paths.
 *
 * Run alone: BENCH_FUZZ_REQUESTS=20000 node --import tsx bench/fuzz-memory.ts
 */
import { randomBytes } from 'node:crypto'
import { makeTempDir, rssOf, spawnChild } from './lib/children.ts'
import { api, pool, request } from './lib/http.ts'
import { fmtMiB } from './lib/load.ts'
import { plinthEnv, SETTINGS, SITE_DOMAIN } from './lib/settings.ts'

export interface FuzzMemoryResult {
  requests: number
  rssBefore: number
  rssPeak: number
  rssAfter: number
  heapBefore: number
  heapAfter: number
  /** RSS every tenth of the run, in bytes. */
  samples: number[]
  statuses: Record<string, number>
}

interface Stats {
  memory: NodeJS.MemoryUsage
}

/** Resident memory the run may leave behind, after a full GC: every cache it fills is bounded well below this. */
export const FUZZ_GROWTH_TARGET = 64 * 1024 * 1024

const CONCURRENCY = 16
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'PROPFIND', 'SEARCH', 'REPORT']
const API_PATHS = [
  '/v1',
  '/v1/websites',
  '/v1/websites/web_x',
  '/v1/jobs/job_x',
  '/v1/slugs/suggest',
  '/v1/tokens',
  '/v1/uploads',
  '/mcp',
  '/dashboard',
  '/login',
]

/** A small deterministic generator, so two runs send the same requests. */
function generator(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Published before the run: each has a `_headers` and a `_redirects` that apply to every path, and three versions. */
const SITES = ['fuzz-alpha', 'fuzz-bravo', 'fuzz-charlie', 'fuzz-delta']
const VERSIONS = 3
const RULE_FILES = [
  { path: '_headers', content: '/*\n  X-Robots-Tag: noarchive\n/assets/*\n  Cache-Control: public, max-age=31536000, immutable\n' },
  { path: '_redirects', content: '/old/* /new/:splat 301\n' },
]

function hostileRequest(random: () => number, token: string) {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!
  const word = (n: number) => randomBytes(n).toString('base64url').toLowerCase()
  const hosts = [
    () => `${pick(SITES)}.${SITE_DOMAIN}`,
    () => `${pick(SITES)}--v${1 + Math.floor(random() * VERSIONS)}.${SITE_DOMAIN}`,
    () => `${word(8)}.${SITE_DOMAIN}`,
    () => `${word(6)}--v${Math.floor(random() * 1000)}.${SITE_DOMAIN}`,
    () => `${word(10)}.example.${word(3)}`,
    () => `${word(200)}.${SITE_DOMAIN}`,
    () => `${'a'.repeat(100 + Math.floor(random() * 12000))}${word(4)}`,
    () => `[${word(6)}]:${Math.floor(random() * 70000)}`,
    () => `api.bench.test:${Math.floor(random() * 65536)}`,
    () => `${word(4)}..${word(4)}`,
  ]
  const paths = [
    () => `/${word(12)}`,
    () => `/${word(6)}/${word(6)}.html?${word(20)}=${word(20)}`,
    () => `/v1/websites/${word(24)}`,
    () => `/v1/${word(10)}/${word(10)}`,
    () => `/%${word(2)}%zz/${word(4)}`,
    () => `/${'x/'.repeat(50 + Math.floor(random() * 200))}`,
    () => `/assets/${word(1000 + Math.floor(random() * 6000))}.css`,
    () => pick(API_PATHS),
  ]
  const bodies = [
    () => undefined,
    () => Buffer.from(`{"name": "${word(30)}", "files": [`),
    () => Buffer.from(JSON.stringify({ [word(8)]: word(200), nested: { deep: [1, 2, { x: word(40) }] } })),
    () => Buffer.from('{"__proto__": {"admin": true}, "constructor": {"prototype": {}}}'),
    () => randomBytes(Math.floor(random() * 4096)),
  ]
  const method = pick(METHODS)
  const body = method === 'GET' || method === 'HEAD' ? undefined : pick(bodies)()
  const toApi = random() < 0.5
  const headers: Record<string, string> = { host: toApi ? 'api.bench.test' : pick(hosts)() }
  if (toApi && random() < 0.5) headers.authorization = `Bearer ${token}`
  else if (random() < 0.2) headers.authorization = `Bearer ${word(40)}`
  if (body) headers['content-type'] = pick(['application/json', 'application/json; charset=utf-8', 'text/plain', `application/${word(6)}`])
  if (random() < 0.3) headers['accept-encoding'] = `${word(5)};q=0.${Math.floor(random() * 10)}, gzip`
  if (random() < 0.2) headers.cookie = `plinth_session=${word(40)}`
  // On the sites with rules, half the paths are long: each one is a new key for the version's `_headers` memo.
  const ruled = SITES.some((slug) => headers.host!.startsWith(slug))
  const path = toApi ? pick(API_PATHS.concat([pick(paths)()])) : ruled && random() < 0.5 ? `/assets/${word(4000 + Math.floor(random() * 8000))}` : pick(paths)()
  return { method, path, headers, body }
}

export async function fuzzMemoryPhase(requests = Math.max(1, Math.floor(SETTINGS.fuzzRequests))): Promise<FuzzMemoryResult> {
  console.log(`\n== 6. Memory under ${requests.toLocaleString('en-US')} hostile requests (random paths, hosts, methods, bodies) ==`)
  const dataDir = await makeTempDir('fuzz-memory')
  // Logging on, as in production, so the logger's own buffers are part of what is measured.
  const env = plinthEnv(dataDir, { PLINTH_LOG_LEVEL: process.env.BENCH_FUZZ_LOG_LEVEL ?? 'info' })
  const plinth = await spawnChild('plinth', 'plinth-server.ts', env, ['--expose-gc'], 180_000)
  const token = plinth.info.token as string
  for (const slug of SITES) {
    const files = (v: number) => [{ path: 'index.html', content: `<h1>${slug} v${v}</h1>` }, ...RULE_FILES]
    const { websiteId } = await api<{ websiteId: string }>(plinth.port, token, 'POST', '/v1/websites', { name: slug, category: 'other', slug, files: files(1) })
    for (let v = 2; v <= VERSIONS; v++) await api(plinth.port, token, 'POST', `/v1/websites/${websiteId}/versions`, { files: files(v) })
  }
  const random = generator(20261127)
  const statuses: Record<string, number> = {}
  const send = async () => {
    const { method, path, headers, body } = hostileRequest(random, token)
    try {
      const reply = await request(plinth.port, { method, path, headers, body }, 30_000)
      statuses[reply.status] = (statuses[reply.status] ?? 0) + 1
    } catch {
      statuses.reset = (statuses.reset ?? 0) + 1
    }
  }

  // Warm up (JIT, route caches, the first log lines), then the baseline after a full GC.
  await pool(500, CONCURRENCY, send)
  const before = await plinth.ask<Stats>('gc')
  const rssBefore = rssOf(plinth.pid)
  const samples: number[] = []
  const tenth = Math.max(1, Math.floor(requests / 10))
  for (let done = 0; done < requests; done += tenth) {
    await pool(Math.min(tenth, requests - done), CONCURRENCY, send)
    samples.push(rssOf(plinth.pid))
  }
  const rssPeak = Math.max(...samples)
  const after = await plinth.ask<Stats>('gc')
  await new Promise((resolve) => setTimeout(resolve, 500))
  const rssAfter = rssOf(plinth.pid)
  await plinth.stop()

  console.log(`  statuses: ${JSON.stringify(statuses)}`)
  console.log(`  RSS every tenth of the run: ${samples.map((s) => fmtMiB(s)).join(', ')}`)
  console.log(`  RSS before (after 500 warm-up requests and a full GC): ${fmtMiB(rssBefore)}`)
  console.log(`  RSS peak during the run:                               ${fmtMiB(rssPeak)}   (+${fmtMiB(rssPeak - rssBefore)})`)
  console.log(`  RSS after a forced full GC:                            ${fmtMiB(rssAfter)}   (+${fmtMiB(rssAfter - rssBefore)})`)
  console.log(
    `  JS heap used ${fmtMiB(before.memory.heapUsed)} -> ${fmtMiB(after.memory.heapUsed)}; external+buffers ${fmtMiB(before.memory.external)} -> ${fmtMiB(after.memory.external)}`,
  )
  return { requests, rssBefore, rssPeak, rssAfter, heapBefore: before.memory.heapUsed, heapAfter: after.memory.heapUsed, samples, statuses }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { cleanupAll } = await import('./lib/children.ts')
  try {
    await fuzzMemoryPhase()
  } finally {
    await cleanupAll()
  }
}
