/**
 * What counting traffic costs serving: the same 4 KB page served by two Plinth servers side by
 * side, two counting (PLINTH_TRAFFIC=on, the default) and two not (PLINTH_TRAFFIC=off), started
 * and measured in the order off, on, on, off so that neither start order nor place in the round
 * robin favours one, with a
 * browser's user agent so that every request is a counted page view (the visitor hash included).
 * Prints req/s with counting over req/s without; the target is a cost under 3%. Then checks that
 * the counting servers did count the requests they answered.
 */
import { api, siteGet } from './lib/http.ts'
import { makeTempDir, spawnChild } from './lib/children.ts'
import { fourKbPage, SMALL_CSS } from './lib/content.ts'
import { compare, fmtInt, type LoadResult, type Target } from './lib/load.ts'
import { plinthEnv, SETTINGS, SITE_DOMAIN } from './lib/settings.ts'

/** Counting may cost serving at most 3%. */
export const TRAFFIC_SERVING_TARGET = 0.97

const SLUG = 'bench-traffic'
const HOST = `${SLUG}.${SITE_DOMAIN}`
const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'

export interface TrafficResult {
  off: LoadResult
  on: LoadResult
  /** Mean req/s with counting over mean req/s without. */
  ratio: number
  cpuRatio: number
  /** Requests the counting servers stored, and the answers autocannon counted from them in the measured runs. */
  counted: number
  answered: number
}

export async function trafficPhase(): Promise<TrafficResult> {
  console.log('\n== Traffic counting: serving with counting on and off ==')
  // Two children of each kind, started and measured in the order off, on, on, off: on a busy
  // machine a child's start order and its row's place move req/s by up to a fifth.
  const servers = []
  for (const [n, traffic] of [
    [1, 'off'],
    [1, 'on'],
    [2, 'on'],
    [2, 'off'],
  ] as const) {
    const dataDir = await makeTempDir(`traffic-${traffic}-${n}`)
    const child = await spawnChild(
      `plinth-traffic-${traffic}-${n}`,
      'plinth-server.ts',
      plinthEnv(dataDir, { PLINTH_TRAFFIC: traffic, PLINTH_TRAFFIC_FLUSH_SECONDS: '1' }),
    )
    const token = child.info.token as string
    const site = await api<{ websiteId: string }>(child.port, token, 'POST', '/v1/websites', {
      name: 'Bench traffic',
      category: 'other',
      slug: SLUG,
      files: [
        { path: 'index.html', content: fourKbPage() },
        { path: 'style.css', content: SMALL_CSS },
      ],
    })
    const got = await siteGet(child.port, HOST, '/', { 'user-agent': BROWSER })
    if (got.status !== 200) throw new Error(`the ${traffic} server answered ${got.status}`)
    servers.push({ n, traffic, child, token, websiteId: site.websiteId })
  }
  const headers = { host: HOST, 'user-agent': BROWSER }
  const targets = servers.map((s): Target => ({ label: `Plinth, counting ${s.traffic} (${s.n})`, url: `${s.child.info.address}/`, headers, pid: s.child.pid }))
  const [off1, on1, on2, off2] = (await compare(targets, SETTINGS)) as [LoadResult, LoadResult, LoadResult, LoadResult]
  const offRps = (off1.rps + off2.rps) / 2
  const onRps = (on1.rps + on2.rps) / 2
  const ratio = onRps / offRps
  const cpuRatio = (on1.perCpuSecond + on2.perCpuSecond) / (off1.perCpuSecond + off2.perCpuSecond)
  // The counting server writes every second: wait for the last write, then read what it stored.
  await new Promise((resolve) => setTimeout(resolve, 2500))
  let counted = 0
  for (const s of servers.filter((one) => one.traffic === 'on')) {
    const stored = await api<{ totals: { requests: number } }>(s.child.port, s.token, 'GET', `/v1/websites/${s.websiteId}/traffic?granularity=hour`)
    counted += stored.totals.requests
  }
  const answered = on1.requests + on2.requests
  console.log(
    `  counting off ${fmtInt(offRps)} req/s, on ${fmtInt(onRps)} req/s (mean of two runs each): ratio on / off ${ratio.toFixed(3)} (target >= ${TRAFFIC_SERVING_TARGET}), per server CPU-second ${cpuRatio.toFixed(3)}`,
  )
  console.log(`  the counting servers stored ${fmtInt(counted)} requests; autocannon counted ${fmtInt(answered)} answers in the measured runs (plus warm-up)`)
  return { off: { ...off1, rps: offRps }, on: { ...on1, rps: onRps }, ratio, cpuRatio, counted, answered }
}
