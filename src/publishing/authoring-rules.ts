/**
 * Authoring rules for a publish bundle: decode every file and check every rule, collecting all the
 * violations (never stopping at the first) so the agent that sent the bundle can fix everything in
 * one round. Pure and synchronous; no I/O. The content rules can also run apart from the rest
 * (inspectBundle, scanText, finishCheck), as the publish pipeline runs them in worker threads.
 *
 * Order of violations (deterministic): bundle-level ones first (MISSING_INDEX, TOO_MANY_FILES,
 * BUNDLE_TOO_LARGE, TOO_MANY_PAGES), then per file in input order: INVALID_PATH, DUPLICATE_PATH,
 * RESERVED_PATH, INVALID_ENCODING, FILE_TOO_LARGE, then the content rules in document order, then
 * TEMPLATE_INVALID for a file under `_templates/` that Liquid does not parse (template-rules.ts).
 * Which content rules apply to a file is decided by its content type (see contentTypeFor):
 * text/html -> html-rules; image/svg+xml and application/xhtml+xml -> html-rules in XML mode;
 * text/css -> css-rules; JavaScript types -> js-rules.
 */

import { lookup } from 'mime-types'
import type { StoredFile } from '../blobs/blob-store.ts'
import type { PublishViolation } from '../core/errors.ts'
import { BUNDLE_LIMITS, type BundleLimits } from '../core/limits.ts'
import { quoted } from '../core/text.ts'
import { bytesToText, type Emit, isWellFormed, LONE_SURROGATE, pathProblems } from './bundle-paths.ts'
import { scanCss } from './css-rules.ts'
import { scanMarkup } from './html-rules.ts'
import { JS_CONTENT_TYPES, scanJs } from './js-rules.ts'
import { reservedPathProblem } from './reserved-paths.ts'
import { HEADERS_FILE, parseHeaders } from './header-rules.ts'
import { parseRedirects, REDIRECTS_FILE, type RuleViolation } from './redirect-rules.ts'
import { isTemplateFile, scanTemplate } from './template-rules.ts'

export interface BundleFileInput {
  path: string
  content: string
  contentEncoding?: 'utf8' | 'base64'
  contentType?: string
}

export interface DecodedFile {
  path: string
  bytes: Buffer
  /** Bare MIME type, lowercase, no parameters. */
  contentType: string
}

/**
 * A file whose bytes are already in the blob store (an upload, or bytes published before), checked
 * exactly like an inline file sent base64-encoded. `bytes` are needed only when the content rules
 * read the file (see needsScanning); for other types its size is all the rules use.
 */
export interface StoredFileInput {
  path: string
  contentType?: string
  stored: { hash: string; size: number; bytes?: Buffer }
}

/**
 * A file given by reference that names no usable bytes: its violation is reported in its place,
 * and only its path is checked. `null` when the reference was not looked up (a bundle over the
 * file limit, refused for that already).
 */
export interface UnresolvedFileInput {
  path: string
  contentType?: string
  unresolved: PublishViolation | null
}

export type AnyFileInput = BundleFileInput | StoredFileInput | UnresolvedFileInput

export interface BundleCheck<F = DecodedFile> {
  /**
   * Every input file except unresolved ones, in input order. `bytes` are exact for files with no
   * INVALID_ENCODING violation; for invalid base64 they are a lenient best-effort decode (used
   * only for the size checks). Publish only when `violations` is empty.
   */
  files: F[]
  /** Sum of the decoded sizes. */
  totalBytes: number
  violations: PublishViolation[]
  /**
   * What browsers will still block or change on the published site although the bundle breaks no
   * rule (MIXED_CONTENT on an https site, UNSAFE_EVAL, EXTERNAL_MANIFEST), each naming its file.
   */
  warnings: PublishViolation[]
}

/** A file's text that the content rules read (html-rules, css-rules, js-rules, template-rules). */
export interface TextScan {
  path: string
  contentType: string
  text: string
}

/**
 * A bundle decoded and checked for everything but its files' content: the content rules, the
 * costly part, are run apart (inline by checkBundle, or in worker threads by the publish
 * pipeline) on `scans`, and finishCheck puts the two together.
 */
