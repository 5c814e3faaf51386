// A worker thread of the rich-text pool (rich-text.pool.ts). Plain JavaScript, because a worker
// starts from a file Node loads itself: it registers tsx's ESM loader in this thread, as
// bin/plinth.js does for the CLI, then loads the TypeScript renderer. The same file works under
// `npm start`, `npm test`, the CLI and the benchmark, whether or not the parent preloaded tsx.
import { register } from 'tsx/esm/api'

register()
const { renderRichText, rewriteImageSources } = await import('./rich-text.ts')
const { AppError } = await import('../core/errors.ts')

// jsdom loads on first use (half a second): pay it while the thread starts, not in the first task,
// whose time limit would count it.
renderRichText({ html: '<p>ready</p>' })

/**
 * One message: `{tasks, started}`, each task `{op: 'render', value}` or `{op: 'rewrite', html,
 * sources}`; one result per task. Refusals come back as values (an AppError's code does not
 * survive the thread boundary as an exception).
 */
export default function richTextTasks({ tasks, started }) {
  // Starts the message's clock in the pool (see RichTextPool.run).
  started.postMessage(0)
  started.close()
  return tasks.map(runTask)
}

function runTask(task) {
  try {
    if (task.op === 'render') return { ok: true, ...renderRichText(task.value) }
    const sources = new Map(Object.entries(task.sources))
    return { ok: true, html: rewriteImageSources(task.html, (src) => sources.get(src) ?? src), images: [] }
  } catch (error) {
    if (error instanceof AppError) return { ok: false, code: error.code, message: error.message }
    throw error
  } finally {
    // DOMPurify keeps the last document it parsed alive until its next call: for a large value that
    // is most of the thread's heap, which the next task would start without. A tiny call lets it go.
    if ((task.value?.html ?? task.html ?? '').length > 10_000) renderRichText({ html: '<p></p>' })
  }
}
