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
 * Which content rules apply to a file is decided by its content type (content-rules.ts); how
 * inline content is decoded is in inline-decoding.ts, how violations are capped in
 * violation-caps.ts.
 */

import type { StoredFile } from '../blobs/blob-store.ts'
import type { PublishViolation } from '../core/errors.ts'
import { BUNDLE_LIMITS, type BundleLimits } from '../core/limits.ts'
import { quoted } from '../core/text.ts'
import { bytesToText, type Emit, type Finding, pathProblems } from './bundle-paths.ts'
import { contentTypeFor, HTML_CONTENT_TYPE, readsText, scanTexts, type TextScan, WARNING_CODES } from './content-rules.ts'
import { decodeInline, type InlineContent } from './inline-decoding.ts'
import { reservedPathProblem } from './reserved-paths.ts'
import { capViolations, ViolationCollector } from './violation-caps.ts'

/** A file sent inline: its content as text, or base64 (InlineContent), and the type it is served with. */
export interface BundleFileInput extends InlineContent {
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
 * exactly like an inline file sent base64-encoded. Its size is all the rules but the content rules
 * use; without `bytes`, a file the content rules read (see readsText) is scanned by its blob's hash
 * (FileScan), and read from the store only when its text must be checked.
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
   * rule (MIXED_CONTENT on an https site, BLOCKED_BY_POLICY), each naming its file and line.
   */
  warnings: Finding[]
}

/**
 * A file the content rules read (see readsText): the index of its input file, its text, and what
 * names its bytes: the bytes themselves when sent inline, the blob holding them when stored. The
 * text is what the rules read: the text sent, or the bytes decoded (bytesToText). A stored file
 * given without its bytes has no text here: its blob holds it, and is read only when the rules
 * must run (the publish pipeline asks ContentScanResults first).
 */
export type FileScan = { path: string; contentType: string; file: number } & ({ bytes: Buffer; text: string } | { hash: string; text?: string })

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
  /** The files to run the content rules on. */
  scans: FileScan[]
  options: CheckOptions
  limits: BundleLimits
}

export interface CheckOptions {
  /** The site's collections, whose reserved root paths a file may not take (RESERVED_PATH). */
  collectionNames?: readonly string[]
  /** Sites are served over https: plain-http subresources are mixed content (MIXED_CONTENT). */
  httpsSites?: boolean
}

export function checkBundle(files: BundleFileInput[], limits?: BundleLimits, options?: CheckOptions): BundleCheck
export function checkBundle(files: AnyFileInput[], limits?: BundleLimits, options?: CheckOptions): BundleCheck<DecodedFile | StoredFile>
export function checkBundle(files: AnyFileInput[], limits: BundleLimits = BUNDLE_LIMITS, options: CheckOptions = {}): BundleCheck<DecodedFile | StoredFile> {
  const inspection = inspectBundle(files, limits, options)
  return finishCheck(
    inspection,
    scanTexts(inspection.scans.map(withText), limits.maxViolations).map((outcome) => outcome.found),
  )
}

/** A scan's text, which a stored file given without its bytes does not have. */
function withText(scan: FileScan): TextScan {
  if (scan.text === undefined) throw new Error(`the bytes of ${scan.path} are needed to check it`)
  return { path: scan.path, contentType: scan.contentType, text: scan.text }
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
    if (contentType === HTML_CONTENT_TYPE) htmlPages++
    if ('unresolved' in file) {
      if (file.unresolved) emit(file.unresolved)
      continue
    }
    const readsContent = readsText(path, contentType)
    let size: number
    if ('stored' in file) {
      const { hash, bytes } = file.stored
      size = file.stored.size
      if (readsContent) scans.push({ path, contentType, file: perFile.length - 1, hash, text: bytes && bytesToText(bytes) })
      decoded.push({ path, hash, size, contentType })
    } else {
      const result = decodeInline(file, readsContent)
      if (result.encodingError) emit({ code: 'INVALID_ENCODING', path, ...result.encodingError })
      size = result.bytes.length
      if (result.text !== undefined) scans.push({ path, contentType, file: perFile.length - 1, bytes: result.bytes, text: result.text })
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
  }

  const bundle = bundleViolations(files, totalBytes, htmlPages, limits)
  return { files: decoded, totalBytes, bundle, perFile, scans, options, limits }
}

/** The violations of the bundle as a whole, in their order: MISSING_INDEX, TOO_MANY_FILES, BUNDLE_TOO_LARGE, TOO_MANY_PAGES. */
function bundleViolations(files: readonly AnyFileInput[], totalBytes: number, htmlPages: number, limits: BundleLimits): PublishViolation[] {
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
  return bundle
}

/**
 * The check of an inspected bundle, given what the content rules found in each of its scans (same
 * order): violations in the documented order, warnings apart, both capped.
 */
export function finishCheck<F>(inspection: BundleInspection<F>, scanned: Finding[][]): BundleCheck<F> {
  const { options, limits } = inspection
  const perFile = new ViolationCollector(limits.maxViolations)
  const warnings = new ViolationCollector<Finding>(limits.maxViolations)
  const route = (v: Finding) => {
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

/** A size as violation messages give it: `1.5 MiB (1572864 bytes)`. */
function formatBytes(n: number): string {
  if (n >= 1024 * 1024) return `${(n / (1024 * 1024)).toFixed(2).replace(/\.?0+$/, '')} MiB (${n} bytes)`
  if (n >= 1024) return `${(n / 1024).toFixed(1).replace(/\.0$/, '')} KiB (${n} bytes)`
  return `${n} bytes`
}
