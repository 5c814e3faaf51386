/**
 * Bringing a bundle's external scripts, stylesheets, fonts and images into it: every external URL
 * its pages and stylesheets name is fetched (and the fonts, images and stylesheets the fetched
 * stylesheets name in turn), stored under `_vendor/{host}/...` (vendor-paths.ts), and every
 * reference is rewritten to the copy, relative to the file that holds it.
 *
 * The fetching is the caller's: `plinth deploy --vendor` fetches with the platform's fetch, a
 * server through its SSRF-safe fetcher. Everything is bounded: the files fetched (the bundle's
 * room for more files, and VENDOR_LIMITS.maxFiles), each file's bytes (the bundle's maxFileBytes)
 * and all of them (the bundle's room under maxBundleBytes), each fetch's time and redirects, the
 * time of all fetches, and how deep stylesheet imports are followed.
 *
 * It is all or nothing: when any file cannot be brought in, nothing is rewritten and the
 * failures say, each, which URL, named in which file, and why, with what to drop to fit.
 *
 * Integrity: a `integrity` attribute is checked against the bytes fetched, and a mismatch is a
 * failure. The attribute stays when the copy holds exactly those bytes (scripts, fonts, and
 * stylesheets that name no external file) and is removed when the copy was rewritten (a
 * stylesheet whose URLs now name copies), as its hash no longer describes it.
 */
import { formatSize, VENDOR_LIMITS, type BundleLimits, type VendorLimits } from '../core/limits.ts'
import { integrityMatches } from './integrity.ts'
import { answeredType, copyType, relativeReference, uniquePath, vendorPath } from './vendor-paths.ts'
import { cssReferences, type ExternalReference, htmlReferences, type ReferenceKind, rewriteCss, rewriteHtml } from './vendor-references.ts'

/** A file of the bundle whose references are brought in: a page, or a stylesheet. */
export interface VendorSource {
  path: string
  kind: 'html' | 'css'
  text: string
}

export interface FetchLimits {
  maxBytes: number
  timeoutMs: number
  maxRedirects: number
}

export interface FetchedFile {
  bytes: Buffer
  contentType: string | null
  /** The URL answered from, after redirects: a stylesheet's relative URLs resolve against it. */
  finalUrl: string
}

/** Fetches one http(s) URL within the limits; throws an Error whose message says why it could not. */
export type VendorFetch = (url: string, limits: FetchLimits) => Promise<FetchedFile>

export const VENDOR_FAILURE_CODES = [
  'VENDOR_FETCH_FAILED',
  'VENDOR_WRONG_TYPE',
  'VENDOR_INTEGRITY_MISMATCH',
  'VENDOR_TOO_MANY_FILES',
  'VENDOR_BUNDLE_TOO_LARGE',
  'VENDOR_TIME_LIMIT',
  'VENDOR_TOO_DEEP',
] as const
export type VendorFailureCode = (typeof VENDOR_FAILURE_CODES)[number]

/** A file brought in: where from, where it is in the bundle, its size. */
export interface VendoredFile {
  url: string
  path: string
  bytes: number
}

/** A file that could not be brought in: its URL, the file naming it (a bundle path, or a stylesheet's URL), and why. */
export interface VendorFailure {
  code: VendorFailureCode
  url: string
  path: string
  message: string
}

export interface VendorOutcome {
  /** The new text of each source that changed, by its path. */
  rewritten: Map<string, string>
  /** The copies, to add to the bundle. */
  added: Array<{ path: string; bytes: Buffer; contentType: string }>
  vendored: VendoredFile[]
  /** When not empty, nothing was rewritten or added. */
  failures: VendorFailure[]
}

export interface VendorOptions {
  fetch: VendorFetch
  bundleLimits: Pick<BundleLimits, 'maxFiles' | 'maxFileBytes' | 'maxBundleBytes'>
  /** What the bundle holds before its copies: their count and bytes count against its limits, and their paths are not taken. */
  bundle: { files: number; bytes: number; paths: ReadonlySet<string> }
  limits?: VendorLimits
  /** The clock, for the limit on all fetches' time. */
  now?: () => number
}

/** Failures listed one by one at most; the rest are told in one more. */
const LISTED_FAILURES = 20

/** Which kind wins when one URL is named as two: what it is loaded as decides its type. */
const KIND_RANK: Record<ReferenceKind, number> = { style: 4, script: 3, font: 2, image: 1, asset: 0 }

interface Wanted {
  url: string
  kind: ReferenceKind
  /** The first file naming it. */
  by: string
  depth: number
  integrity: Array<{ value: string; by: string }>
}

