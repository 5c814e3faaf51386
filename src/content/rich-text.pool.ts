/**
 * Rich text is rendered in a pool of worker threads (piscina), never on the event loop: an
 * untrusted value can cost seconds of CPU and hundreds of MiB in jsdom, and the server must go on
 * answering everyone else meanwhile. Each task has a time limit that really stops it (the worker
 * is terminated and replaced) and runs in a thread with a heap limit (a task over it kills only
 * that thread); either way that one value fails with RICH_TEXT_TOO_COSTLY, never the process.
 */
import os from 'node:os'
import { AppError } from '../core/errors.ts'
import { THREAD_IDLE_MS, WorkerPool, type WorkerPoolOptions, WorkerTaskStopped } from '../core/worker-pool.ts'
import type { RenderedRichText, RichTextValue } from './rich-text.ts'
import type { RichTextResult, RichTextTask } from './rich-text.thread.ts'

export type RichTextPoolOptions = WorkerPoolOptions

/** The pool of a web server: a thread per core at most (four), each kept THREAD_IDLE_MS without work. */
export function defaultRichTextPoolOptions(limits: { timeLimitMs: number; memoryMb: number }): RichTextPoolOptions {
  return { threads: Math.max(1, Math.min(4, os.availableParallelism())), idleTimeoutMs: THREAD_IDLE_MS, ...limits }
}

interface Pending {
  task: RichTextTask
  chars: number
  resolve(result: { html: string; images: string[] }): void
  reject(error: unknown): void
}

/**
 * Small values asked for in the same turn of the event loop go to a thread together, up to this
 * many characters: one message instead of dozens (a batch of short articles costs a message each
 * otherwise, more than their rendering).
 */
const CHUNK_CHARS = 32_000

const THREAD = new URL('./rich-text.thread.ts', import.meta.url).href

export class RichTextPool {
  private readonly pool: WorkerPool
  private pending: Pending[] = []

  constructor(options: RichTextPoolOptions) {
    this.pool = new WorkerPool(THREAD, 'rich-text', options)
  }

  /** Sanitized HTML of a rich-text value and the images it shows; AppError when it is refused. */
  async render(value: RichTextValue): Promise<RenderedRichText> {
    const source = 'markdown' in value ? value.markdown : value.html
    const { html, images } = await this.submit({ op: 'render', value }, typeof source === 'string' ? source.length : 0)
    return { html, images }
  }

  /** Sanitized HTML with image sources replaced (those not in `sources` stay as they are). */
  async rewriteImageSources(html: string, sources: Record<string, string>): Promise<string> {
    return (await this.submit({ op: 'rewrite', html, sources }, html.length)).html
  }

  /** Stops every thread; a task still running fails. */
  close(): Promise<void> {
    return this.pool.close()
  }

  private submit(task: RichTextTask, chars: number): Promise<{ html: string; images: string[] }> {
    return new Promise((resolve, reject) => {
      if (this.pending.length === 0) setImmediate(() => this.flush())
      this.pending.push({ task, chars, resolve, reject })
    })
  }

  /** Sends what was asked for in this turn, in chunks of at most CHUNK_CHARS (a bigger value alone). */
  private flush(): void {
    const pending = this.pending
    this.pending = []
    let chunk: Pending[] = []
    let chars = 0
    for (const item of pending) {
      if (chunk.length > 0 && chars + item.chars > CHUNK_CHARS) {
        void this.runChunk(chunk)
        chunk = []
        chars = 0
      }
      chunk.push(item)
      chars += item.chars
    }
    if (chunk.length > 0) void this.runChunk(chunk)
  }

  /** One task for the chunk; when it is stopped, each value is tried alone, so only a costly one fails. */
  private async runChunk(chunk: Pending[]): Promise<void> {
    let results: RichTextResult[]
    try {
      results = await this.run(chunk.map((item) => item.task))
    } catch (error) {
      if (chunk.length > 1 && error instanceof AppError && error.code === 'RICH_TEXT_TOO_COSTLY') {
        await Promise.all(chunk.map((item) => this.runChunk([item])))
      } else for (const item of chunk) item.reject(error)
      return
    }
    chunk.forEach((item, i) => {
      const result = results[i]!
      if (result.ok) item.resolve(result)
      else item.reject(new AppError(result.code, result.message))
    })
  }

  private async run(tasks: RichTextTask[]): Promise<RichTextResult[]> {
    try {
      return await this.pool.run<RichTextResult[]>({ tasks })
    } catch (error) {
      if (!(error instanceof WorkerTaskStopped)) throw error
      throw new AppError(
        'RICH_TEXT_TOO_COSTLY',
        error.reason === 'time'
          ? `Rich text took longer than ${this.pool.options.timeLimitMs} ms to render and was stopped; send shorter or simpler markup.`
          : `Rich text needed more than ${this.pool.options.memoryMb} MiB of memory to render and was stopped; send shorter or simpler markup.`,
      )
    }
  }
}
