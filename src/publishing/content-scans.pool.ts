/**
 * The content rules of a publish (HTML, SVG, CSS, JavaScript and template checks) run in a pool of
 * worker threads, never on the event loop: a bundle's texts are megabytes of untrusted input that
 * the parsers take tens to hundreds of milliseconds over, and the server must go on answering
 * everyone else meanwhile. Running apart also lets a publish hash and store its bytes while its
 * texts are checked. One task per file: a task over its time or memory limit names that file
 * (CONTENT_TOO_COMPLEX), never stops the process.
 */
import os from 'node:os'
import type { PublishViolation } from '../core/errors.ts'
import { WorkerPool, type WorkerPoolOptions, WorkerTaskStopped } from '../core/worker-pool.ts'
import type { TextScan } from './authoring-rules.ts'
import { quoted } from './bundle-paths.ts'

/** Time one file's checks may take: a maximal file (2 MiB of HTML) takes a small fraction of it. */
export const CONTENT_SCAN_TIME_LIMIT_MS = 10_000
/** Heap of each thread: a parse5 tree of a maximal file is well under it. */
export const CONTENT_SCAN_MEMORY_MB = 512

export function defaultContentScanPoolOptions(): WorkerPoolOptions {
  return {
    threads: Math.min(2, os.availableParallelism()),
    idleTimeoutMs: 10_000,
    timeLimitMs: CONTENT_SCAN_TIME_LIMIT_MS,
    memoryMb: CONTENT_SCAN_MEMORY_MB,
  }
}

const THREAD = new URL('./content-scans.thread.ts', import.meta.url).href

export class ContentScanPool {
  private readonly pool: WorkerPool

  constructor(options: WorkerPoolOptions = defaultContentScanPoolOptions()) {
    this.pool = new WorkerPool(THREAD, 'content-scan', options)
  }

  /** What the content rules report for each text (same order), at most `limit` of a code beyond the first. */
  scan(scans: readonly TextScan[], limit: number): Promise<PublishViolation[][]> {
    return Promise.all(scans.map((scan) => this.scanOne(scan, limit)))
  }

  close(): Promise<void> {
    return this.pool.close()
  }

  private async scanOne(scan: TextScan, limit: number): Promise<PublishViolation[]> {
    try {
      return await this.pool.run<PublishViolation[]>({ scan: { path: scan.path, contentType: scan.contentType, text: scan.text }, limit })
    } catch (error) {
      if (!(error instanceof WorkerTaskStopped)) throw error
      const { timeLimitMs, memoryMb } = this.pool.options
      const why = error.reason === 'time' ? `took longer than ${timeLimitMs / 1000} s` : `needed more than ${memoryMb} MiB of memory`
      return [
        {
          code: 'CONTENT_TOO_COMPLEX',
          path: scan.path,
          detail: error.reason === 'time' ? `over ${timeLimitMs} ms` : `over ${memoryMb} MiB`,
          message: `Checking ${quoted(scan.path)} against the authoring rules ${why}, so it was stopped: simplify the file (split a very large page, remove deeply nested or repeated markup) and publish again.`,
        },
      ]
    }
  }
}
