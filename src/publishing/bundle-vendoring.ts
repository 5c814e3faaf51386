/**
 * A publish that asks `vendor: true`: the bundle's external scripts, stylesheets, fonts and images
 * are fetched through the SSRF-safe fetcher and put in the bundle (vendoring/vendoring.ts), before
 * the bundle is checked and stored as any other. Files given by reference or as stored blobs are
 * read for their pages and stylesheets; a rewritten page goes on as inline content, a copy as
 * base64 content, every other file as it was given. A file that cannot be brought in refuses the
 * publish (PUBLISH_INVALID, one violation per file, naming its URL) and nothing is stored.
 */
import type { BlobsRepository } from '../blobs/blobs.repository.ts'
import type { BlobStore } from '../blobs/blob-store.ts'
import { AppError } from '../core/errors.ts'
import type { BundleLimits } from '../core/limits.ts'
import { safeFetch, type SafeFetchOptions } from '../net/safe-fetch.ts'
import { type VendoredFile, type VendorFetch, vendorFiles, type VendorSource } from '../vendoring/vendoring.ts'
import type { AnyFileInput } from './authoring-rules.ts'
import { bytesToText } from './bundle-paths.ts'
import { contentTypeFor, HTML_CONTENT_TYPE } from './content-rules.ts'
import { type ContentReferences, type FileCaller, resolveFiles } from './file-references.ts'
import { decodeInline } from './inline-decoding.ts'
import type { PipelineFileInput } from './publish-pipeline.ts'

export interface BundleVendoringOptions {
  references: ContentReferences
  blobRows: BlobsRepository
  blobs: BlobStore
  limits: Readonly<BundleLimits>
  fetch: VendorFetch
}

/** The fetcher a server brings files in with: safeFetch, with the instance's allowed hosts, CA and User-Agent. */
export function safeVendorFetch(base: Pick<SafeFetchOptions, 'allowHosts' | 'userAgent' | 'ca'>): VendorFetch {
  return async (url, limits) => {
    const fetched = await safeFetch(url, {
      ...base,
      maxBytes: limits.maxBytes,
      connectTimeoutMs: limits.timeoutMs,
      totalTimeoutMs: limits.timeoutMs,
      maxRedirects: limits.maxRedirects,
    })
    return { bytes: fetched.bytes, contentType: fetched.contentType, finalUrl: fetched.finalUrl }
  }
}

/** The bundle with its external files brought in, and what was brought in. */
export async function vendorBundle(
  input: PipelineFileInput[],
  caller: FileCaller,
  options: BundleVendoringOptions,
): Promise<{ files: PipelineFileInput[]; vendored: VendoredFile[] }> {
  const { limits } = options
  const resolved = await resolveFiles(input, caller, options.references, options.blobRows, limits.maxFiles)
  // A bundle the rules refuse anyway (too many files, unknown references) is refused without fetching.
  if (input.length > limits.maxFiles || resolved.some((file) => 'unresolved' in file)) return { files: input, vendored: [] }

  const sources: VendorSource[] = []
  let bytes = 0
  for (const file of resolved) {
    const type = contentTypeFor(file.path, file.contentType)
    const kind = type === HTML_CONTENT_TYPE ? 'html' : type === 'text/css' ? 'css' : null
    const { size, text } = await readFile(file, kind !== null, options.blobs)
    bytes += size
    if (kind !== null && text !== undefined) sources.push({ path: file.path, kind, text })
  }
  const outcome = await vendorFiles(sources, {
    fetch: options.fetch,
    bundleLimits: limits,
    bundle: { files: input.length, bytes, paths: new Set(input.map((file) => file.path)) },
  })
  if (outcome.failures.length > 0) {
    const count = outcome.failures.length
    throw new AppError(
      'PUBLISH_INVALID',
      `${count === 1 ? 'An external file' : `${count} external files`} could not be brought into the bundle (vendor: true); nothing was published. Fix or drop each listed reference and publish again.`,
      { violations: outcome.failures.map((f) => ({ code: f.code, path: f.path, detail: f.url, message: f.message })) },
    )
  }
  const files = input.map((file): PipelineFileInput => {
    const text = outcome.rewritten.get(file.path)
    if (text === undefined) return file
    return { path: file.path, content: text, ...(file.contentType !== undefined && { contentType: file.contentType }) }
  })
  for (const copy of outcome.added)
    files.push({ path: copy.path, content: copy.bytes.toString('base64'), contentEncoding: 'base64', contentType: copy.contentType })
  return { files, vendored: outcome.vendored }
}

/** A resolved file's size, and its text when wanted (a page or a stylesheet). */
async function readFile(file: AnyFileInput, wantText: boolean, blobs: BlobStore): Promise<{ size: number; text?: string }> {
  if ('unresolved' in file) return { size: 0 }
  if ('stored' in file) {
    if (!wantText) return { size: file.stored.size }
    return { size: file.stored.size, text: bytesToText(file.stored.bytes ?? (await blobs.get(file.stored.hash))) }
  }
  const decoded = decodeInline(file, wantText)
  // Content the rules will refuse is not read for references.
  return { size: decoded.bytes.length, text: decoded.encodingError ? undefined : decoded.text }
}
