/**
 * The thread side of rich-text.pool.ts: one message holds one or more tasks, each a render of a
 * value or a rewrite of image sources; one result per task. Refusals come back as values (an
 * AppError's code does not survive the thread boundary as an exception).
 */
import { AppError, type ErrorCode } from '../core/errors.ts'
import { renderRichText, rewriteImageSources, type RichTextValue } from './rich-text.ts'

export type RichTextTask = { op: 'render'; value: RichTextValue } | { op: 'rewrite'; html: string; sources: Record<string, string> }
export type RichTextResult = { ok: true; html: string; images: string[] } | { ok: false; code: ErrorCode; message: string }

/** A value this large leaves its document in DOMPurify's hands until the next call (see runTask). */
const LARGE = 10_000

// jsdom loads on first use (half a second): pay it while the thread starts, not in the first task,
// whose time limit would count it.
renderRichText({ html: '<p>ready</p>' })

export default function richTextTasks({ tasks }: { tasks: RichTextTask[] }): RichTextResult[] {
  return tasks.map(runTask)
}

function runTask(task: RichTextTask): RichTextResult {
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
    const size = task.op === 'render' ? ('html' in task.value ? task.value.html.length : 0) : task.html.length
    if (size > LARGE) renderRichText({ html: '<p></p>' })
  }
}