export interface BundleInspection<F = DecodedFile> {
  files: F[]
  totalBytes: number
  /** Bundle-level violations (MISSING_INDEX, TOO_MANY_FILES, ...), which come first. */
  bundle: PublishViolation[]
  /** Per input file (same order): its path, encoding and size violations and warnings. */
  perFile: PublishViolation[][]
  /** The texts to run the content rules on, each with the index of its input file. */
  scans: Array<TextScan & { file: number }>
  options: CheckOptions
  limits: BundleLimits
}

export interface CheckOptions {
  /** The site's collections, whose reserved root paths a file may not take (RESERVED_PATH). */
  collectionNames?: readonly string[]
  /** Sites are served over https: plain-http subresources are mixed content (MIXED_CONTENT). */
  httpsSites?: boolean
}

/** Codes the content rules report that refuse nothing: they become warnings. */
const WARNING_CODES: ReadonlySet<string> = new Set(['MIXED_CONTENT', 'UNSAFE_EVAL', 'EXTERNAL_MANIFEST'])

const HTML = 'text/html'
const MARKUP_XML = new Set(['image/svg+xml', 'application/xhtml+xml'])

/**
 * The content type a file is served with: the override's bare type (parameters such as
 * "; charset=utf-8" dropped, lowercased) when given, else inferred from the extension, else
 * application/octet-stream.
 */
export function contentTypeFor(path: string, override?: string): string {
  if (override !== undefined) {
    const bare = override.split(';')[0]!.trim().toLowerCase()
    if (bare !== '') return bare
  }
  const inferred = lookup(path)
  return inferred === false ? 'application/octet-stream' : inferred.toLowerCase()
}

export function checkBundle(files: BundleFileInput[], limits?: BundleLimits, options?: CheckOptions): BundleCheck
export function checkBundle(files: AnyFileInput[], limits?: BundleLimits, options?: CheckOptions): BundleCheck<DecodedFile | StoredFile>
export function checkBundle(files: AnyFileInput[], limits: BundleLimits = BUNDLE_LIMITS, options: CheckOptions = {}): BundleCheck<DecodedFile | StoredFile> {
  const inspection = inspectBundle(files, limits, options)
  return finishCheck(inspection, scanTexts(inspection.scans, limits.maxViolations))
}

