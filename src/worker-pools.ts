/**
 * The pools of worker threads a composition runs untrusted work in, never on the event loop:
 * content pages (site-content/site-templates.pool.ts), a publish's content rules
 * (publishing/content-scans.pool.ts) and rich text (content/rich-text.pool.ts). compose() makes
 * a set of its own and closes it with the rest; a caller that runs several compositions in one
 * process may pass them one set instead, and closes it itself once they are done (the tests do:
 * a thread's start, which loads its libraries, costs more than most tests).
 */
import { defaultRichTextPoolOptions, RichTextPool } from './content/rich-text.pool.ts'
import { RICH_TEXT_MEMORY_MB, RICH_TEXT_TIME_LIMIT_MS } from './core/limits.ts'
import { ContentScanPool, defaultContentScanPoolOptions } from './publishing/content-scans.pool.ts'
import { defaultTemplatePoolOptions, TemplatePool } from './site-content/site-templates.pool.ts'

export interface WorkerPools {
  templates: TemplatePool
  contentScans: ContentScanPool
  richText: RichTextPool
}

/** A set of pools with a server's settings; no thread starts before a pool's first task. */
export function createWorkerPools(): WorkerPools {
  return {
    templates: new TemplatePool(defaultTemplatePoolOptions()),
    contentScans: new ContentScanPool(defaultContentScanPoolOptions()),
    richText: new RichTextPool(defaultRichTextPoolOptions({ timeLimitMs: RICH_TEXT_TIME_LIMIT_MS, memoryMb: RICH_TEXT_MEMORY_MB })),
  }
}

/** Stops every thread of the set; a task still running fails. */
export async function closeWorkerPools(pools: WorkerPools): Promise<void> {
  await pools.richText.close()
  await pools.contentScans.close()
  await pools.templates.close()
}
