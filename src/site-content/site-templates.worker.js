// A worker thread of the template pool (site-templates.pool.ts). Plain JavaScript, because a worker
// starts from a file Node loads itself: it registers tsx's ESM loader in this thread, as
// rich-text.worker.js does, then loads the TypeScript side of the thread.
import { register } from 'tsx/esm/api'

register()
const { renderTemplateTask } = await import('./site-templates.thread.ts')
const { taskStarted } = await import('../core/worker-pool.ts')

/** One message: `{task, started}` (see WorkerPool.run); one TemplateResult. */
export default function templateTask({ task, started }) {
  taskStarted(started)
  return renderTemplateTask(task)
}
