/**
 * 5. Scale-out: two Plinth instances on one PostgreSQL schema and one S3 bucket (s3rver), each in
 * a child process of its own, under clients that publish through both and read from both at once;
 * then every acknowledged publish checked on both instances, and one instance's warm serving on
 * the S3 store against the same on the filesystem store.
 *
 * The clients (BENCH_SCALE_CLIENTS, 50) run here for BENCH_SCALE_SECONDS (30): BENCH_SCALE_PUBLISHERS
 * (10) of them publish a fresh small site (3 files, about 2.5 KB) as a new version of their own
 * site, through A and B in turn, and after each acknowledgement read their site once from the
 * other instance; the rest read `/` of any of the sites from either instance, one request after
 * another. Every client is a closed loop (its next request leaves when the last one has answered),
 * so what is measured is what the two instances, PostgreSQL and s3rver sustain together on this
 * machine. The parent only sends requests, hashes 2.5 KB pages and keeps the figures.
 *
 * Lost publishes: once the load stops and the compressed variants are made, and after the bound
 * within which instances agree (1 s), every acknowledged version is read from both instances
 * (its preview address, `{slug}--v{n}`), and every file of each site's live version too; any
 * version not served there with the bytes that were acknowledged counts as lost.
 *
 * Needs DATABASE_URL (a PostgreSQL database the benchmark may create schemas in); without it the
 * phase is skipped with a note. Each run works in schemas of its own (`plinth_bench_{pid}_…`),
 * dropped at the end; ones left by a run that was killed are dropped by the next.
 */
import { createHash } from 'node:crypto'
import { readdir } from 'node:fs/promises'
import http from 'node:http'
import { performance } from 'node:perf_hooks'
import pg from 'pg'
import { type Child, makeTempDir, spawnChild } from './lib/children.ts'
import { type BundleFile, fourKbPage, SMALL_CSS, smallSite } from './lib/content.ts'
import { pool, poolEach } from './lib/http.ts'
import { compare, fmtInt, fmtMs, type LoadResult, percentile } from './lib/load.ts'
import { plinthEnv, SETTINGS, SITE_DOMAIN } from './lib/settings.ts'

export interface ScaleOutFigures {
  clients: number
  publishers: number
  seconds: number
  publishes: { count: number; perSecond: number; p50: number; p99: number }
  reads: { count: number; perSecond: number; p50: number; p99: number }
  /** Responses with a 5xx status, publishes and reads together. */
  serverErrors: number
  /** Requests that failed without an answer, or answered with a status no client expects. */
  failures: number
  /** Reads of a publisher's own site from the other instance right after the publish was acknowledged. */
  readAfterPublish: { checked: number; stale: number }
  acknowledged: number
  lost: number
  serving: { s3: LoadResult; fs: LoadResult; ratio: number; cpuRatio: number }
  /** No 5xx, no failure, no lost publish, no load-run error. */
  clean: boolean
}

export type ScaleOutResult = { skipped: string } | ({ skipped: null } & ScaleOutFigures)

/** The S3 instance's warm req/s over the filesystem instance's, at least. */
export const S3_SERVING_TARGET = 0.95

