/**
 * The content rules of a publish (HTML, SVG, CSS, JavaScript and template checks) run in a pool of
 * worker threads, never on the event loop: a bundle's texts are megabytes of untrusted input,
 * costly to parse, and the server must go on answering everyone else meanwhile. Running apart also
 * lets a publish hash and store its bytes while its texts are checked.
 *
 * A publish's texts go to the threads in a few batches of files, one per thread for an ordinary
 * bundle, not one task per file: between two tasks a thread waits for the event loop to hand it
 * the next, and during a publish the event loop is busy hashing and storing, so small files sent
 * one by one would wait far longer than their checks take (docs/benchmarks.md). A batch stopped by
 * its time or memory limit has its files checked again one by one, so only a file over the limit
 * on its own fails (CONTENT_TOO_COMPLEX, naming it), never the process.
 */
import os from 'node:os'
import { CONTENT_SCAN_MEMORY_MB, CONTENT_SCAN_TIME_LIMIT_MS } from '../core/limits.ts'
import type { Warning } from '../core/schemas.ts'
import { quoted } from '../core/text.ts'
import { THREAD_IDLE_MS, WorkerPool, type WorkerPoolOptions, WorkerTaskStopped } from '../core/worker-pool.ts'
import type { SiteCheckInput } from '../site-check/site-check.ts'
import type { Finding } from './bundle-paths.ts'
import type { ScanOutcome, TextScan } from './content-rules.ts'
import type { ContentScanTask } from './content-scans.thread.ts'

export interface ContentScanPoolOptions extends WorkerPoolOptions {
  /** About the most characters of text one batch holds; a bigger file goes alone. */
  batchChars: number
}

/**
 * About the most characters of text a server's batch holds: checking them fits far inside the time
 * limit, so a batch is in practice stopped only for a file that its own check would not fit in
 * either.
 */
export const CONTENT_SCAN_BATCH_CHARS = 512 * 1024

/** The pool of a server: two threads at most, each kept THREAD_IDLE_MS without work. */
export function defaultContentScanPoolOptions(): ContentScanPoolOptions {
  return {
    threads: Math.min(2, os.availableParallelism()),
    idleTimeoutMs: THREAD_IDLE_MS,
    timeLimitMs: CONTENT_SCAN_TIME_LIMIT_MS,
    memoryMb: CONTENT_SCAN_MEMORY_MB,
    batchChars: CONTENT_SCAN_BATCH_CHARS,
  }
}

/** The module the pool's threads run, named by its TypeScript source (core/worker-pool.ts). */
export const CONTENT_SCAN_THREAD = new URL('./content-scans.thread.ts', import.meta.url).href

export class ContentScanPool {
  private readonly pool: WorkerPool

  constructor(private readonly options: ContentScanPoolOptions) {
    this.pool = new WorkerPool(CONTENT_SCAN_THREAD, 'content-scan', options)
  }

  /**
   * What the content rules report for each text (same order), at most `limit` of a code beyond
   * the first, with each text's facts for the site check when `facts`.
   */
  async scan(scans: readonly TextScan[], limit: number, facts = false): Promise<ScanOutcome[]> {
    const found = new Array<ScanOutcome>(scans.length)
    const batches = batchesOf(scans, this.options.threads, this.options.batchChars)
    await Promise.all(batches.map((batch) => this.scanBatch(batch, scans, limit, facts, found)))
    return found
  }

  /**
   * The site check of a bundle (site-check/site-check.ts) in a thread. Bounded as it is, it fits
   * the time and memory limits by far; stopped anyway, it says so in a warning and nothing else,
   * since a warning never refuses a publish.
   */
  async checkSite(input: SiteCheckInput): Promise<Warning[]> {
    try {
      return await this.pool.run<Warning[]>({ site: input } satisfies ContentScanTask)
    } catch (error) {
      if (!(error instanceof WorkerTaskStopped)) throw error
      const why = error.reason === 'time' ? `took longer than ${this.options.timeLimitMs / 1000} s` : `needed more than ${this.options.memoryMb} MiB of memory`
      return [{ code: 'CHECK_INCOMPLETE', path: '', message: `The site check of this version ${why} and was stopped: publish again to have it checked.` }]
    }
  }

  close(): Promise<void> {
    return this.pool.close()
  }

  /** Checks the files at `indexes` of `scans` in one task, into `found`; stopped, it checks them one by one. */
  private async scanBatch(indexes: number[], scans: readonly TextScan[], limit: number, facts: boolean, found: ScanOutcome[]): Promise<void> {
    const batch = indexes.map((i) => ({ path: scans[i]!.path, contentType: scans[i]!.contentType, text: scans[i]!.text }))
    try {
      const results = await this.pool.run<ScanOutcome[]>({ scans: batch, limit, facts } satisfies ContentScanTask)
      indexes.forEach((index, k) => (found[index] = results[k]!))
    } catch (error) {
      if (!(error instanceof WorkerTaskStopped)) throw error
      if (indexes.length > 1) {
        await Promise.all(indexes.map((index) => this.scanBatch([index], scans, limit, facts, found)))
        return
      }
      found[indexes[0]!] = { found: [this.tooComplex(scans[indexes[0]!]!.path, error)], facts: null, forms: [] }
    }
  }

  private tooComplex(path: string, error: WorkerTaskStopped): Finding {
    const { timeLimitMs, memoryMb } = this.options
    const why = error.reason === 'time' ? `took longer than ${timeLimitMs / 1000} s` : `needed more than ${memoryMb} MiB of memory`
    return {
      code: 'CONTENT_TOO_COMPLEX',
      path,
      detail: error.reason === 'time' ? `over ${timeLimitMs} ms` : `over ${memoryMb} MiB`,
      message: `Checking ${quoted(path)} against the authoring rules ${why}, so it was stopped: simplify the file (split a very large page, remove deeply nested or repeated markup) and publish again.`,
    }
  }
}

/**
 * The texts' indexes in batches, each in ascending order: as many as there are threads, or a
 * multiple of that so that no batch holds much more than `batchChars`, and never an empty one.
 * Each text goes, largest first, into the lightest batch, so the threads finish together.
 */
export function batchesOf(scans: readonly TextScan[], threads: number, batchChars: number): number[][] {
  const total = scans.reduce((sum, scan) => sum + scan.text.length, 0)
  const count = Math.min(scans.length, threads * Math.max(1, Math.ceil(total / (threads * batchChars))))
  const batches = Array.from({ length: count }, () => ({ indexes: [] as number[], chars: 0 }))
  const largestFirst = scans.map((_, i) => i).sort((a, b) => scans[b]!.text.length - scans[a]!.text.length)
  for (const index of largestFirst) {
    const lightest = batches.reduce((min, batch) => (batch.chars < min.chars ? batch : min))
    lightest.indexes.push(index)
    lightest.chars += scans[index]!.text.length
  }
  return batches.map((batch) => batch.indexes.sort((a, b) => a - b))
}
