/**
 * Exact-text edits of one file, as an editor makes them: each `oldText` must occur exactly once
 * in the text as the edits before it left it, and is replaced by its `newText`. A miss names the
 * closest line, so the caller can correct the edit without reading the file again. All or
 * nothing: the first edit that does not apply refuses the whole list.
 */
import { setImmediate as nextTurn } from 'node:timers/promises'
import { AppError, validationFailed } from '../core/errors.ts'
import { EDIT_READ_MAX_CHARS } from '../core/limits.ts'
import { quoted } from '../core/text.ts'

export interface TextEdit {
  oldText: string
  newText: string
}

/** How much of the closest line an EDIT_NO_MATCH message quotes. */
const QUOTED_LINE_CHARS = 160
/** Lines longer than this are compared by their start only, so a minified file costs no more than a normal one. */
const COMPARED_LINE_CHARS = 400

/** Text read between two turns of the event loop, so a request's edits never hold it for long. */
const EDIT_SLICE_CHARS = 4 * 1024 * 1024

/**
 * The text the edits of one request read, counted against EDIT_READ_MAX_CHARS: one budget a
 * request, shared by every file it edits. The event loop gets a turn every EDIT_SLICE_CHARS.
 */
export class EditBudget {
  private read = 0
  private sinceTurn = 0

  /** Counts the text one edit reads; VALIDATION_FAILED on `field` once the request's edits would read more than allowed. */
  async take(chars: number, field: string, path: string): Promise<void> {
    this.read += chars
    if (this.read > EDIT_READ_MAX_CHARS) {
      const limit = `${EDIT_READ_MAX_CHARS.toLocaleString('en-US')} characters`
      throw validationFailed(
        { [field]: `would take the text this request's edits read past ${limit}` },
        `The edits of this request would read more than ${limit} of text in all: each edit reads the whole file it changes (${path} has ${chars.toLocaleString('en-US')}). Send fewer edits at a time, or write the file whole. Nothing was changed.`,
      )
    }
    this.sinceTurn += chars
    if (this.sinceTurn >= EDIT_SLICE_CHARS) {
      this.sinceTurn = 0
      await nextTurn()
    }
  }
}

/** One request's edits: the text they may still read, and whether a miss may quote the file (the caller may read it). */
export interface EditContext {
  budget: EditBudget
  quote: boolean
}

/** A new request's EditContext. */
export const editContext = (quote: boolean): EditContext => ({ budget: new EditBudget(), quote })

/**
 * The text after every edit, in order; EDIT_NO_MATCH or EDIT_AMBIGUOUS (422) for the first that
 * does not match once. A miss quotes the file's closest line only when the context's `quote`;
 * otherwise it gives the line's number alone.
 */
export async function applyEdits(path: string, text: string, edits: readonly TextEdit[], { budget, quote }: EditContext): Promise<string> {
  let result = text
  for (const [index, edit] of edits.entries()) {
    const field = `edits[${index}].oldText`
    if (edit.oldText.length === 0) throw validationFailed({ [field]: 'must not be empty: quote the text to replace' })
    await budget.take(result.length, `edits[${index}]`, path)
    const count = occurrences(result, edit.oldText, 2)
    if (count === 0) {
      const closest = closestLine(result, edit.oldText)
      const hint =
        closest === null
          ? `${path} has no similar line`
          : quote
            ? `the closest line is ${closest.number}: ${quoted(closest.line, QUOTED_LINE_CHARS)}`
            : `the closest line is ${closest.number} (its text is shown to tokens that may read)`
      throw new AppError('EDIT_NO_MATCH', `Edit ${index + 1} of ${edits.length}: its oldText occurs 0 times in ${path}; ${hint}. Nothing was changed.`, {
        fields: { [field]: `occurs 0 times in ${path}` },
      })
    }
    if (count > 1) {
      const total = occurrences(result, edit.oldText, Number.POSITIVE_INFINITY)
      throw new AppError(
        'EDIT_AMBIGUOUS',
        `Edit ${index + 1} of ${edits.length}: its oldText occurs ${total} times in ${path}; quote more of the surrounding text so it occurs once. Nothing was changed.`,
        { fields: { [field]: `occurs ${total} times in ${path}` } },
      )
    }
    const at = result.indexOf(edit.oldText)
    result = result.slice(0, at) + edit.newText + result.slice(at + edit.oldText.length)
  }
  return result
}

/** How many times `needle` occurs in `text` without overlapping, counting no further than `stopAt`. */
function occurrences(text: string, needle: string, stopAt: number): number {
  let count = 0
  for (let at = text.indexOf(needle); at !== -1 && count < stopAt; at = text.indexOf(needle, at + needle.length)) count++
  return count
}

/** The line of `text` most like the first non-blank line of `wanted` (by shared character pairs), or null when none shares any. */
function closestLine(text: string, wanted: string): { number: number; line: string } | null {
  const target =
    wanted
      .split('\n')
      .find((line) => line.trim() !== '')
      ?.trim()
      .slice(0, COMPARED_LINE_CHARS) ?? ''
  const targetPairs = pairsOf(target)
  if (targetPairs.size === 0) return null
  let best: { number: number; line: string; score: number } | null = null
  const lines = text.split('\n')
  for (const [i, line] of lines.entries()) {
    const pairs = pairsOf(line.trim().slice(0, COMPARED_LINE_CHARS))
    if (pairs.size === 0) continue
    let shared = 0
    for (const pair of pairs) if (targetPairs.has(pair)) shared++
    const score = (2 * shared) / (pairs.size + targetPairs.size)
    if (score > 0 && (best === null || score > best.score)) best = { number: i + 1, line: line.trim(), score }
  }
  return best && { number: best.number, line: best.line }
}

/** The distinct pairs of adjacent characters of a string (the Sørensen–Dice measure's units). */
function pairsOf(value: string): Set<string> {
  const pairs = new Set<string>()
  for (let i = 0; i + 1 < value.length; i++) pairs.add(value.slice(i, i + 2))
  return pairs
}