interface Fetched {
  wanted: Wanted
  file: FetchedFile
  type: string
  /** The text of a stylesheet, whose URLs are rewritten. */
  css?: string
}

export async function vendorFiles(sources: readonly VendorSource[], options: VendorOptions): Promise<VendorOutcome> {
  const limits = options.limits ?? VENDOR_LIMITS
  const now = options.now ?? Date.now
  const deadline = now() + limits.totalTimeoutMs
  const { bundleLimits, bundle } = options
  const room = Math.max(0, Math.min(limits.maxFiles, bundleLimits.maxFiles - bundle.files))
  const budget = bundleLimits.maxBundleBytes - bundle.bytes

  const wanted = new Map<string, Wanted>()
  const failures: VendorFailure[] = []
  let overCount = 0
  const fail = (failure: VendorFailure): void => {
    failures.push(failure)
  }
  const want = (refs: ExternalReference[], by: string, depth: number): Wanted[] => {
    const added: Wanted[] = []
    for (const ref of refs) {
      let entry = wanted.get(ref.url)
      if (!entry) {
        if (wanted.size >= room) {
          if (overCount++ < LISTED_FAILURES) fail(tooMany(ref.url, by, bundle.files, bundleLimits.maxFiles, limits.maxFiles, room))
          continue
        }
        entry = { url: ref.url, kind: ref.kind, by, depth, integrity: [] }
        wanted.set(ref.url, entry)
        added.push(entry)
      } else if (KIND_RANK[ref.kind] > KIND_RANK[entry.kind]) entry.kind = ref.kind
      if (ref.integrity !== undefined) entry.integrity.push({ value: ref.integrity, by })
    }
    return added
  }

  let round = sources.flatMap((source) => want(source.kind === 'html' ? htmlReferences(source.text) : cssReferences(source.text), source.path, 0))
  const fetched: Fetched[] = []
  let total = 0
  let stopped = false
  // Files that do not fit refuse the publish whatever else happens: none is fetched then.
  while (round.length > 0 && overCount === 0) {
    const next: Wanted[] = []
    await eachAtMost(limits.concurrency, round, async (entry) => {
      if (stopped) return
      const remaining = deadline - now()
      if (remaining <= 0) return fail(timeLimit(entry, limits.totalTimeoutMs))
      let file: FetchedFile
      try {
        file = await options.fetch(entry.url, {
          maxBytes: bundleLimits.maxFileBytes,
          timeoutMs: Math.min(limits.fetchTimeoutMs, remaining),
          maxRedirects: limits.maxRedirects,
        })
      } catch (error) {
        return fail({ code: 'VENDOR_FETCH_FAILED', url: entry.url, path: entry.by, message: `${(error as Error).message} ${dropIt(entry)}` })
      }
      const problem = checkFetched(entry, file)
      if (problem) return fail(problem)
      total += file.bytes.length
      if (total > budget) {
        stopped = true
        return fail(overBudget(entry, file, fetched, bundle.bytes, total, bundleLimits.maxBundleBytes))
      }
      const type = copyType(entry.kind, new URL(entry.url), file.contentType)
      const item: Fetched = { wanted: entry, file, type }
      fetched.push(item)
      if (type === 'text/css') {
        item.css = file.bytes.toString('utf8').replace(/^\uFEFF/, '')
        const refs = cssReferences(item.css, file.finalUrl)
        if (refs.length > 0 && entry.depth + 1 > limits.maxDepth) return fail(tooDeep(entry, limits.maxDepth))
        next.push(...want(refs, entry.url, entry.depth + 1))
      }
    })
    round = next
  }
  if (overCount > LISTED_FAILURES) {
    const first = failures.find((f) => f.code === 'VENDOR_TOO_MANY_FILES')!
    fail({ ...first, message: `…and ${overCount - LISTED_FAILURES} more external files that do not fit either.` })
  }
  if (failures.length > 0) return { rewritten: new Map(), added: [], vendored: [], failures }
  return rewriteAll(sources, fetched, bundle.paths)
}

