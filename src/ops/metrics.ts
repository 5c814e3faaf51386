/**
 * The Prometheus metrics of one Plinth server (`GET /metrics`, prom-client). Each server has a
 * registry of its own, not prom-client's global one, so several servers in one process (the
 * tests, the benchmark) never count into each other's figures or collide on a name.
 *
 * Hot paths only add to plain numbers (request-metrics.ts); what other parts already count (the
 * site server's caches, the database pool) is read when Prometheus scrapes, never pushed.
 * Every label takes a bounded set of values: routes are route patterns, never raw URLs.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { BlobOperation, BlobStoreObserver } from '../blobs/instrumented-blob-store.ts'
import type { PoolUse } from '../db/connect.ts'
import { RequestMetrics } from './request-metrics.ts'

/** The route label of requests answered before Fastify: published sites, and the OAuth server. */
export const SITE_ROUTE = 'site'
export const OAUTH_ROUTE = 'oauth'
/** The route label of API and web requests that matched no route (404s). */
export const UNMATCHED_ROUTE = 'unmatched'

/** What the site server's caches hold and how often they answered (hits) or sent a request to the database or the blob store (misses). */
export interface ServingCounters {
  sites: number
  blobBytes: number
  blobEntries: number
  blobHits: number
  blobMisses: number
  manifestHits: number
  manifestMisses: number
  content: { renders: number }
}

/** What the site server counts (serving/site-handler.ts stats()), read at each scrape. */
export interface ServingStats {
  stats(): ServingCounters
}

/** From a file read off a warm disk to an S3 request retried with backoff. */
const BLOB_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

export class Metrics implements BlobStoreObserver {
  readonly registry = new Registry()
  /** `plinth_http_requests_total` and `plinth_http_request_duration_seconds`. */
  private readonly requests = new RequestMetrics(this.registry, 'plinth_http')
  private readonly publishes = new Counter({
    name: 'plinth_publishes_total',
    help: 'Versions published (new websites and new versions, over REST, MCP and the web site alike).',
    registers: [this.registry],
  })
  private readonly publishedBytes = new Counter({
    name: 'plinth_published_bytes_total',
    help: 'Decoded bytes of the bundles published (the bytesWritten of each publish).',
    registers: [this.registry],
  })
  private readonly blobSeconds = new Histogram({
    name: 'plinth_blob_store_duration_seconds',
    help: 'Time blob store operations took, failed ones included, by operation.',
    labelNames: ['operation'] as const,
    buckets: BLOB_SECONDS,
    registers: [this.registry],
  })
  private readonly blobErrors = new Counter({
    name: 'plinth_blob_store_errors_total',
    help: 'Blob store operations that failed, by operation (a get of a missing blob included).',
    labelNames: ['operation'] as const,
    registers: [this.registry],
  })
  private processMetrics = false

  /**
   * Adds prom-client's standard process and Node.js metrics under their usual names
   * (`process_cpu_seconds_total`, `nodejs_eventloop_lag_seconds`, ...), which ready-made
   * dashboards expect. Once per registry; a server calls it, a one-off command does not.
   */
  collectProcessMetrics(): void {
    if (this.processMetrics) return
    this.processMetrics = true
    collectDefaultMetrics({ register: this.registry })
  }

  /** One answered request: `route` is a route pattern or one of the fixed names above. */
  observeRequest(route: string, method: string, status: number, seconds: number): void {
    this.requests.record(route, method, status, seconds)
  }

  /** One successful publish of `bytes` decoded bytes. */
  published(bytes: number): void {
    this.publishes.inc()
    this.publishedBytes.inc(bytes)
  }

  observe(operation: BlobOperation, seconds: number, failed: boolean): void {
    this.blobSeconds.observe({ operation }, seconds)
    if (failed) this.blobErrors.inc({ operation })
  }

  /** Exposes the site server's cache figures, read at each scrape. */
  watchServing(serving: ServingStats): void {
    const registers = [this.registry]
    /** A counter whose values something else keeps: set to them at each scrape. */
    const counted = (name: string, help: string, read: (stats: ReturnType<ServingStats['stats']>) => Record<string, number>) =>
      new Counter({
        name,
        help,
        labelNames: ['cache'],
        registers,
        collect() {
          this.reset()
          for (const [cache, value] of Object.entries(read(serving.stats()))) this.inc({ cache }, value)
        },
      })
    counted('plinth_serving_cache_hits_total', 'Site requests answered from the cache: manifest (a prepared version) or blob (file bytes).', (s) => ({
      manifest: s.manifestHits,
      blob: s.blobHits,
    }))
    counted('plinth_serving_cache_misses_total', 'Site requests that had to read the database (manifest) or the blob store (blob).', (s) => ({
      manifest: s.manifestMisses,
      blob: s.blobMisses,
    }))
    new Gauge({
      name: 'plinth_serving_cache_entries',
      help: 'Entries held by the site caches: manifest (prepared versions) and blob (file bytes).',
      labelNames: ['cache'],
      registers,
      collect() {
        const stats = serving.stats()
        this.set({ cache: 'manifest' }, stats.sites)
        this.set({ cache: 'blob' }, stats.blobEntries)
      },
    })
    new Gauge({
      name: 'plinth_serving_cache_bytes',
      help: 'Bytes of file content held by the blob cache (bounded by PLINTH_SERVE_CACHE_BYTES).',
      registers,
      collect() {
        this.set(serving.stats().blobBytes)
      },
    })
    new Counter({
      name: 'plinth_serving_content_renders_total',
      help: 'Content pages (entries, listings, feeds) rendered by the site server; cached pages are not rendered again.',
      registers,
      collect() {
        this.reset()
        this.inc(serving.stats().content.renders)
      },
    })
  }

  /** Exposes the database connection pool's use (PostgreSQL; SQLite has no pool and is not watched). */
  watchDatabasePool(use: () => PoolUse): void {
    const registers = [this.registry]
    const gauge = (name: string, help: string, read: (pool: PoolUse) => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read(use()))
        },
      })
    gauge('plinth_db_pool_connections', 'Open connections of the PostgreSQL pool, busy and idle.', (pool) => pool.total)
    gauge('plinth_db_pool_idle_connections', 'Open connections of the PostgreSQL pool that wait for a query.', (pool) => pool.idle)
    gauge('plinth_db_pool_waiting_queries', 'Queries waiting for a connection because every one of the pool is busy.', (pool) => pool.waiting)
    gauge('plinth_db_pool_max_connections', 'The most connections the PostgreSQL pool opens.', (pool) => pool.max)
  }

  /** The exposition, in the Prometheus text format. */
  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() }
  }
}
