/**
 * Writing what the counter counted: every few seconds (PLINTH_TRAFFIC_FLUSH_SECONDS) the buckets
 * are taken from the counter and added to the database in one transaction (`n = n + excluded.n`,
 * visitor hashes inserted if absent), so the flushes of several instances add up exactly. A flush
 * that fails gives its buckets back for the next one. A clean stop flushes last; a crash loses
 * at most what was counted since the last flush.
 */
import { type Periodic, startPeriodic } from '../core/periodic.ts'
import { type TrafficBucket, type TrafficCounter, visitorHash } from './traffic-counter.ts'
import { DAY_MS, HOUR_MS } from './traffic-range.ts'
import type { KeyRow, TrafficIncrements, TrafficRepository } from './traffic.repository.ts'

/** Days the counts are kept. */
export const TRAFFIC_RETENTION_DAYS = 400

/** `YYYY-MM-DDTHH` of an hour since the epoch. */
export const hourKey = (hour: number): string => new Date(hour * HOUR_MS).toISOString().slice(0, 13)
/** `YYYY-MM-DD` of a day since the epoch. */
export const dayKey = (day: number): string => new Date(day * DAY_MS).toISOString().slice(0, 10)

export interface TrafficFlushOptions {
  counter: TrafficCounter
  repo: TrafficRepository
  intervalMs: number
  now: () => number
  log: { warn(obj: unknown, msg?: string): void }
}

/** The rows a flush writes for these buckets (salts known for every unsalted visitor's day). */
export function incrementsOf(buckets: readonly TrafficBucket[], saltOf: (day: number) => string | undefined): TrafficIncrements {
  const out: TrafficIncrements = { hours: [], keys: [], visitors: [] }
  for (const b of buckets) {
    const hour = hourKey(b.hour)
    const [s2, s3, s4, s5] = b.statuses
    out.hours.push({
      website_id: b.websiteId,
      hour,
      requests: b.requests,
      page_views: b.pageViews,
      bytes: b.bytes,
      bots: b.bots,
      not_found: b.notFound,
      status_2xx: s2,
      status_3xx: s3,
      status_4xx: s4,
      status_5xx: s5,
    })
    const key = (kind: KeyRow['kind'], key: string, referrer: string, count: number): KeyRow => ({ website_id: b.websiteId, hour, kind, key, referrer, count })
    for (const [path, n] of b.paths) out.keys.push(key('path', path, '', n))
    for (const [host, n] of b.referrers) out.keys.push(key('referrer', host, '', n))
    for (const [both, n] of b.missing) {
      const cut = both.indexOf('\n')
      out.keys.push(key('missing', both.slice(0, cut), both.slice(cut + 1), n))
    }
    const salt = saltOf(Math.floor((b.hour * HOUR_MS) / DAY_MS))
    if (salt === undefined) throw new Error(`no salt for the visitors of ${hour}`)
    const hashes = new Set<string>()
    for (const [address, agents] of b.visitors) for (const { agent } of agents) hashes.add(visitorHash(salt, `${address}\n${agent}`))
    for (const visitor of hashes) out.visitors.push({ website_id: b.websiteId, hour, visitor })
  }
  return out
}

export class TrafficFlusher {
  private periodic: Periodic | null = null
  private pruner: Periodic | null = null
  /** The flush under way, so that a stop waits for it and then writes what came after. */
  private flushing: Promise<void> = Promise.resolve()

  constructor(private readonly options: TrafficFlushOptions) {}

  /** Loads today's and tomorrow's salts (creating them if no instance has), then flushes on the interval and prunes hourly. */
  async start(): Promise<void> {
    this.periodic = await startPeriodic(
      () => this.flush(),
      this.options.intervalMs,
      (err) => this.options.log.warn({ err }, 'writing the traffic counts failed'),
    )
    this.pruner = await startPeriodic(
      () => this.prune(),
      HOUR_MS,
      (err) => this.options.log.warn({ err }, 'pruning old traffic counts failed'),
    )
  }

  /** Writes what was counted since the last flush (one at a time). */
  flush(): Promise<void> {
    const next = this.flushing.then(() => this.flushOnce())
    this.flushing = next.catch(() => {})
    return next
  }

  /** Stops the timers and writes what is left. */
  async close(): Promise<void> {
    this.periodic?.stop()
    this.pruner?.stop()
    await this.flush()
  }

  private async loadSalts(): Promise<void> {
    const { counter, repo, now } = this.options
    const today = Math.floor(now() / DAY_MS)
    // Tomorrow's too, so that the first requests after midnight find theirs.
    for (const day of [today, today + 1]) if (counter.saltOf(day) === undefined) counter.setSalt(day, await repo.saltOf(dayKey(day)))
  }

  private async flushOnce(): Promise<void> {
    const { counter, repo } = this.options
    await this.loadSalts()
    const buckets = counter.drain()
    if (buckets.length === 0) return
    try {
      // A bucket of a day whose salt this process no longer holds (a flush that failed for a day or more).
      for (const b of buckets) {
        const day = Math.floor((b.hour * HOUR_MS) / DAY_MS)
        if (b.visitors.size > 0 && counter.saltOf(day) === undefined) counter.setSalt(day, await repo.saltOf(dayKey(day)))
      }
      await repo.add(incrementsOf(buckets, (day) => counter.saltOf(day)))
    } catch (error) {
      counter.restore(buckets)
      throw error
    }
  }

  private async prune(): Promise<void> {
    const { repo, now } = this.options
    const today = Math.floor(now() / DAY_MS)
    await repo.dropSaltsBefore(dayKey(today - 1))
    await repo.pruneBefore(hourKey((today - TRAFFIC_RETENTION_DAYS) * 24))
  }
}
