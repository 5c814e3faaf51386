/**
 * What the content rules found in texts already checked, so a text is parsed once, not on every
 * publish that sends it again. Agents resend the whole bundle for every version (a version is the
 * whole site, not a diff), so most of a new version's pages, stylesheets and scripts are the texts
 * of the previous one; parsing them again is the costliest part of such a publish and finds
 * nothing new, since the rules are a pure function of a text, its path, its media type and the
 * violation limit.
 *
 * A result is keyed by all four, and by the user who publishes: one user's publish never tells
 * another, by its speed, that a text was published before. The text enters the key through its
 * SHA-256 (of its UTF-8 bytes), so no text is held in memory; a text with an unpaired surrogate,
 * which UTF-8 cannot represent exactly and which the rules refuse anyway, is never looked up nor
 * kept. A result stopped by the checks' time or memory limit (CONTENT_TOO_COMPLEX) is not kept
 * either: it depends on the machine's load, not on the text, and the next publish may succeed.
 */
import { createHash } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import type { PublishViolation } from '../core/errors.ts'
import type { TextScan } from './content-rules.ts'
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
  keyOf(owner: string, scan: TextScan, limit: number): string | null {
    if (!isWellFormed(scan.text)) return null
    const digest = createHash('sha256').update(scan.text, 'utf8').digest('base64')
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
