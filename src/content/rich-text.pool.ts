/**
 * Rich text is rendered in a pool of worker threads (piscina), never on the event loop: an
 * untrusted value can cost seconds of CPU and hundreds of MiB in jsdom, and the server must go on
 * answering everyone else meanwhile. Each task has a time limit that really stops it (the worker
 * is terminated and replaced) and runs in a thread with a heap limit (a task over it kills only
 * that thread); either way that one value fails with RICH_TEXT_TOO_COSTLY, never the process.
 */
import os from 'node:os'
import { MessageChannel } from 'node:worker_threads'
import { Piscina } from 'piscina'
import { AppError, type ErrorCode } from '../core/errors.ts'
import type { RenderedRichText, RichTextValue } from './rich-text.ts'

export interface RichTextPoolOptions {
  /** Most threads rendering at once; tasks beyond them wait their turn (not on the clock). */
  threads: number
  /** Time a task may run, from the moment a thread is free for it. */
  timeLimitMs: number
  /** Old-generation heap of each thread, in MiB. */
  memoryMb: number
  /** A thread beyond the first is stopped after this long without work. */
  idleTimeoutMs: number
}

/** The pool of a web server on a small machine: one thread kept warm, one per core beyond it at most. */
export function defaultRichTextPoolOptions(limits: { timeLimitMs: number; memoryMb: number }): RichTextPoolOptions {
  return { threads: Math.max(1, Math.min(4, os.availableParallelism())), idleTimeoutMs: 30_000, ...limits }
}

type Task = { op: 'render'; value: RichTextValue } | { op: 'rewrite'; html: string; sources: Record<string, string> }
type TaskResult = { ok: true; html: string; images: string[] } | { ok: false; code: ErrorCode; message: string }

interface Pending {
  task: Task
  chars: number
  resolve(result: { html: string; images: string[] }): void
  reject(error: unknown): void
}

/** How long a thread may take to start before its task is given up on. */
const THREAD_START_MS = 30_000
/**
 * Small values asked for in the same turn of the event loop go to a thread together, up to this
 * many characters: one message instead of dozens (a batch of short articles costs a message each
 * otherwise, more than their rendering).
 */
const CHUNK_CHARS = 32_000

const WORKER = new URL('./rich-text.worker.js', import.meta.url).href

export class RichTextPool {
  private pool: Piscina | null = null
  private running = 0
  private readonly waiting: Array<() => void> = []
  private pending: Pending[] = []
  private closed = false

  constructor(private readonly options: RichTextPoolOptions) {}

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
  async close(): Promise<void> {
    const pool = this.pool
    this.closed = true
    this.pool = null
    await pool?.destroy()
  }

  /**
   * Made on first use, so a process that never renders rich text (the admin CLI) starts no thread.
   * The threads inherit no flags of the main thread: each registers tsx itself.
   */
  private piscina(): Piscina {
    if (this.closed) throw new Error('the rich-text pool is closed')
    this.pool ??= new Piscina({
      filename: WORKER,
      minThreads: 1,
      maxThreads: this.options.threads,
      idleTimeout: this.options.idleTimeoutMs,
      execArgv: [],
      // Each task in a job of its own: jsdom keeps every document of the current job alive, and
      // piscina's Atomics loop would run task after task in one job without end.
      atomics: 'disabled',
      // Below the event loop in the scheduler: on a machine of two cores, two busy rendering threads
      // must not delay the answers of the main thread (piscina applies it with @napi-rs/nice).
      niceIncrement: 10,
      resourceLimits: { maxOldGenerationSizeMb: this.options.memoryMb, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 },
    })
    return this.pool
  }

  private submit(task: Task, chars: number): Promise<{ html: string; images: string[] }> {
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
    let results: TaskResult[]
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

  private async run(tasks: Task[]): Promise<TaskResult[]> {
    // Waiting for a free thread happens here, off the clock; piscina's own queue stays empty.
    if (this.running < this.options.threads) this.running++
    else await new Promise<void>((resolve) => this.waiting.push(resolve)) // the finishing task hands its slot over
    const limit = this.options.timeLimitMs
    let pool: Piscina
    try {
      pool = this.piscina()
    } catch (error) {
      this.release()
      throw error
    }
    // The clock starts when the thread takes the task up (it says so on a port of its own), so a
    // thread still starting (a replacement loads tsx and jsdom) costs the task nothing; a thread
    // that never starts is given up on after THREAD_START_MS more.
    const started = new MessageChannel()
    const stop = new AbortController()
    let timer = setTimeout(() => stop.abort(), limit + THREAD_START_MS)
    started.port1.once('message', () => {
      clearTimeout(timer)
      timer = setTimeout(() => stop.abort(), limit)
    })
    try {
      return await pool.run({ tasks, started: started.port2 }, { signal: stop.signal, transferList: [started.port2] })
    } catch (error) {
      if (stop.signal.aborted) {
        throw new AppError('RICH_TEXT_TOO_COSTLY', `Rich text took longer than ${limit} ms to render and was stopped; send shorter or simpler markup.`)
      }
      if ((error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') {
        throw new AppError(
          'RICH_TEXT_TOO_COSTLY',
          `Rich text needed more than ${this.options.memoryMb} MiB of memory to render and was stopped; send shorter or simpler markup.`,
        )
      }
      throw error
    } finally {
      clearTimeout(timer)
      started.port1.close()
      this.release()
    }
  }

  /** Hands the finished task's thread slot to the next waiting one, or frees it. */
  private release(): void {
    const next = this.waiting.shift()
    if (next) next()
    else this.running--
  }
}