/** Paths for the copies, in the order their URLs were found, and every reference rewritten. */
function rewriteAll(sources: readonly VendorSource[], fetched: Fetched[], bundlePaths: ReadonlySet<string>): VendorOutcome {
  const order = [...fetched].sort((a, b) => a.wanted.depth - b.wanted.depth)
  const pathOf = new Map<string, string>()
  const taken = new Set<string>()
  for (const item of order) {
    const path = uniquePath(vendorPath(new URL(item.wanted.url), item.type), item.wanted.url, (p) => bundlePaths.has(p) || taken.has(p))
    taken.add(path)
    pathOf.set(item.wanted.url, path)
  }
  const copyFrom = (from: string) => (url: string) => {
    const to = pathOf.get(url)
    return to === undefined ? undefined : relativeReference(from, to)
  }
  const changed = new Set<string>()
  const added = order.map((item) => {
    const path = pathOf.get(item.wanted.url)!
    let bytes = item.file.bytes
    if (item.css !== undefined) {
      const css = rewriteCss(item.css, copyFrom(path), item.file.finalUrl)
      if (css !== item.css) {
        bytes = Buffer.from(css, 'utf8')
        changed.add(item.wanted.url)
      }
    }
    return { path, bytes, contentType: item.type }
  })
  const rewritten = new Map<string, string>()
  for (const source of sources) {
    const text =
      source.kind === 'html' ? rewriteHtml(source.text, copyFrom(source.path), (url) => !changed.has(url)) : rewriteCss(source.text, copyFrom(source.path))
    if (text !== source.text) rewritten.set(source.path, text)
  }
  const vendored = order.map((item, i) => ({ url: item.wanted.url, path: added[i]!.path, bytes: added[i]!.bytes.length }))
  return { rewritten, added, vendored, failures: [] }
}

/** Runs `work` on every item, at most `limit` at once. */
async function eachAtMost<T>(limit: number, items: T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < items.length) await work(items[next++]!)
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
}

const dropIt = (entry: Wanted) => `Drop the reference from ${entry.by}, or put the file in the bundle yourself.`

function checkFetched(entry: Wanted, file: FetchedFile): VendorFailure | null {
  const answered = answeredType(file.contentType)
  if ((entry.kind === 'script' || entry.kind === 'style') && answered === 'text/html') {
    return {
      code: 'VENDOR_WRONG_TYPE',
      url: entry.url,
      path: entry.by,
      message: `${entry.url} answered with an HTML page, not a ${entry.kind === 'script' ? 'script' : 'stylesheet'} (a login or error page?). ${dropIt(entry)}`,
    }
  }
  for (const { value, by } of entry.integrity) {
    if (integrityMatches(file.bytes, value) === false) {
      return {
        code: 'VENDOR_INTEGRITY_MISMATCH',
        url: entry.url,
        path: by,
        message: `The bytes of ${entry.url} do not match the integrity attribute in ${by}: the file changed at its source, or is not the one meant. Update or remove the attribute, or drop the reference.`,
      }
    }
  }
  return null
}

function tooMany(url: string, by: string, files: number, maxFiles: number, vendorMax: number, room: number): VendorFailure {
  const why =
    room < vendorMax
      ? `the bundle holds ${files} files and may hold ${maxFiles}, so only ${room} external files fit`
      : `at most ${vendorMax} external files are brought in`
  return { code: 'VENDOR_TOO_MANY_FILES', url, path: by, message: `${url} was not fetched: ${why}. Drop this reference from ${by}, or remove other files.` }
}

function overBudget(entry: Wanted, file: FetchedFile, fetched: Fetched[], bundleBytes: number, total: number, max: number): VendorFailure {
  const largest = [...fetched].sort((a, b) => b.file.bytes.length - a.file.bytes.length).slice(0, 3)
  const others =
    largest.length === 0
      ? ''
      : ` The largest brought in before it: ${largest.map((f) => `${f.wanted.url} (${formatSize(f.file.bytes.length)}, from ${f.wanted.by})`).join(', ')}.`
  return {
    code: 'VENDOR_BUNDLE_TOO_LARGE',
    url: entry.url,
    path: entry.by,
    message: `With ${entry.url} (${formatSize(file.bytes.length)}) the bundle would hold ${formatSize(bundleBytes + total)}, over its limit of ${formatSize(max)}; fetching stopped. Drop this reference from ${entry.by}, or a larger one.${others}`,
  }
}

const timeLimit = (entry: Wanted, totalMs: number): VendorFailure => ({
  code: 'VENDOR_TIME_LIMIT',
  url: entry.url,
  path: entry.by,
  message: `${entry.url} was not fetched: bringing in the external files may take ${totalMs / 1000} s in all, and that time ran out. Drop some references from ${entry.by}, or put the files in the bundle yourself.`,
})

const tooDeep = (entry: Wanted, maxDepth: number): VendorFailure => ({
  code: 'VENDOR_TOO_DEEP',
  url: entry.url,
  path: entry.by,
  message: `${entry.url} names further files through a chain of more than ${maxDepth} stylesheets; the chain is not followed further. Put the stylesheets in the bundle yourself.`,
})
