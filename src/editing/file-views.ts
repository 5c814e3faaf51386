/**
 * A stored site file as a caller reads it back: text as text (a range of lines when asked for),
 * anything else, or text that is not valid UTF-8, as base64. Versions and drafts answer with
 * this one shape.
 */
import { isTextType } from '../core/media-types.ts'
import { readsText } from '../publishing/content-rules.ts'

export interface StoredFileRef {
  path: string
  hash: string
  size: number
  contentType: string
}

export interface LineRange {
  /** The first line, counted from 1. */
  offset?: number
  /** How many lines at most. */
  limit?: number
}

export interface FileContent {
  path: string
  size: number
  sha256: string
  contentType: string
  contentEncoding: 'utf8' | 'base64'
  content: string
  /** With a line range: the lines given (`to` inclusive) and how many the file has. */
  lines?: { from: number; to: number; total: number }
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/** The text of bytes that are valid UTF-8, else null. */
function textOf(bytes: Uint8Array): string | null {
  try {
    return utf8.decode(bytes)
  } catch {
    return null
  }
}

/**
 * Whether a file is text to read and edit: by its type, or as the rules read it whatever its type
 * (`_redirects`, `_headers`, templates). Its bytes must still be valid UTF-8 (textOf).
 */
export function isTextFile(file: Pick<StoredFileRef, 'path' | 'contentType'>): boolean {
  return isTextType(file.contentType) || readsText(file.path, file.contentType)
}

/** The text of a text file (isTextFile) whose bytes are valid UTF-8, else null. */
export function textOfFile(file: Pick<StoredFileRef, 'path' | 'contentType'>, bytes: Uint8Array): string | null {
  return isTextFile(file) ? textOf(bytes) : null
}

/** The file's content as the API returns it; a range applies to text files only. */
export function fileContent(file: StoredFileRef, bytes: Buffer, range: LineRange = {}): FileContent {
  const head = { path: file.path, size: file.size, sha256: file.hash, contentType: file.contentType }
  const text = textOfFile(file, bytes)
  if (text === null) return { ...head, contentEncoding: 'base64', content: bytes.toString('base64') }
  if (range.offset === undefined && range.limit === undefined) return { ...head, contentEncoding: 'utf8', content: text }
  const lines = text.split('\n')
  // A final newline ends the last line; it does not start another.
  if (lines.length > 1 && lines.at(-1) === '') lines.pop()
  const from = range.offset ?? 1
  const picked = lines.slice(from - 1, range.limit === undefined ? undefined : from - 1 + range.limit)
  return {
    ...head,
    contentEncoding: 'utf8',
    content: picked.length === 0 ? '' : `${picked.join('\n')}${from - 1 + picked.length < lines.length || text.endsWith('\n') ? '\n' : ''}`,
    lines: { from, to: from - 1 + picked.length, total: lines.length },
  }
}
