/**
 * The template thread's side of site-templates.pool.ts: each version's templates, parsed once and
 * kept by version id (templates never change within a version), and one render per task.
 */
import { LRUCache } from 'lru-cache'
import { fromPlainContext, type PlainContext, SiteTemplates, TemplateFailure } from './site-templates.ts'

export interface TemplateTask {
  versionId: string
  /** The version's templates (name under `_templates/` -> text); left out when the thread may have them already. */
  files?: Array<[string, string]>
  /** The template to render (e.g. `posts.html`) and the default used when the version has none by that name. */
  name: string
  fallback: string
  context: PlainContext
  /** LiquidJS's renderLimit for this render: a share of the pool's time limit (site-templates.pool.ts). */
  renderLimitMs: number
}

export type TemplateResult =
  | { kind: 'rendered'; html: string; template: string }
  | { kind: 'failed'; template: string; reason: string }
  /** The thread does not have the version's templates (a new or replaced thread, or one that let them go): send them. */
  | { kind: 'missing' }

/**
 * Versions whose templates this thread keeps, bounded by their number and by the heap their parsed
 * templates may take: well within the thread's heap (256 MiB), beside the render under way.
 */
const versions = new LRUCache<string, SiteTemplates>({ max: 300, maxSize: 96_000_000, sizeCalculation: (t) => Math.max(1, t.weight) })
/** A version without templates of its own renders the defaults: nothing of it to keep. */
const defaultsOnly = new SiteTemplates(new Map())

/** One message: `{task}` (see WorkerPool.run); one TemplateResult. */
export default async function renderTemplateTask({ task }: { task: TemplateTask }): Promise<TemplateResult> {
  let templates: SiteTemplates | undefined
  if (task.files === undefined) templates = versions.get(task.versionId)
  else if (task.files.length === 0) templates = defaultsOnly
  else {
    templates = new SiteTemplates(new Map(task.files))
    versions.set(task.versionId, templates)
  }
  if (templates === undefined) return { kind: 'missing' }
  try {
    const { html, template } = await templates.render(task.name, task.fallback, fromPlainContext(task.context), task.renderLimitMs)
    return { kind: 'rendered', html, template }
  } catch (error) {
    // The failure's text crosses the thread boundary; the server makes a TemplateFailure of it again.
    if (error instanceof TemplateFailure) return { kind: 'failed', template: error.template, reason: error.reason }
    throw error
  }
}
