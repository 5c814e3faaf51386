/**
 * What the content rules found in texts already checked, so a text is parsed once, not on every
 * publish that sends it again. Agents resend the whole bundle for every version (a version is the
 * whole site, not a diff), so most of a new version's pages, stylesheets and scripts are the texts
 * of the previous one; parsing them again is the costliest part of such a publish and finds
 * nothing new, since the rules are a pure function of a text, its path, its media type and the
 * violation limit.
 *
 * A result is keyed by all four, and by the user who publishes: one user's publish never tells
 * another, by its speed, that a text was published before. The text enters the key through the
 * SHA-256 of the file's bytes, from which the text is decoded (bytesToText) or to which it encodes
 * (UTF-8): so no text is held in memory, and for a stored file the key is its blob's name, so a
 * file given by hash whose result is remembered is not even read (a draft's publish, a patch).
 * Text sent with an unpaired surrogate, which UTF-8 cannot represent exactly and which the rules
 * refuse anyway, has bytes that do not decode to it: it is never looked up nor kept. A result
 * stopped by the checks' time or memory limit (CONTENT_TOO_COMPLEX) is not kept either: it depends
 * on the machine's load, not on the text, and the next publish may succeed.
 */
import { createHash } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import type { PublishViolation } from '../core/errors.ts'
import type { FileScan } from './authoring-rules.ts'
import { isWellFormed } from './bundle-paths.ts'

/** Results a server keeps at most, least recently used dropped first: the texts of a few thousand sites, in a few MiB. */
export const CONTENT_SCAN_RESULTS_KEPT = 10_000

export class ContentScanResults {
  private readonly results: LRUCache<string, readonly PublishViolation[]>

  /** `maxEntries`: results kept at most, least recently used dropped first. */
  constructor(maxEntries: number) {
    this.results = new LRUCache({ max: maxEntries })
  }

  /** The key of `scan` checked for `owner` with at most `limit` violations of a code, or null when it cannot have one. */
  keyOf(owner: string, scan: FileScan, limit: number): string | null {
    let digest: string
    if ('hash' in scan) digest = scan.hash
    else if (isWellFormed(scan.text)) digest = createHash('sha256').update(scan.bytes).digest('hex')
    else return null
    return JSON.stringify([owner, scan.path, scan.contentType, limit, digest])
  }

  get(key: string | null): readonly PublishViolation[] | undefined {
    return key === null ? undefined : this.results.get(key)
  }

  /** Keeps what the rules found for the text of `key`, unless the checks were stopped by a limit. */
  remember(key: string | null, found: readonly PublishViolation[]): void {
    if (key === null || found.some((v) => v.code === 'CONTENT_TOO_COMPLEX')) return
    this.results.set(key, Object.freeze(found.map((v) => Object.freeze({ ...v }))))
  }

  get size(): number {
    return this.results.size
  }
}