/** Decodes every file and checks every rule but the content rules (see BundleInspection). */
export function inspectBundle(
  files: AnyFileInput[],
  limits: BundleLimits = BUNDLE_LIMITS,
  options: CheckOptions = {},
): BundleInspection<DecodedFile | StoredFile> {
  const collectionNames = options.collectionNames ?? []
  const perFile: PublishViolation[][] = []
  const scans: BundleInspection['scans'] = []
  const decoded: Array<DecodedFile | StoredFile> = []
  let totalBytes = 0
  let htmlPages = 0

  const occurrences = new Map<string, number>()
  for (const f of files) occurrences.set(f.path, (occurrences.get(f.path) ?? 0) + 1)
  const reportedDuplicates = new Set<string>()

  for (const file of files) {
    const own: PublishViolation[] = []
    perFile.push(own)
    const emit: Emit = (v) => own.push(v)
    const { path } = file
    const problems = pathProblems(path)
    if (problems.length > 0) {
      emit({
        code: 'INVALID_PATH',
        path,
        detail: quoted(path, 200),
        message: `The path ${quoted(path)} is not allowed: ${problems.join('; ')}. Use a relative path made of plain names separated by "/", such as "index.html" or "css/site.css".`,
      })
    }
    const count = occurrences.get(path)!
    if (count > 1 && !reportedDuplicates.has(path)) {
      reportedDuplicates.add(path)
      emit({
        code: 'DUPLICATE_PATH',
        path,
        detail: quoted(path, 200),
        message: `The path ${quoted(path)} appears ${count} times in the bundle; every path must be unique (paths are case-sensitive): remove or rename the extra copies.`,
      })
    }
    const reserved = reservedPathProblem(path, collectionNames)
    if (reserved) emit({ code: 'RESERVED_PATH', path, detail: quoted(path, 200), message: reserved })

    const contentType = contentTypeFor(path, file.contentType)
    if (contentType === HTML) htmlPages++
    if ('unresolved' in file) {
      if (file.unresolved) emit(file.unresolved)
      continue
    }
    let size: number
    let text: string | undefined
    if ('stored' in file) {
      size = file.stored.size
      if (readsText(path, contentType)) {
        if (!file.stored.bytes) throw new Error(`the bytes of ${path} are needed to check it`)
        text = bytesToText(file.stored.bytes)
      }
      decoded.push({ path, hash: file.stored.hash, size, contentType })
    } else {
      const result = decode(file, readsText(path, contentType))
      if (result.encodingError) emit({ code: 'INVALID_ENCODING', path, ...result.encodingError })
      size = result.bytes.length
      text = result.text
      decoded.push({ path, bytes: result.bytes, contentType })
    }
    if (size > limits.maxFileBytes) {
      emit({
        code: 'FILE_TOO_LARGE',
        path,
        detail: `${size} bytes`,
        message: `${path} is ${formatBytes(size)} after decoding; each file may be at most ${formatBytes(limits.maxFileBytes)}: shrink it (compress or resize images, minify code) or split it into several files.`,
      })
    }
    totalBytes += size
    if (text !== undefined) scans.push({ path, contentType, text, file: perFile.length - 1 })
  }

  const bundle: PublishViolation[] = []
  if (!files.some((f) => f.path === 'index.html')) {
    bundle.push({
      code: 'MISSING_INDEX',
      message:
        'The bundle has no index.html. Every site needs a file whose path is exactly "index.html" (lowercase, at the root of the bundle, not in a folder); it is the page served at "/". Add one, or rename your main page.',
    })
  }
  if (files.length > limits.maxFiles) {
    bundle.push({
      code: 'TOO_MANY_FILES',
      detail: `${files.length} files`,
      message: `The bundle has ${files.length} files; at most ${limits.maxFiles} are allowed: combine files (for example merge stylesheets or scripts) or remove unused ones.`,
    })
  }
  if (totalBytes > limits.maxBundleBytes) {
    bundle.push({
      code: 'BUNDLE_TOO_LARGE',
      detail: `${totalBytes} bytes`,
      message: `The bundle is ${formatBytes(totalBytes)} after decoding; at most ${formatBytes(limits.maxBundleBytes)} is allowed in total: remove or shrink files (large images are the usual cause).`,
    })
  }
  if (htmlPages > limits.maxHtmlPages) {
    bundle.push({
      code: 'TOO_MANY_PAGES',
      detail: `${htmlPages} HTML pages`,
      message: `The bundle has ${htmlPages} HTML pages (files served as text/html); at most ${limits.maxHtmlPages} are allowed: merge pages or remove some.`,
    })
  }

  return { files: decoded, totalBytes, bundle, perFile, scans, options, limits }
}

/** scanText on each text, on the calling thread (the pipeline runs it in worker threads). */
export function scanTexts(scans: readonly TextScan[], limit: number): PublishViolation[][] {
  return scans.map((scan) => scanText(scan, limit))
}

/**
 * The content rules on one file's text: what they report, at most `limit` of a code beyond the
 * first, violations and warnings capped apart (a page of many warnings keeps all its violations).
 */
export function scanText(scan: TextScan, limit: number): PublishViolation[] {
  const violations = new Collector(limit)
  const warnings = new Collector(limit)
  const emit: Emit = (v) => (WARNING_CODES.has(v.code) ? warnings : violations).add(v)
  const { text, path, contentType } = scan
  if (contentType === HTML) scanMarkup(text, path, false, emit)
  else if (MARKUP_XML.has(contentType)) scanMarkup(text, path, true, emit)
  else if (contentType === 'text/css') scanCss(text, path, path, emit)
  else if (JS_CONTENT_TYPES.has(contentType)) scanJs(text, path, path, emit)
  if (isTemplateFile(path, contentType)) scanTemplate(text, path, emit)
  if (path === REDIRECTS_FILE) parseRedirects(text).violations.forEach((v) => emit(withoutLine(v)))
  else if (path === HEADERS_FILE) parseHeaders(text).violations.forEach((v) => emit(withoutLine(v)))
  return [...violations.list, ...warnings.list]
}

