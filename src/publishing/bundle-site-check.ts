/**
 * The site check of a bundle that breaks no authoring rule (site-check/site-check.ts), as the
 * publish pipeline runs it: on the facts its files' scans gathered, with the pixel sizes of the
 * images its pages show at a stated size. A check whose input is small runs on the calling
 * thread: its work is bounded by that size (a fraction of a millisecond for an ordinary site), less
 * than handing the input to a content-scan thread and back costs. A larger one runs in a thread
 * (or on the calling thread for a pipeline without threads).
 */
import type { BlobStore, StoredFile } from '../blobs/blob-store.ts'
import { pixelSize } from '../core/image-size.ts'
import type { Warning } from '../core/schemas.ts'
import { checkSite, imagesToMeasure, type SiteCheckInput } from '../site-check/site-check.ts'
import type { BundleInspection, DecodedFile } from './authoring-rules.ts'
import type { Finding } from './bundle-paths.ts'
import type { ScanOutcome } from './content-rules.ts'
import type { ContentScanPool } from './content-scans.pool.ts'

/**
 * The most facts (files, references, anchors, mentions and page items, times the _redirects rules
 * each reference may be matched against) a check runs with on the calling thread. The check's
 * work grows with them; at this bound it stays about a millisecond.
 */
export const INLINE_SITE_CHECK_WEIGHT = 500

/** Stored images whose pixel sizes are remembered by blob hash, so a publish that sends them again reads none of them. */
const SIZES_REMEMBERED = 10_000

type Pixels = { width: number; height: number } | null

export class BundleSiteCheck {
  /** The pixel sizes of stored images (null: none), by blob hash (bounded, oldest forgotten first). */
  private readonly pixelsByHash = new Map<string, Pixels>()

  constructor(
    private readonly blobs: BlobStore,
    private readonly scans: ContentScanPool | null,
  ) {}

  /**
   * What the site check finds in an inspected bundle, given what the content rules found in each
   * of its scans (same order) and the warnings they gave.
   */
  async check(
    inspection: BundleInspection<DecodedFile | StoredFile>,
    outcomes: readonly ScanOutcome[],
    ruleWarnings: Finding[],
    collections: readonly string[],
  ): Promise<Warning[]> {
    const files = inspection.files.map((file) => ({ path: file.path, size: 'hash' in file ? file.size : file.bytes.length, contentType: file.contentType }))
    const facts = inspection.scans.flatMap((scan, i) => {
      const found = outcomes[i]?.facts
      return found ? [{ path: scan.path, facts: found }] : []
    })
    const collectionNames = [...collections]
    const pixels = await this.pixelsOf(imagesToMeasure({ files, facts, collectionNames }), inspection.files)
    const input: SiteCheckInput = { files, facts, ruleWarnings, collectionNames, pixels }
    return this.scans && siteCheckWeight(input) > INLINE_SITE_CHECK_WEIGHT ? this.scans.checkSite(input) : checkSite(input)
  }

  /** The pixel sizes of these images of the bundle, from their headers (a stored image's read once, then remembered by its hash). */
  private async pixelsOf(paths: readonly string[], files: ReadonlyArray<DecodedFile | StoredFile>): Promise<SiteCheckInput['pixels']> {
    const byPath = new Map(files.map((file) => [file.path, file]))
    const sizes = await Promise.all(paths.map((path) => this.pixelsOfFile(byPath.get(path))))
    return paths.flatMap((path, i) => (sizes[i] ? [{ path, ...sizes[i] }] : []))
  }

  private async pixelsOfFile(file: DecodedFile | StoredFile | undefined): Promise<Pixels> {
    if (file === undefined) return null
    if (!('hash' in file)) return pixelSize(file.bytes)
    const known = this.pixelsByHash.get(file.hash)
    if (known !== undefined) return known
    const size = pixelSize(await this.blobs.get(file.hash))
    if (this.pixelsByHash.size >= SIZES_REMEMBERED) this.pixelsByHash.delete(this.pixelsByHash.keys().next().value!)
    this.pixelsByHash.set(file.hash, size)
    return size
  }
}

/** How much work a site check of this input is, in the units of INLINE_SITE_CHECK_WEIGHT. */
export function siteCheckWeight(input: SiteCheckInput): number {
  let items = input.files.length + input.ruleWarnings.length + input.pixels.length
  let redirectRules = 0
  for (const { facts } of input.facts) {
    items += facts.refs.length + facts.anchors.length + facts.mentions.length
    if (facts.page) items += facts.page.duplicateIds.length + facts.page.missingAlt.length + facts.page.shown.length
    if (facts.redirects) redirectRules += facts.redirects.list.length
  }
  return items * Math.max(1, redirectRules)
}
