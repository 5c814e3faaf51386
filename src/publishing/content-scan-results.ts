/**
 * What the content rules found in texts already checked, so a text is parsed once, not on every
 * publish that sends it again. Agents resend the whole bundle for every version (a version is the
 * whole site, not a diff), so most of a new version's pages, stylesheets and scripts are the texts
 * of the previous one; parsing them again is the costliest part of such a publish and finds
 * nothing new, since the rules are a pure function of a text, its path, its media type and the
 * violation limit.
 *
 * A result is keyed by all four, by whether the file's facts for the site check were gathered
 * (site-check/file-facts.ts, kept with it), and by the user who publishes: one user's publish never tells
 * another, by its speed, that a text was published before. The text enters the key through the
 * SHA-256 of the file's bytes, from which the text is decoded (bytesToText) or to which it encodes
 * (UTF-8): so no text is held in memory, and for a stored file the key is its blob's name, so a
 * file given by hash whose result is remembered is not even read (a draft's publish, a patch).
 * Text sent with an unpaired surrogate, which UTF-8 cannot represent exactly and which the rules
 * refuse anyway, has bytes that do not decode to it: it is never looked up nor kept. A result
 * stopped by the checks' time or memory limit (CONTENT_TOO_COMPLEX) is not kept either: it depends
 * on the machine's load, not on the text, and the next publish may succeed. Facts are bounded per
 * file, and the results kept are bounded by their size as well as by their count.
 */
import { createHash } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import type { FileFacts } from '../site-check/file-facts.ts'
import type { FileScan } from './authoring-rules.ts'
import { isWellFormed } from './bundle-paths.ts'
import type { ScanOutcome } from './content-rules.ts'

/** Results a server keeps at most, least recently used dropped first: the texts of a few thousand sites... */
export const CONTENT_SCAN_RESULTS_KEPT = 10_000
/** ...in at most about this many bytes (facts and messages, as UTF-16 text). */
export const CONTENT_SCAN_RESULTS_BYTES = 64 * 1024 * 1024

export class ContentScanResults {
  private readonly results: LRUCache<string, Readonly<ScanOutcome>>

  /** `maxEntries`: results kept at most, least recently used dropped first; `maxBytes`: and about their size at most. */
  constructor(maxEntries: number, maxBytes = CONTENT_SCAN_RESULTS_BYTES) {
    this.results = new LRUCache({ max: maxEntries, maxSize: maxBytes, sizeCalculation: sizeOf })
  }

  /**
   * The key of `scan` checked for `owner` with at most `limit` violations of a code, its facts
   * gathered or not, or null when it cannot have one.
   */
  keyOf(owner: string, scan: FileScan, limit: number, facts: boolean): string | null {
    let digest: string
    if ('hash' in scan) digest = scan.hash
    else if (isWellFormed(scan.text)) digest = createHash('sha256').update(scan.bytes).digest('hex')
    else return null
    return JSON.stringify([owner, scan.path, scan.contentType, limit, facts, digest])
  }

  get(key: string | null): Readonly<ScanOutcome> | undefined {
    return key === null ? undefined : this.results.get(key)
  }

  /** Keeps what the rules found for the text of `key`, unless the checks were stopped by a limit. */
  remember(key: string | null, outcome: ScanOutcome): void {
    if (key === null || outcome.found.some((v) => v.code === 'CONTENT_TOO_COMPLEX')) return
    this.results.set(
      key,
      Object.freeze({
        found: Object.freeze(outcome.found.map((v) => Object.freeze({ ...v }))) as ScanOutcome['found'],
        facts: outcome.facts,
        forms: outcome.forms,
      }),
    )
  }

  get size(): number {
    return this.results.size
  }
}

/** About the bytes a result holds: its texts as UTF-16, and a little for each object. */
function sizeOf(outcome: Readonly<ScanOutcome>): number {
  let chars = 0
  for (const v of outcome.found) chars += v.message.length + (v.detail?.length ?? 0) + 32
  const facts: FileFacts | null = outcome.facts
  if (facts !== null) {
    for (const ref of facts.refs) chars += ref.url.length + 32
    for (const text of facts.anchors) chars += text.length + 16
    for (const text of facts.mentions) chars += text.length + 16
    if (facts.page !== null) chars += 64 * (facts.page.duplicateIds.length + facts.page.missingAlt.length + facts.page.shown.length)
    if (facts.redirects !== null) chars += 256 * facts.redirects.list.length
  }
  for (const form of outcome.forms) chars += form.name.length + 32 * (form.fields.length + 1)
  return Math.max(1, 2 * chars + 64)
}
