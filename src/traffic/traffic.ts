/**
 * Site traffic, put together: the counter the site server counts into, the flusher that writes
 * its counts, and the service that reads them. With counting off (PLINTH_TRAFFIC=off) there is no
 * counter, and the figures stay as they were.
 */
import type { IncomingMessage } from 'node:http'
import type { Config } from '../config.ts'
import type { WebsiteAccess } from '../db/access.ts'
import type { Db } from '../db/connect.ts'
import { TrafficCounter } from './traffic-counter.ts'
import { TrafficFlusher } from './traffic-flush.ts'
import { TrafficRepository } from './traffic.repository.ts'
import { TrafficService } from './traffic.service.ts'

export interface TrafficOptions {
  db: Db
  config: Pick<Config, 'traffic'>
  access: WebsiteAccess
  clientAddress: (req: IncomingMessage) => string
  now: () => number
  log: { warn(obj: unknown, msg?: string): void }
}

export interface Traffic {
  /** What the site server counts into; null when counting is off. */
  counter: TrafficCounter | null
  service: TrafficService
  /** Loads the day's salts and starts the flushes (a server; a CLI command counts nothing). */
  start(): Promise<void>
  /** Writes what was counted so far (a test's way to read its counts at once). */
  flush(): Promise<void>
  /** Stops the flushes and writes what is left. */
  close(): Promise<void>
}

export function createTraffic({ db, config, access, clientAddress, now, log }: TrafficOptions): Traffic {
  const repo = new TrafficRepository(db.kysely)
  const service = new TrafficService({ access, repo, now })
  if (!config.traffic.enabled) {
    const nothing = () => Promise.resolve()
    return { counter: null, service, start: nothing, flush: nothing, close: nothing }
  }
  const counter = new TrafficCounter({ clientAddress, now })
  const flusher = new TrafficFlusher({ counter, repo, intervalMs: config.traffic.flushSeconds * 1000, now, log })
  let started = false
  return {
    counter,
    service,
    start: async () => {
      await flusher.start()
      started = true
    },
    flush: () => flusher.flush(),
    close: () => (started ? flusher.close() : Promise.resolve()),
  }
}
