/**
 * Screenshots and the API beside them: a real Plinth child with the system's Chromium takes ten
 * screenshot requests at once, of ten paths of one published page (so none is answered from the
 * cache), while GET /v1 is asked one request after another. The browser runs below the server's
 * CPU priority and a few pages at a time; the figure is how long GET /v1 waited meanwhile.
 * Skipped, with a line saying so, when no Chromium is installed.
 */
import { existsSync } from 'node:fs'
import { makeTempDir, spawnChild } from './lib/children.ts'
import { htmlPage } from './lib/content.ts'
import { api, probedDuring, request } from './lib/http.ts'
import { percentile } from './lib/load.ts'
import { plinthEnv } from './lib/settings.ts'

export const SCREENSHOTS_AT_ONCE = 10
/** GET /v1 answers within this many ms at worst while the screenshots are taken. */
export const SCREENSHOTS_API_TARGET_MS = 200
const BROWSER = '/usr/bin/chromium'

export type ScreenshotsResult =
  | { skipped: string }
  | { skipped?: undefined; seconds: number; pngs: number; failures: string[]; apiProbes: number[]; worstMs: number; medianMs: number; idleWorstMs: number }

export async function screenshotsPhase(): Promise<ScreenshotsResult> {
  console.log('\n== Screenshots: ten at once, and GET /v1 meanwhile ==')
  if (!existsSync(BROWSER)) {
    const skipped = `no browser at ${BROWSER} (apt-get install chromium)`
    console.log(`  skipped: ${skipped}`)
    return { skipped }
  }
  const dataDir = await makeTempDir('screenshots')
  const plinth = await spawnChild('plinth', 'plinth-server.ts', plinthEnv(dataDir, { PLINTH_BROWSER: BROWSER }))
  const token = plinth.info.token as string
  try {
    const site = await api<{ websiteId: string }>(plinth.port, token, 'POST', '/v1/websites', {
      name: 'Bench screenshots',
      category: 'other',
      slug: 'bench-screenshots',
      files: [{ path: 'index.html', content: htmlPage(4096, 'Bench screenshots') }],
    })
    const shot = (i: number) => `/v1/websites/${site.websiteId}/versions/1/screenshot?path=${encodeURIComponent(`/?n=${i}`)}&viewport=desktop`
    const headers = { authorization: `Bearer ${token}`, accept: 'image/png' }
    // One untimed screenshot first: the browser starts on the first one.
    const first = await request(plinth.port, { path: shot(-1), headers }, 120_000)
    if (first.status !== 200) throw new Error(`the first screenshot answered ${first.status}: ${first.body.toString().slice(0, 300)}`)
    // The same probe with nothing else asked of the server, as long: what the machine's own load costs it.
    const idle = await probedDuring(plinth.port, () => new Promise((resolve) => setTimeout(resolve, 5_000)))
    const started = performance.now()
    const { result: replies, probes } = await probedDuring(plinth.port, () =>
      Promise.all(Array.from({ length: SCREENSHOTS_AT_ONCE }, (_, i) => request(plinth.port, { path: shot(i), headers }, 120_000))),
    )
    const seconds = (performance.now() - started) / 1000
    const isPng = (body: Buffer) => body.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
    const failures = replies.flatMap((reply, i) =>
      reply.status === 200 && isPng(reply.body) ? [] : [`#${i}: ${reply.status} ${reply.body.toString().slice(0, 120)}`],
    )
    const result = {
      seconds,
      pngs: replies.length - failures.length,
      failures,
      apiProbes: probes,
      worstMs: Math.max(...probes),
      medianMs: percentile(probes, 50),
      idleWorstMs: Math.max(...idle.probes),
    }
    console.log(`  ${result.pngs} of ${SCREENSHOTS_AT_ONCE} PNGs in ${seconds.toFixed(1)} s${failures.length > 0 ? `; failed: ${failures.join('; ')}` : ''}`)
    console.log(
      `  GET /v1 meanwhile: ${probes.length} answers, worst ${result.worstMs.toFixed(1)} ms, median ${result.medianMs.toFixed(1)} ms (target worst < ${SCREENSHOTS_API_TARGET_MS} ms)`,
    )
    console.log(`  GET /v1 for 5 s before, with nothing else asked: worst ${result.idleWorstMs.toFixed(1)} ms`)
    return result
  } finally {
    await plinth.stop()
  }
}
