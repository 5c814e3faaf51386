/**
 * A pool of worker threads (piscina) for work that must never run on the event loop because an
 * untrusted input decides its cost: rich text (content/rich-text.pool.ts), Liquid templates
 * (site-content/site-templates.pool.ts) and the content rules of a publish
 * (publishing/content-scans.pool.ts). Each task has a time limit that really stops it (the
 * thread is terminated and replaced) and runs in a thread with a heap limit (a task over it kills
 * only that thread); either way run() throws WorkerTaskStopped, and the caller says what failed.
 *
 * A pool runs one module in its threads: its default export takes a task's message and returns
 * the result. Every thread starts at thread-entry.js, which loads the module and tells the pool
 * when a thread takes a task up: the clock starts then, so a thread still starting costs the task
 * nothing. Pools name their module by its TypeScript source; where Plinth runs compiled (dist/,
 * what `npm start` runs) the thread loads the compiled module beside this one instead, and only a
 * process running the sources through tsx (tests, development) has its threads register tsx,
 * unless it calls loadThreadModulesFrom with a dist/ built from these very sources (tsx's loader
 * costs a thread's start about as much as the libraries the thread loads).
 *
 * Threads start on demand and stop after `idleTimeoutMs` without a task, the last one too. A pool
 * made for a server keeps them THREAD_IDLE_MS: a thread that waits costs the event loop nothing,
 * but its start delays the first task, and for some seconds after a start the thread's own
 * warm-up takes CPU from serving. An agent's publishes and edits come seconds to minutes apart, so
 * they find their threads started; a longer quiet gives the memory back
 * (docs/benchmarks.md#what-the-design-rests-on has the figures).
 */
import { MessageChannel } from 'node:worker_threads'
import { Piscina } from 'piscina'

export interface WorkerPoolOptions {
  /** Most threads working at once; tasks beyond them wait their turn (not on the clock). */
  threads: number
  /** Time a task may run, from the moment a thread is free for it. */
  timeLimitMs: number
  /** Old-generation heap of each thread, in MiB. */
  memoryMb: number
  /** A thread is stopped after this long without work, the last one too. */
  idleTimeoutMs: number
}

/** How long a server's pools keep a thread that has no work: see the comment above. */
export const THREAD_IDLE_MS = 5 * 60_000

/** A task stopped by the pool: it ran past the time limit, or its thread ran out of heap. */
export class WorkerTaskStopped extends Error {
  constructor(readonly reason: 'time' | 'memory') {
    super(reason === 'time' ? 'the task ran past its time limit and was stopped' : 'the task ran out of memory and was stopped')
  }
}

/**
 * How long a thread may take to start before its task is given up on. A start loads the
 * renderer's libraries (and tsx, running from the sources) at the threads' lowered priority, so on
 * a machine whose cores are busy it takes many times what it takes on an idle one: the bound is
 * wide (docs/benchmarks.md#what-the-design-rests-on).
 */
const THREAD_START_MS = 120_000

const THREAD_ENTRY = new URL('./thread-entry.js', import.meta.url).href

/** Whether this process runs the TypeScript sources (through tsx) rather than the compiled dist/. */
const RUNS_TYPESCRIPT = import.meta.url.endsWith('.ts')
/** The folder of the sources (src/) this module is part of. */
const SOURCES = new URL('../', import.meta.url).href
/** Where a process running the sources has its threads load the compiled twins of src/ modules, if anywhere. */
let compiledSources: string | null = null

/**
 * Makes the threads of this process, which runs the sources through tsx, load the compiled twins
 * of src/ modules from `dist`, which the caller knows to be built from these very sources.
 */
export function loadThreadModulesFrom(dist: URL): void {
  if (RUNS_TYPESCRIPT) compiledSources = dist.href
}

/** The module a thread loads for a pool's module named by its TypeScript source: the source itself, or its compiled twin. */
function threadModule(source: string): string {
  if (!source.endsWith('.ts')) throw new Error(`a pool's module is named by its TypeScript source: ${source}`)
  const compiled = `${source.slice(0, -'.ts'.length)}.js`
  if (!RUNS_TYPESCRIPT) return compiled
  return compiledSources && source.startsWith(SOURCES) ? compiledSources + compiled.slice(SOURCES.length) : source
}

export class WorkerPool {
  private pool: Piscina | null = null
  private running = 0
  private readonly waiting: Array<() => void> = []
  private closed = false

  /** The URL the threads load: the source, or its compiled twin. */
  private readonly module: string

  /** `source` is the URL of the TypeScript module the threads run; `name` says which pool is closed in the error of a late task. */
  constructor(
    source: string,
    private readonly name: string,
    readonly options: WorkerPoolOptions,
  ) {
    this.module = threadModule(source)
  }

  /** Runs one task in a thread; WorkerTaskStopped when a limit stopped it, the worker's own error otherwise. */
  async run<T>(message: object): Promise<T> {
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
    // thread still starting (a replacement loads its libraries) costs the task nothing; a
    // thread that never starts is given up on after THREAD_START_MS more.
    const started = new MessageChannel()
    const stop = new AbortController()
    let timer = setTimeout(() => stop.abort(), limit + THREAD_START_MS)
    started.port1.once('message', () => {
      clearTimeout(timer)
      timer = setTimeout(() => stop.abort(), limit)
    })
    try {
      return (await pool.run({ ...message, started: started.port2 }, { signal: stop.signal, transferList: [started.port2] })) as T
    } catch (error) {
      if (stop.signal.aborted) throw new WorkerTaskStopped('time')
      if ((error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') throw new WorkerTaskStopped('memory')
      throw error
    } finally {
      clearTimeout(timer)
      started.port1.close()
      this.release()
    }
  }

  /** The ids of the threads running now, busy or idle (none before the first task and after an idle spell). */
  get threadIds(): number[] {
    return this.pool?.threads.map((thread) => thread.threadId) ?? []
  }

  /** Stops every thread; a task still running fails. */
  async close(): Promise<void> {
    const pool = this.pool
    this.closed = true
    this.pool = null
    await pool?.destroy()
  }

  /**
   * Made on first use, so a process that never needs a thread (the admin CLI) starts none. The
   * threads inherit no flags of the main thread: loading a TypeScript module, each registers tsx itself.
   */
  private piscina(): Piscina {
    if (this.closed) throw new Error(`the ${this.name} pool is closed`)
    this.pool ??= new Piscina({
      filename: THREAD_ENTRY,
      workerData: { module: this.module, typescript: this.module.endsWith('.ts') },
      minThreads: 0,
      maxThreads: this.options.threads,
      idleTimeout: this.options.idleTimeoutMs,
      execArgv: [],
      // Each task in a job of its own: jsdom keeps every document of the current job alive, and
      // piscina's Atomics loop would run task after task in one job without end.
      atomics: 'disabled',
      // Below the event loop in the scheduler: on a machine of two cores, two busy threads must not
      // delay the answers of the main thread (piscina applies it with @napi-rs/nice).
      niceIncrement: 10,
      resourceLimits: { maxOldGenerationSizeMb: this.options.memoryMb, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 },
    })
    return this.pool
  }

  /** Hands the finished task's thread slot to the next waiting one, or frees it. */
  private release(): void {
    const next = this.waiting.shift()
    if (next) next()
    else this.running--
  }
}
