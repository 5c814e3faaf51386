/**
 * Precompressed variants (br and gzip) are made after a blob is stored, off the request that
 * stored it: a publish answers as soon as its identity bytes and rows are durable, and the
 * variants follow within milliseconds. Until they exist the blob is served uncompressed (correct,
 * only larger); serving re-reads a version whose files still wait for theirs (site-cache.ts).
 *
 * A blob row says which variants exist (br_size, gzip_size) and, while they are being made, the
 * content type they are made for (variants_type). The row is written pending in the same
 * transaction as the reference to the blob; a variant file is durable before the row names it. A
 * process that stops with variants pending leaves rows that say so, and every instance picks them
 * up again when it starts (resumePending). Making them twice (two instances at once) is harmless:
 * the files are the same bytes and the row update is the same values.
 */
import type { BlobsTable } from '../db/types.ts'
import type { BlobStore } from './blob-store.ts'
import type { BlobsRepository } from './blobs.repository.ts'
import { compressVariants } from './compression.ts'

export interface VariantJob {
  hash: string
  contentType: string
  /** The identity bytes when the caller still holds them; read from the store otherwise. */
  bytes?: Buffer
}

export interface BlobVariantsOptions {
  blobs: BlobStore
  rows: BlobsRepository
  log: { warn(obj: unknown, msg?: string): void; info(obj: unknown, msg?: string): void }
  /** Blobs compressed at once (each compresses br and gzip side by side on the libuv pool). */
  concurrency: number
  /** Identity bytes held in the queue at most; jobs beyond it read their bytes back from the store. */
  maxQueuedBytes: number
}

/** How a server makes variants: two blobs at once, at most 64 MiB of identity bytes held in the queue. */
export const VARIANT_WORK = { concurrency: 2, maxQueuedBytes: 64 * 1024 * 1024 } satisfies Pick<BlobVariantsOptions, 'concurrency' | 'maxQueuedBytes'>

interface Queued {
  job: VariantJob
  done: () => void
}

/** Pending rows taken up per query when an instance starts. */
const RESUME_BATCH = 500

export class BlobVariants {
  private readonly queue: Queued[] = []
  private running = 0
  /** Lookups of pending rows in flight (schedulePending): settled() waits for them too. */
  private looking = 0
  private queuedBytes = 0
  private closed = false
  private readonly idle: Array<() => void> = []

  constructor(private readonly options: BlobVariantsOptions) {}

  /**
   * Schedules the variants of blobs just written (a row and its bytes): those whose row says they
   * are worth compressing. With none, `whenDone` is not called: there is nothing to wait for.
   */
  scheduleWritten(written: ReadonlyArray<{ row: BlobsTable; bytes: Buffer }>, whenDone?: () => void): void {
    const jobs: VariantJob[] = []
    for (const { row, bytes } of written) if (row.variants_type !== null) jobs.push({ hash: row.hash, contentType: row.variants_type, bytes })
    if (jobs.length > 0) this.schedule(jobs, whenDone)
  }

  /**
   * Makes the variants of blobs whose rows are recorded pending; `whenDone` runs once all of
   * them are settled (made, not worth it, or failed and left pending for the next start).
   */
  schedule(jobs: VariantJob[], whenDone?: () => void): void {
    if (jobs.length === 0 || this.closed) {
      whenDone?.()
      return
    }
    let left = jobs.length
    const done = () => {
      if (--left === 0) whenDone?.()
    }
    for (const job of jobs) {
      const bytes = job.bytes
      const keep = bytes !== undefined && this.queuedBytes + bytes.length <= this.options.maxQueuedBytes
      if (keep) this.queuedBytes += bytes.length
      this.queue.push({ job: keep ? job : { hash: job.hash, contentType: job.contentType }, done })
    }
    this.pump()
  }

  /**
   * Makes the variants still pending among these blobs: those stored with their variants left for
   * later (a draft's files, made once the draft is published). `whenDone` runs once they are
   * settled, and only if there were any.
   */
  schedulePending(hashes: readonly string[], whenDone?: () => void): void {
    if (hashes.length === 0 || this.closed) return
    this.looking++
    this.options.rows
      .pendingAmong([...new Set(hashes)])
      .then(
        (jobs) => {
          if (jobs.length > 0) this.schedule(jobs, whenDone)
        },
        (err: unknown) => this.options.log.warn({ err }, 'could not look up the blobs whose variants are pending; they are made at the next start'),
      )
      .finally(() => {
        this.looking--
        this.wakeIfIdle()
      })
  }

  /** Resolves when nothing is queued or being made (tests, and a clean shutdown). */
  settled(): Promise<void> {
    if (this.isIdle()) return Promise.resolve()
    return new Promise((resolve) => this.idle.push(resolve))
  }

  private isIdle(): boolean {
    return this.running === 0 && this.queue.length === 0 && this.looking === 0
  }

  private wakeIfIdle(): void {
    if (this.isIdle()) for (const resolve of this.idle.splice(0)) resolve()
  }

  /** Takes up the rows left pending by a process that stopped before their variants were made. */
  async resumePending(): Promise<number> {
    let resumed = 0
    let after = ''
    for (;;) {
      const rows = await this.options.rows.pendingVariants(after, RESUME_BATCH)
      if (rows.length === 0 || this.closed) break
      after = rows[rows.length - 1]!.hash
      await new Promise<void>((resolve) => this.schedule(rows, resolve))
      resumed += rows.length
    }
    if (resumed > 0) this.options.log.info({ blobs: resumed }, 'made the precompressed variants left pending')
    return resumed
  }

  /** Takes no more jobs and waits for those already started. */
  async close(): Promise<void> {
    this.closed = true
    for (const queued of this.queue.splice(0)) queued.done()
    this.queuedBytes = 0
    await this.settled()
  }

  private pump(): void {
    while (this.running < this.options.concurrency && this.queue.length > 0) {
      const queued = this.queue.shift()!
      this.queuedBytes -= queued.job.bytes?.length ?? 0
      this.running++
      this.make(queued.job)
        .catch((err: unknown) =>
          this.options.log.warn({ err, hash: queued.job.hash }, 'could not make the variants of a blob; they are made again at the next start'),
        )
        .finally(() => {
          this.running--
          queued.done()
          this.pump()
          this.wakeIfIdle()
        })
    }
  }

  private async make(job: VariantJob): Promise<void> {
    const { blobs, rows } = this.options
    let bytes = job.bytes
    if (bytes === undefined) {
      try {
        bytes = await blobs.get(job.hash)
      } catch (error) {
        // Deleted meanwhile (its site was deleted, or it was an orphan): nothing to compress.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
        throw error
      }
    }
    const variants = await compressVariants(bytes, job.contentType)
    // Each put is durable when it resolves: the row names a variant only once its bytes are safe.
    await Promise.all([variants.br && blobs.put(job.hash, variants.br, 'br'), variants.gzip && blobs.put(job.hash, variants.gzip, 'gzip')])
    await rows.settleVariants(job.hash, variants.br?.length ?? null, variants.gzip?.length ?? null)
  }
}
