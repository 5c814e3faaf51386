/**
 * A BlobStore that times every call of the store it wraps and reports it, failures included, to
 * an observer (the metrics, ops/metrics.ts). The stores themselves stay free of metrics, and the
 * same figures come from the filesystem and the S3 store alike. Results and errors pass through
 * unchanged.
 */
import { performance } from 'node:perf_hooks'
import type { BlobEncoding, BlobFile, BlobStore } from './blob-store.ts'

/** The store operations that are timed (close() is not: it does no I/O worth watching). */
export type BlobOperation = 'has' | 'put' | 'get' | 'delete' | 'list' | 'removeIfOlder' | 'check'

/** Told of each call when it settles: how long it took and whether it failed. */
export interface BlobStoreObserver {
  observe(operation: BlobOperation, seconds: number, failed: boolean): void
}

export class InstrumentedBlobStore implements BlobStore {
  constructor(
    private readonly inner: BlobStore,
    private readonly observer: BlobStoreObserver,
  ) {}

  has(hash: string, encoding?: BlobEncoding): Promise<boolean> {
    return this.timed('has', () => this.inner.has(hash, encoding))
  }

  put(hash: string, bytes: Buffer, encoding?: BlobEncoding): Promise<void> {
    return this.timed('put', () => this.inner.put(hash, bytes, encoding))
  }

  get(hash: string, encoding?: BlobEncoding): Promise<Buffer> {
    return this.timed('get', () => this.inner.get(hash, encoding))
  }

  delete(hash: string): Promise<void> {
    return this.timed('delete', () => this.inner.delete(hash))
  }

  /** Timed from the first file asked for to the last one given, or to where the caller stopped (a listing is paged, lazily). */
  async *list(): AsyncIterable<BlobFile> {
    const started = performance.now()
    let failed = false
    try {
      yield* this.inner.list()
    } catch (error) {
      failed = true
      throw error
    } finally {
      this.observer.observe('list', (performance.now() - started) / 1000, failed)
    }
  }

  removeIfOlder(file: BlobFile, beforeMs: number): Promise<boolean> {
    return this.timed('removeIfOlder', () => this.inner.removeIfOlder(file, beforeMs))
  }

  check(): Promise<void> {
    return this.timed('check', () => this.inner.check())
  }

  settled(): Promise<void> {
    return this.inner.settled()
  }

  async close(): Promise<void> {
    await this.inner.close()
  }

  private async timed<T>(operation: BlobOperation, call: () => Promise<T>): Promise<T> {
    const started = performance.now()
    let value: T
    try {
      value = await call()
    } catch (error) {
      this.observer.observe(operation, (performance.now() - started) / 1000, true)
      throw error
    }
    this.observer.observe(operation, (performance.now() - started) / 1000, false)
    return value
  }
}