/** The interface's PublishViolation has no line field: the line is in `detail` and `message`. */
const withoutLine = ({ code, path, detail, message }: RuleViolation): PublishViolation => ({ code, path, detail, message })

/**
 * The check of an inspected bundle, given what the content rules found in each of its scans (same
 * order): violations in the documented order, warnings apart, both capped.
 */
export function finishCheck<F>(inspection: BundleInspection<F>, scanned: PublishViolation[][]): BundleCheck<F> {
  const { options, limits } = inspection
  const perFile = new Collector(limits.maxViolations)
  const warnings = new Collector(limits.maxViolations)
  const route = (v: PublishViolation) => {
    if (!WARNING_CODES.has(v.code)) perFile.add(v)
    else if (v.code !== 'MIXED_CONTENT' || options.httpsSites) warnings.add(v)
  }
  // inspectBundle gives a file one scan at most.
  const byFile = new Map(inspection.scans.map((scan, i) => [scan.file, scanned[i] ?? []]))
  inspection.perFile.forEach((own, i) => {
    own.forEach(route)
    byFile.get(i)?.forEach(route)
  })
  return {
    files: inspection.files,
    totalBytes: inspection.totalBytes,
    violations: capViolations([...inspection.bundle, ...perFile.list], limits.maxViolations),
    warnings: capViolations(warnings.list, limits.maxViolations),
  }
}

/**
 * Collects per-file violations. Once `limit` are held, later ones can only survive the final cap if
 * they are the first of their code, so the rest are dropped early (bounds memory on hostile input).
 */
class Collector {
  readonly list: PublishViolation[] = []
  private readonly codes = new Set<string>()
  constructor(private readonly limit: number) {}

  add(v: PublishViolation): void {
    if (this.list.length >= this.limit && this.codes.has(v.code)) return
    this.codes.add(v.code)
    this.list.push(v)
  }
}

/** At most `max` violations, keeping the first of every code, then the earliest others; order kept. */
function capViolations(all: PublishViolation[], max: number): PublishViolation[] {
  if (all.length <= max) return all
  const keep = new Set<number>()
  const codes = new Set<string>()
  all.forEach((v, i) => {
    if (!codes.has(v.code)) {
      codes.add(v.code)
      keep.add(i)
    }
  })
  for (let i = 0; i < all.length && keep.size < max; i++) keep.add(i)
  return all.filter((_, i) => keep.has(i))
}

/** Whether the content rules read files of this type (so their bytes are needed). */
function needsScanning(contentType: string): boolean {
  return contentType === HTML || MARKUP_XML.has(contentType) || contentType === 'text/css' || JS_CONTENT_TYPES.has(contentType)
}

/**
 * Whether the rules read this file's text: by its type (needsScanning), as a template, or as the
 * serving configuration at the bundle root (`_redirects`, `_headers`), whatever its type.
 */
export function readsText(path: string, contentType: string): boolean {
  return needsScanning(contentType) || isTemplateFile(path, contentType) || path === REDIRECTS_FILE || path === HEADERS_FILE
}

interface Decoded {
  bytes: Buffer
  /** The text the content rules scan (only for content types that have rules). */
  text?: string
  encodingError?: { message: string; detail: string }
}

// C0 controls except TAB, LF, FF and CR.
const FORBIDDEN_CONTROL = /[\u0000-\u0008\u000b\u000e-\u001f]/
const BASE64_WHITESPACE = /[\t\n\f\r ]+/g
const NOT_BASE64 = /[^A-Za-z0-9+/_=-]/

function decode(file: BundleFileInput, wantText: boolean): Decoded {
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

function formatBytes(n: number): string {
  if (n >= 1024 * 1024) return `${(n / (1024 * 1024)).toFixed(2).replace(/\.?0+$/, '')} MiB (${n} bytes)`
  if (n >= 1024) return `${(n / 1024).toFixed(1).replace(/\.0$/, '')} KiB (${n} bytes)`
  return `${n} bytes`
}