const int = (name: string, fallback: number, min: number): number => {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be a whole number of at least ${min}, got "${raw}"`)
  return value
}

const BUCKET = 'plinth-bench'
const SCHEMA_PREFIX = 'plinth_bench_'
const PAGE_SLUG = 'bench-page'
/** Within this, every instance serves what another changed (docs: "Scaling out"). */
const AGREEMENT_MS = 1000

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex')
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Answer {
  status: number
  body: Buffer
  ms: number
  /** Why there was no answer (status 0): the error's code, or its message. */
  failure?: string
}

/** One request over a keep-alive agent with a socket for every client; a failure resolves with status 0. */
function send(agent: http.Agent, port: number, method: string, path: string, headers: Record<string, string>, body?: Buffer): Promise<Answer> {
  const started = performance.now()
  const noAnswer = (error: NodeJS.ErrnoException): Answer => ({
    status: 0,
    body: Buffer.alloc(0),
    ms: performance.now() - started,
    failure: error.code ?? error.message,
  })
  return new Promise((resolve) => {
    const all: Record<string, string | number> = { ...headers }
    if (body) all['content-length'] = body.length
    const req = http.request({ host: '127.0.0.1', port, method, path, headers: all, agent }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), ms: performance.now() - started }))
      res.on('error', (error) => resolve(noAnswer(error)))
    })
    req.setTimeout(60_000, () => req.destroy(new Error('timed out')))
    req.on('error', (error) => resolve(noAnswer(error)))
    req.end(body)
  })
}

/** Whether a process of this machine with this id is running. */
function running(pid: number): boolean {
  try {
    return process.kill(pid, 0)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * Drops the schemas of earlier runs whose process is gone (a run killed before its cleanup). The
 * schema names carry the process id, so a run still going on this machine keeps its own; a run
 * from another machine on the same database cannot be told apart, so give it a database of its own.
 */
async function dropLeftSchemas(admin: pg.Client): Promise<void> {
  const { rows } = await admin.query<{ nspname: string }>(`select nspname from pg_namespace where nspname like 'plinth\\_bench\\_%'`)
  for (const { nspname } of rows) {
    const pid = Number(/^plinth_bench_(\d+)_/.exec(nspname)?.[1])
    if (Number.isInteger(pid) && (pid === process.pid || running(pid))) continue
    await admin.query(`DROP SCHEMA IF EXISTS "${nspname}" CASCADE`)
  }
}

/** A database URL whose connections use `schema` and carry `applicationName` (pg_stat_activity). */
function schemaUrl(base: string, schema: string, applicationName: string): string {
  const url = new URL(base)
  url.searchParams.set('options', `-c search_path=${schema}`)
  url.searchParams.set('application_name', applicationName)
  return url.toString()
}

interface Site {
  slug: string
  websiteId: string
  /** The files of the last acknowledged version, by path, as sha256 of their bytes. */
  live: { version: number; files: Map<string, string> }
}

interface Acknowledged {
  slug: string
  version: number
  indexHash: string
}

const filesByHash = (files: BundleFile[]) => new Map(files.map((f) => [f.path, sha256(f.content)]))

export async function scaleOutPhase(): Promise<ScaleOutResult> {
  const clients = int('BENCH_SCALE_CLIENTS', 50, 2)
  const publishers = Math.min(clients - 1, int('BENCH_SCALE_PUBLISHERS', 10, 1))
  const seconds = int('BENCH_SCALE_SECONDS', 30, 1)
  console.log(`\n== 5. Scale-out: two instances on PostgreSQL and S3, ${clients} clients publishing and reading for ${seconds} s ==`)
  const databaseUrl = process.env.DATABASE_URL
  if (!databaseUrl) {
    console.log(
      '  skipped: DATABASE_URL is not set (set it to a PostgreSQL database the benchmark may create schemas in, e.g. postgres://postgres@127.0.0.1:5432/test)',
    )
    return { skipped: 'DATABASE_URL is not set' }
  }

  const admin = new pg.Client({ connectionString: databaseUrl, application_name: 'plinth-bench' })
  await admin.connect()
  const schema = `${SCHEMA_PREFIX}${process.pid}_${Math.random().toString(36).slice(2, 8)}`
  const s3Schema = `${schema}_s3`
  const fsSchema = `${schema}_fs`
  const children: Child[] = []
  try {
    await dropLeftSchemas(admin)
    for (const name of [schema, s3Schema, fsSchema]) await admin.query(`CREATE SCHEMA "${name}"`)

    const s3Dir = await makeTempDir('s3')
    const s3 = await spawnChild('s3rver', 's3-server.ts', { BENCH_S3_DIR: s3Dir, BENCH_S3_BUCKET: BUCKET })
    children.push(s3)
    const s3Env = {
      PLINTH_BLOB_STORE: 's3',
      PLINTH_S3_BUCKET: BUCKET,
      PLINTH_S3_ENDPOINT: s3.info.address,
      PLINTH_S3_FORCE_PATH_STYLE: 'true',
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
      // Every client's site belongs to one user, A's.
      PLINTH_MAX_WEBSITES: String(clients + 10),
    }
    const dirs = { a: await makeTempDir('scale-a'), b: await makeTempDir('scale-b') }
    // Started together on the empty schema: the migrations run once, under Kysely's advisory lock.
    const startInstance = (name: 'a' | 'b') =>
      spawnChild(
        `plinth-${name}`,
        'plinth-server.ts',
        plinthEnv(dirs[name], { ...s3Env, DATABASE_URL: schemaUrl(databaseUrl, schema, `plinth-bench-${name}`) }),
      )
    const [a, b] = await Promise.all([startInstance('a'), startInstance('b')])
    children.push(a, b)
    const instances = [a, b]
    /** A for even turns, B for odd ones. */
    const inTurn = (turn: number) => (turn % 2 === 0 ? a : b)
    const token = a.info.token as string
    console.log(
      `  s3rver pid ${s3.pid}, instance A pid ${a.pid}, instance B pid ${b.pid}; PostgreSQL schema ${schema}; ` +
        `${publishers} clients publish (through A and B in turn), ${clients - publishers} read (either instance)`,
    )

    const agent = new http.Agent({ keepAlive: true, maxSockets: clients + 8 })
    const json = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
    const siteHeaders = (label: string) => ({ host: `${label}.${SITE_DOMAIN}` })

    // One site per client, created through A and B in turn (not measured).
    const sites: Site[] = new Array(clients)
    const acknowledged: Acknowledged[] = []
    await pool(clients, 8, async (i) => {
      const slug = `scale-${i}`
      const files = smallSite(i)
      const via = inTurn(i)
      const res = await send(agent, via.port, 'POST', '/v1/websites', json, Buffer.from(JSON.stringify({ name: slug, slug, category: 'other', files })))
      if (res.status !== 201) throw new Error(`creating ${slug} through ${via.name}: ${res.status} ${res.body.toString().slice(0, 500)}`)
      const { websiteId, version } = JSON.parse(res.body.toString()) as { websiteId: string; version: number }
      const site = { slug, websiteId, live: { version, files: filesByHash(files) } }
      sites[i] = site
      acknowledged.push({ slug, version, indexHash: site.live.files.get('index.html')! })
    })

    // The load.
    const publishMs: number[] = []
    const readMs: number[] = []
    const statuses = new Map<string, number>()
    let serverErrors = 0
    let failures = 0
    const readAfterPublish = { checked: 0, stale: 0 }
    const tally = (kind: string, { status, failure }: Answer, expected: number) => {
      if (status >= 500) serverErrors++
      else if (status !== expected) failures++
      const key = `${kind} ${status === 0 ? `no answer (${failure})` : status}`
      statuses.set(key, (statuses.get(key) ?? 0) + 1)
    }

    const started = performance.now()
    const end = started + seconds * 1000
    const publisher = async (i: number, site: Site) => {
      for (let k = 0; performance.now() < end; k++) {
        const via = inTurn(i + k)
        const other = inTurn(i + k + 1)
        const files = smallSite(i)
        const body = Buffer.from(JSON.stringify({ files, message: `bench ${k}` }))
        const res = await send(agent, via.port, 'POST', `/v1/websites/${site.websiteId}/versions`, json, body)
        publishMs.push(res.ms)
        tally('publish', res, 201)
        if (res.status !== 201) continue
        const { version } = JSON.parse(res.body.toString()) as { version: number }
        const hashes = filesByHash(files)
        if (version > site.live.version) site.live = { version, files: hashes }
        acknowledged.push({ slug: site.slug, version, indexHash: hashes.get('index.html')! })
        // Read-your-write from the other instance, at once: how often a notification is still on its way.
        const read = await send(agent, other.port, 'GET', '/', siteHeaders(site.slug))
        readMs.push(read.ms)
        tally('read', read, 200)
        if (read.status === 200) {
          readAfterPublish.checked++
          if (sha256(read.body) !== hashes.get('index.html')) readAfterPublish.stale++
        }
      }
    }
    const reader = async (i: number) => {
      for (let k = 0; performance.now() < end; k++) {
        const site = sites[Math.floor(Math.random() * sites.length)]!
        const res = await send(agent, inTurn(i + k).port, 'GET', '/', siteHeaders(site.slug))
        readMs.push(res.ms)
        tally('read', res, 200)
      }
    }
    await Promise.all(sites.map((site, i) => (i < publishers ? publisher(i, site) : reader(i))))
    const elapsed = (performance.now() - started) / 1000

    const publishes = { count: publishMs.length, perSecond: publishMs.length / elapsed, p50: percentile(publishMs, 50), p99: percentile(publishMs, 99) }
    const reads = { count: readMs.length, perSecond: readMs.length / elapsed, p50: percentile(readMs, 50), p99: percentile(readMs, 99) }
    console.log(
      `  publishes: ${fmtInt(publishes.count)} in ${elapsed.toFixed(1)} s, ${publishes.perSecond.toFixed(1)}/s, p50 ${fmtMs(publishes.p50)}, p99 ${fmtMs(publishes.p99)}`,
    )
    console.log(`  reads:     ${fmtInt(reads.count)}, ${fmtInt(reads.perSecond)}/s, p50 ${fmtMs(reads.p50)}, p99 ${fmtMs(reads.p99)}`)
    console.log(`  statuses:  ${[...statuses].map(([key, n]) => `${key}: ${fmtInt(n)}`).join(', ')}`)
    console.log(`  5xx: ${serverErrors} (must be 0): ${serverErrors === 0 ? 'PASS' : 'FAIL'}; other failures: ${failures}`)
    console.log(
      `  read of the new version from the other instance right after the acknowledgement: ${readAfterPublish.stale} of ${fmtInt(readAfterPublish.checked)} still the previous version (the notification was on its way)`,
    )

    // Every acknowledged publish, on both instances.
    await Promise.all(instances.map((child) => child.ask('settled', {}, 120_000)))
    await sleep(AGREEMENT_MS)
    const checkStarted = performance.now()
    const problems: string[] = []
    const lostVersions = new Set<string>()
    await poolEach(acknowledged, 16, async (ack) => {
      for (const child of instances) {
        const res = await send(agent, child.port, 'GET', '/', siteHeaders(`${ack.slug}--v${ack.version}`))
        if (res.status !== 200 || sha256(res.body) !== ack.indexHash) {
          lostVersions.add(`${ack.slug} v${ack.version}`)
          problems.push(`${child.name}: ${ack.slug} v${ack.version} answered ${res.status}${res.status === 200 ? ' with other bytes' : ''}`)
        }
      }
    })
    await poolEach(sites, 16, async (site) => {
      for (const child of instances) {
        for (const [path, hash] of site.live.files) {
          const res = await send(agent, child.port, 'GET', `/${path === 'index.html' ? '' : path}`, siteHeaders(site.slug))
          if (res.status !== 200 || sha256(res.body) !== hash) {
            lostVersions.add(`${site.slug} v${site.live.version}`)
            problems.push(
              `${child.name}: live ${site.slug} (v${site.live.version}) /${path} answered ${res.status}${res.status === 200 ? ' with other bytes' : ''}`,
            )
          }
        }
      }
    })
    const lost = lostVersions.size
    console.log(
      `  lost publishes: ${lost} of ${fmtInt(acknowledged.length)} acknowledged (each version read from both instances at its preview address, ` +
        `and every file of each site's live version; ${((performance.now() - checkStarted) / 1000).toFixed(1)} s): ${lost === 0 ? 'PASS' : 'FAIL'}`,
    )
    for (const line of problems.slice(0, 10)) console.log(`    ${line}`)
    const leftInDataDirs = (await Promise.all([readdir(dirs.a), readdir(dirs.b)])).flat()
    console.log(`  data dirs of A and B: ${leftInDataDirs.length === 0 ? 'empty (every blob is in the bucket)' : `hold ${leftInDataDirs.join(', ')}`}`)
    await Promise.all([a.stop(), b.stop()])

    // One instance warm: the S3 store against the filesystem store, the same page. Two fresh
    // instances, each on an empty schema and an empty store of its own (the S3 one under a key
    // prefix of its own in the bucket), so that nothing but the store differs between them: not
    // the heap a 30 s load leaves behind, nor a sweep at start listing the load's objects.
    const warm = {
      s3: { dir: await makeTempDir('scale-s3'), schema: s3Schema, env: { ...s3Env, PLINTH_S3_PREFIX: 'warm/' } },
      fs: { dir: await makeTempDir('scale-fs'), schema: fsSchema, env: {} },
    }
    const startWarm = (store: 's3' | 'fs') =>
      spawnChild(
        `plinth-${store}`,
        'plinth-server.ts',
        plinthEnv(warm[store].dir, { ...warm[store].env, DATABASE_URL: schemaUrl(databaseUrl, warm[store].schema, `plinth-bench-${store}`) }),
      )
    const [s3Child, fsChild] = await Promise.all([startWarm('s3'), startWarm('fs')])
    children.push(s3Child, fsChild)
    const index = { path: 'index.html', content: fourKbPage() }
    const page = [index, { path: 'style.css', content: SMALL_CSS }]
    for (const child of [s3Child, fsChild]) {
      const body = Buffer.from(JSON.stringify({ name: 'Bench page', category: 'other', slug: PAGE_SLUG, files: page }))
      const res = await send(agent, child.port, 'POST', '/v1/websites', { ...json, authorization: `Bearer ${child.info.token as string}` }, body)
      if (res.status !== 201) throw new Error(`publishing the page through ${child.name}: ${res.status} ${res.body.toString().slice(0, 500)}`)
      await child.ask('settled')
      const got = await send(agent, child.port, 'GET', '/', siteHeaders(PAGE_SLUG))
      if (got.status !== 200 || !got.body.equals(Buffer.from(index.content))) throw new Error(`${child.name} served ${got.status} instead of the 4 KB page`)
    }
    agent.destroy()
    console.log(
      `  one instance warm, a 4 KB page: autocannon, ${SETTINGS.connections} connections, ${SETTINGS.warmupSeconds} s warm-up + ${SETTINGS.durationSeconds} s ` +
        `in ${SETTINGS.slices} interleaved slices per row; two fresh instances, A and B stopped (S3 pid ${s3Child.pid}, filesystem pid ${fsChild.pid})`,
    )
    const host = { host: `${PAGE_SLUG}.${SITE_DOMAIN}` }
    const [s3Result, fsResult] = await compare(
      [
        { label: 'one instance, S3 store, warm', url: `${s3Child.info.address}/`, headers: host, pid: s3Child.pid },
        { label: 'one instance, filesystem store, warm', url: `${fsChild.info.address}/`, headers: host, pid: fsChild.pid },
      ],
      SETTINGS,
    )
    const ratio = s3Result.rps / fsResult.rps
    const cpuRatio = s3Result.perCpuSecond / fsResult.perCpuSecond
    console.log(
      `  ratio S3 / filesystem: ${ratio.toFixed(3)} req/s (target >= ${S3_SERVING_TARGET}): ${ratio >= S3_SERVING_TARGET ? 'PASS' : 'FAIL'}; ` +
        `${cpuRatio.toFixed(3)} per server CPU-second`,
    )
    const loadClean = [s3Result, fsResult].every((r) => r.errors === 0 && r.timeouts === 0 && r.non2xx === 0)
    if (!loadClean) console.log('  !! the serving runs had errors, timeouts or non-2xx responses: the figures above are not trustworthy')

    return {
      skipped: null,
      clients,
      publishers,
      seconds,
      publishes,
      reads,
      serverErrors,
      failures,
      readAfterPublish,
      acknowledged: acknowledged.length,
      lost,
      serving: { s3: s3Result, fs: fsResult, ratio, cpuRatio },
      clean: serverErrors === 0 && failures === 0 && lost === 0 && loadClean,
    }
  } finally {
    await Promise.all(children.map((child) => child.stop()))
    for (const name of [schema, s3Schema, fsSchema]) await admin.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`).catch(() => {})
    await admin.end()
  }
}
