/**
 * Decoding a file sent inline in a bundle: UTF-8 text, checked for what text may not hold
 * (unpaired surrogates, C0 controls), or base64, strict in one pass when well-formed and explained
 * when not. Every problem is an INVALID_ENCODING the sender can act on.
 */
import { quoted } from '../core/text.ts'
import { bytesToText, isWellFormed, LONE_SURROGATE } from './bundle-paths.ts'

export interface DecodedContent {
  bytes: Buffer
  /** The text the content rules scan (only when asked for). */
  text?: string
  /** Why the content is not what its encoding says (INVALID_ENCODING); `bytes` are then a lenient best-effort decode. */
  encodingError?: { message: string; detail: string }
}

/** An inline bundle file's content as sent: text, or base64 when `contentEncoding` says so. */
export interface InlineContent {
  path: string
  content: string
  contentEncoding?: 'utf8' | 'base64'
}

// C0 controls except TAB, LF, FF and CR.
const FORBIDDEN_CONTROL = /[\u0000-\u0008\u000b\u000e-\u001f]/
const BASE64_WHITESPACE = /[\t\n\f\r ]+/g
const NOT_BASE64 = /[^A-Za-z0-9+/_=-]/

/** The bytes of an inline file, and its text when `wantText`; the problem with its encoding, if any. */
export function decodeInline(file: InlineContent, wantText: boolean): DecodedContent {
  const { path, content } = file
  if (file.contentEncoding === 'base64') {
    const strict = strictBase64(content)
    if (strict) return { bytes: strict, text: wantText ? bytesToText(strict) : undefined }
    const cleaned = content.replace(BASE64_WHITESPACE, '')
    const bytes = Buffer.from(cleaned, 'base64')
    const problem = base64Problem(cleaned)
    if (problem) {
      return {
        bytes,
        encodingError: {
          detail: problem.detail,
          message: `${path} is sent with contentEncoding "base64" but its content is not valid base64: ${problem.reason}. Encode the file's bytes as standard base64 (A-Z, a-z, 0-9, "+" and "/", or the URL-safe "-" and "_"), padded with "=" to a multiple of 4 characters; send text files with contentEncoding "utf8" instead.`,
        },
      }
    }
    return { bytes, text: wantText ? bytesToText(bytes) : undefined }
  }

  const bytes = Buffer.from(content, 'utf8')
  const text = wantText ? content : undefined
  if (!isWellFormed(content)) {
    const m = LONE_SURROGATE.exec(content)!
    return {
      bytes,
      text,
      encodingError: {
        detail: `U+${m[0].charCodeAt(0).toString(16).toUpperCase()} at character ${m.index}`,
        message: `${path} contains an unpaired UTF-16 surrogate (U+${m[0].charCodeAt(0).toString(16).toUpperCase()} at character ${m.index}), so it is not valid Unicode text: remove the broken character, or send binary data base64-encoded with contentEncoding "base64".`,
      },
    }
  }
  const control = FORBIDDEN_CONTROL.exec(content)
  if (control) {
    const cp = `U+${control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`
    return {
      bytes,
      text,
      encodingError: {
        detail: `${cp} at character ${control.index}`,
        message: `${path} contains the control character ${cp} at character ${control.index}, which is not allowed in text sent with contentEncoding "utf8" (only tab, line feed, form feed and carriage return are): if this is a binary file, send it base64-encoded with contentEncoding "base64"; otherwise remove the character.`,
      },
    }
  }
  return { bytes, text }
}

/**
 * The common case, decoded in one pass: padded base64 without whitespace. Node's decoder skips
 * characters outside the alphabet and stops at padding, so the text is valid exactly when every
 * character yielded its 6 bits: when the decoded length is the one its length and padding imply.
 * Anything else (whitespace, a bad character, misplaced padding) goes the careful way, which
 * names the problem.
 */
function strictBase64(content: string): Buffer | undefined {
  if (content.length % 4 !== 0) return undefined
  const padding = content.endsWith('==') ? 2 : content.endsWith('=') ? 1 : 0
  const bytes = Buffer.from(content, 'base64')
  return bytes.length === (content.length / 4) * 3 - padding ? bytes : undefined
}

function base64Problem(cleaned: string): { reason: string; detail: string } | undefined {
  const bad = NOT_BASE64.exec(cleaned)
  if (bad) {
    return { reason: `it contains the character ${quoted(bad[0])}`, detail: `${quoted(bad[0])} at character ${bad.index} (whitespace ignored)` }
  }
  const pad = cleaned.indexOf('=')
  if (pad >= 0 && !/^={1,2}$/.test(cleaned.slice(pad))) {
    return { reason: '"=" padding may only appear at the very end (at most two)', detail: `"=" at character ${pad} (whitespace ignored)` }
  }
  if (cleaned.length % 4 !== 0) {
    return { reason: `its length (${cleaned.length} characters, whitespace ignored) is not a multiple of 4`, detail: `${cleaned.length} characters` }
  }
  return undefined
}
