/**
 * No text Plinth stores or looks up holds the NUL character (U+0000): PostgreSQL's text cannot
 * hold it, and no name, id, message or entry means it. A request carrying one is refused before
 * any query, alike on every store and over every surface (REST, MCP, the dashboard's forms).
 *
 * The files of a bundle are the exception: a NUL in a file's path or text content is an authoring
 * rule's (INVALID_PATH, INVALID_ENCODING), which names the file, so their paths and contents are
 * left to the publishing rules.
 */

import { type AppError, fieldName, validationFailed } from './errors.ts'

/** What a refusal says of the field. */
const NUL_REFUSAL = 'must not contain the NUL character (U+0000)'

/** Fields of a bundle's file (or change) whose text is a file's path or content. */
const FILE_FIELDS = new Set(['path', 'content', 'from', 'to', 'edits'])

/** Fields of a request body whose text is a file's path or content, answered by the authoring rules. */
function isFilePayload(segments: readonly (string | number)[]): boolean {
  const [first, index, field] = segments
  if (segments.length === 1) return first === 'content' || first === 'edits'
  return (first === 'files' || first === 'changes') && typeof index === 'number' && segments.length === 3 && FILE_FIELDS.has(String(field))
}

/**
 * The name of the first field of a parsed request body (or a tool's arguments) whose text, or
 * whose key, holds U+0000; null when none does. A file's path and content are not looked at (see
 * above). `top` names the whole value when it is itself such a text.
 */
export function nulFieldOf(value: unknown, top = 'body'): string | null {
  const stack: Array<{ value: unknown; segments: (string | number)[] }> = [{ value, segments: [] }]
  while (stack.length > 0) {
    const { value: current, segments } = stack.pop()!
    if (isFilePayload(segments) || ArrayBuffer.isView(current)) continue
    if (typeof current === 'string') {
      if (current.includes('\u0000')) return segments.length === 0 ? top : fieldName(segments)
    } else if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push({ value: current[i], segments: [...segments, i] })
    } else if (current !== null && typeof current === 'object') {
      const entries: Array<[string, unknown]> = Object.entries(current as Record<string, unknown>)
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, item] = entries[i]!
        if (key.includes('\u0000')) return fieldName([...segments, key.replaceAll('\u0000', '\\u0000')])
        stack.push({ value: item, segments: [...segments, key] })
      }
    }
  }
  return null
}

/** VALIDATION_FAILED naming the first field nulFieldOf finds, or null when there is none. */
export function nulFieldRefusal(value: unknown, top = 'body'): AppError | null {
  const field = nulFieldOf(value, top)
  return field === null ? null : validationFailed({ [field]: NUL_REFUSAL })
}
