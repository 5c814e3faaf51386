/**
 * Helpers shared by the authoring rules: bundle path validation, the "is this URL outside the
 * bundle?" test, and small text utilities used to build violation messages.
 */

import type { PublishViolation } from '../core/errors.ts'
import { MAX_PATH_CHARS, MAX_SEGMENT_BYTES } from '../core/limits.ts'
import { clipped } from '../core/text.ts'

/**
 * A violation as a rule module finds it: with the 1-based `line` of the text it is on, when known.
 * Refusals leave without it (content-rules.ts; PublishViolation has no line), warnings keep it.
 */
export type Finding = PublishViolation & { line?: number }

/** Receives violations as the rule modules find them (in document order). */
export type Emit = (violation: Finding) => void

const DETAIL_CHARS = 200

// C0 controls, DEL and C1 controls.
const CONTROL_CHAR = /[\u0000-\u001f\u007f-\u009f]/
/** Bidirectional text controls (embeddings, overrides, isolates, marks): they make a name read as another ("a\u202eh.txt" shows as "atxt.h"). */
const BIDI_CONTROL = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/
/** A UTF-16 surrogate without its pair: text no UTF-8 file can hold. */
export const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

const hasIsWellFormed = typeof (String.prototype as { isWellFormed?: unknown }).isWellFormed === 'function'

/** Whether the text has no LONE_SURROGATE: String.prototype.isWellFormed where the runtime has it (Node 20+). */
export function isWellFormed(text: string): boolean {
  return hasIsWellFormed ? (text as unknown as { isWellFormed(): boolean }).isWellFormed() : !LONE_SURROGATE.test(text)
}

/**
 * Why a bundle path is unusable, as short phrases ("it starts with /", ...); empty when the path is
 * fine. Paths are case-sensitive, relative to the site root, and use "/" as the only separator.
 */
export function pathProblems(path: string): string[] {
  if (path === '') return ['it is empty']
  const problems: string[] = []
  if (path.length > MAX_PATH_CHARS) problems.push(`it is longer than ${MAX_PATH_CHARS} characters`)
  if (path.startsWith('/')) problems.push('it starts with "/" (paths are relative to the site root: write "css/site.css", not "/css/site.css")')
  if (path.includes('\\')) problems.push('it contains a backslash (use "/" to separate folders)')
  if (CONTROL_CHAR.test(path)) problems.push('it contains a control character (such as NUL or a newline)')
  if (BIDI_CONTROL.test(path)) problems.push('it contains a bidirectional text control (such as U+202E), which makes a name show as another')
  if (!isWellFormed(path)) problems.push('it contains an unpaired UTF-16 surrogate (not valid Unicode)')
  const special = [...new Set(path.match(/[?#%]/g) ?? [])]
  if (special.length > 0)
    problems.push(`it contains ${special.map((c) => `"${c}"`).join(', ')} (not allowed in file names because they change the meaning of a URL)`)
  const segments = path.split('/')
  // A leading "/" already has its own message; don't also call it an empty segment.
  if (segments.some((s, i) => s === '' && !(i === 0 && path.startsWith('/')))) {
    problems.push('it has an empty segment ("a//b" or a trailing "/")')
  }
  if (segments.some((s) => s === '.' || s === '..')) problems.push('it has a "." or ".." segment')
  if (segments.some((s) => Buffer.byteLength(s, 'utf8') > MAX_SEGMENT_BYTES)) {
    problems.push(`a segment is longer than ${MAX_SEGMENT_BYTES} bytes`)
  }
  return problems
}

const URL_TAB_NEWLINE = /[\t\n\r]/g
const HAS_SCHEME = /^[a-z][a-z0-9+.-]*:/i
// "//host", "\\host", "/\host" and "\/host" all mean "another host" on an http(s) page.
const PROTOCOL_RELATIVE = /^[/\\]{2}/

/**
 * True when a URL (as written in an attribute, CSS or a JS string, after the host language has
 * decoded its escapes) points outside the bundle: it has a scheme (http:, data:, javascript:, ...)
 * or is protocol-relative. Relative and root-relative ("/css/site.css") URLs are inside the bundle.
 * Like browsers, leading/trailing C0 controls and spaces are ignored and tabs/newlines dropped.
 */
export function isExternalUrl(raw: string): boolean {
  let start = 0
  let end = raw.length
  while (start < end && raw.charCodeAt(start) <= 0x20) start++
  while (end > start && raw.charCodeAt(end - 1) <= 0x20) end--
  const url = raw.slice(start, end).replace(URL_TAB_NEWLINE, '')
  return HAS_SCHEME.test(url) || PROTOCOL_RELATIVE.test(url)
}

const PLAIN_HTTP = /^http:/i

/** True for an absolute `http:` URL: on an https site it is mixed content, which browsers upgrade or block. */
export function isPlainHttpUrl(raw: string): boolean {
  let start = 0
  while (start < raw.length && raw.charCodeAt(start) <= 0x20) start++
  return PLAIN_HTTP.test(raw.slice(start, start + 10).replace(URL_TAB_NEWLINE, ''))
}

/** Shortens text for a violation's detail: whitespace collapsed, at most ~200 characters. */
export function snippet(text: string, max = DETAIL_CHARS): string {
  const flat = text.length > max * 4 ? text.slice(0, max * 4) : text
  const collapsed = flat.replace(/\s+/g, ' ').trim()
  return clipped(collapsed, max)
}

/**
 * A bundle file's text, decoded the way a browser would: a UTF-16 byte-order mark wins, otherwise
 * UTF-8. The rules check this text at publish, and serving reads `_redirects`, `_headers` and
 * templates through it, so what was checked is what applies.
 */
export function bytesToText(bytes: Buffer): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return bytes.toString('utf16le', 2)
  if (bytes[0] === 0xfe && bytes[1] === 0xff) {
    const swapped = Buffer.from(bytes.subarray(2, bytes.length - (bytes.length % 2)))
    return swapped.swap16().toString('utf16le')
  }
  return bytes.toString('utf8')
}
