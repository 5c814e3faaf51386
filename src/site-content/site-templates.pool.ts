/**
 * Content pages are rendered in a pool of worker threads (piscina), never on the event loop: a
 * site's templates are its owner's to write, and one that loops for seconds must not hold up every
 * other request of the process meanwhile. Each render has a time limit that really stops it (the
 * thread is terminated and replaced; LiquidJS's own renderLimit is checked only between template
 * nodes) and runs in a thread with a heap limit; a render over either fails like a broken template,
 * with a TemplateFailure that names it, and its owner error page is cached like any failure.
 *
 * Templates are parsed once per version in each thread (site-templates.thread.ts). A task carries
 * the version's template sources only when the thread does not have them yet: it answers
 * `missing`, and the render is sent again with them.
 */
import os from 'node:os'
import { TEMPLATE_MEMORY_MB, TEMPLATE_TIME_LIMIT_MS } from '../core/limits.ts'
import { THREAD_IDLE_MS, WorkerPool, type WorkerPoolOptions, WorkerTaskStopped } from '../core/worker-pool.ts'
import type { TemplateResult, TemplateTask } from './site-templates.thread.ts'
import { type TemplateRenderer, TemplateFailure, templateLabel, toPlainContext } from './site-templates.ts'

export type TemplatePoolOptions = WorkerPoolOptions

/** LiquidJS's renderLimit is this share of the pool's time limit (2 s of 5 s); a longer time limit lengthens both. */
const LIQUID_SHARE = 0.4

/** The pool of a web server: a thread when a page renders, a second one when two render at once, each kept THREAD_IDLE_MS without a render. */
export function defaultTemplatePoolOptions(): TemplatePoolOptions {
  return { threads: Math.min(2, os.availableParallelism()), idleTimeoutMs: THREAD_IDLE_MS, timeLimitMs: TEMPLATE_TIME_LIMIT_MS, memoryMb: TEMPLATE_MEMORY_MB }
}

const THREAD = new URL('./site-templates.thread.ts', import.meta.url).href

export class TemplatePool {
  private readonly pool: WorkerPool

  constructor(options: TemplatePoolOptions) {
    this.pool = new WorkerPool(THREAD, 'template', options)
  }

  /** What renders the pages of one version, whose templates are `files` (name under `_templates/` -> text). */
  version(versionId: string, files: ReadonlyMap<string, string>): TemplateRenderer {
    return { render: (name, fallback, context) => this.render(versionId, files, name, fallback, context) }
  }

  /** Stops every thread; a render still running fails. */
  close(): Promise<void> {
    return this.pool.close()
  }

  private async render(versionId: string, files: ReadonlyMap<string, string>, name: string, fallback: string, context: object) {
    const template = templateLabel(name, files)
    const renderLimitMs = Math.round(this.pool.options.timeLimitMs * LIQUID_SHARE)
    const task: TemplateTask = { versionId, name, fallback, context: toPlainContext(context), renderLimitMs }
    // A version without templates of its own sends its (empty) set every time: there is nothing to keep.
    if (files.size === 0) task.files = []
    let result = await this.run(task, template)
    if (result.kind === 'missing') result = await this.run({ ...task, files: [...files] }, template)
    if (result.kind === 'rendered') return { html: result.html, template: result.template }
    if (result.kind === 'failed') throw new TemplateFailure(result.template, result.reason)
    throw new Error(`the template thread did not take the templates of version ${versionId}`)
  }

  private async run(task: TemplateTask, template: string): Promise<TemplateResult> {
    try {
      return await this.pool.run<TemplateResult>({ task })
    } catch (error) {
      if (!(error instanceof WorkerTaskStopped)) throw error
      throw new TemplateFailure(
        template,
        error.reason === 'time'
          ? `it took longer than ${this.pool.options.timeLimitMs} ms to render and was stopped`
          : `it needed more than ${this.pool.options.memoryMb} MiB of memory to render and was stopped`,
      )
    }
  }
}
