/**
 * Turns a request bundle into durable blobs and the rows that describe them, before any metadata
 * is written: resolve files given by upload or by hash to stored blobs, decode and check every
 * authoring rule (all violations at once), hash, precompress new blobs, write them atomically.
 * The caller then records the bundle in one metadata transaction of its own and tells the
 * pipeline how that went: confirm() after a commit, abandon() after a failure (which removes the
 * blobs this publish wrote). So a crash at any instant leaves the whole version or none of it.
 *
 * A bundle that breaks no rule is then checked as a site (site-check/site-check.ts) on the facts
 * the rules gathered as they parsed each file, in a worker thread while its bytes are stored: the
 * warnings it gives refuse nothing.
 */
import { createHash } from 'node:crypto'
import { setImmediate as nextTurn } from 'node:timers/promises'
import type { BlobStore, StoredFile } from '../blobs/blob-store.ts'
import type { BlobVariants } from '../blobs/blob-variants.ts'
import { restoreClaimed } from '../blobs/blob-removal.ts'
import { blobRow } from '../blobs/blob-writes.ts'
import type { BlobsRepository } from '../blobs/blobs.repository.ts'
import { AppError, type PublishViolation } from '../core/errors.ts'
import type { BundleLimits } from '../core/limits.ts'
import type { Warning } from '../core/schemas.ts'
import type { BlobsTable } from '../db/types.ts'
import { asWarning } from '../site-check/site-check.ts'
import { type BundleInspection, type DecodedFile, type FileScan, finishCheck, inspectBundle, type StoredFileInput } from './authoring-rules.ts'
import { BundleSiteCheck } from './bundle-site-check.ts'
import { bytesToText } from './bundle-paths.ts'
import { type ScanOutcome, scanTexts, type TextScan } from './content-rules.ts'
import type { ContentScanResults } from './content-scan-results.ts'
import type { ContentScanPool } from './content-scans.pool.ts'
import { type ContentReferences, resolveFiles } from './file-references.ts'
import { type FormDeclaration, mergeForms } from './form-declarations.ts'
import type { PublishFileInput } from './publishing.schemas.ts'
import { vendorBundle } from './bundle-vendoring.ts'
import type { VendoredFile, VendorFetch } from '../vendoring/vendoring.ts'

/** A blob this publish wrote, kept in memory until the publish ends so it can be restored. */
interface WrittenBlob {
  row: BlobsTable
  bytes: Buffer
}

export interface StoredBundle {
  files: StoredFile[]
  /** Rows of the blobs this publish wrote, to record in the metadata transaction. */
  newBlobs: BlobsTable[]
  written: WrittenBlob[]
  totalBytes: number
  /** Bytes this publish added to the blob store (0 when every file was already stored). */
  newBlobBytes: number
  /**
   * What the site check found in a bundle (site-check/site-check.ts), or what browsers will still
   * block in a file stored on its own (BundleCheck.warnings); empty when there is nothing to say.
   */
  warnings: Warning[]
  /** The forms its pages declare (form-declarations.ts), by name. */
  forms: FormDeclaration[]
}

export interface PublishPipelineOptions {
  blobs: BlobStore
  blobRows: BlobsRepository
  /** Makes the precompressed variants of new blobs once their publish committed. */
  variants: BlobVariants
  /** Runs the content rules in worker threads; null runs them on the calling thread. */
  scans: ContentScanPool | null
  /** What the content rules found in texts checked before. */
  scanResults: ContentScanResults
  /** Resolves files given by uploadId or sha256 (the uploads feature implements it). */
  references: ContentReferences
  /** Sites are served over https, so plain-http subresources are reported as mixed content. */
  httpsSites: boolean
  /** What a bundle may hold (config.bundleLimits). */
  limits: Readonly<BundleLimits>
}

/**
 * A file as the pipeline takes it: as a request gives it, or stored already and given by its blob
 * (StoredFileInput, without bytes) by a caller whose own rows keep that blob and hold its size,
 * such as a draft's files. No reference is looked up for such a file: it is the caller's to know
 * that the publisher may use those bytes. Every rule applies to it as to any file.
 */
export type PipelineFileInput = PublishFileInput | StoredFileInput

/** Who publishes, and where on their site files may not go. */
export interface PublishTarget {
  /** The publishing user: files given by reference resolve only to bytes they may use. */
  userId: string
  /** The sites their token reaches (null or absent: every one they see): bytes of other sites are not theirs to reuse here. */
  sites?: readonly string[] | null
  /** The site's collections, whose reserved paths no file may take (RESERVED_PATH). */
  collectionNames: readonly string[]
}

/** How many blobs are written at once: a write is mostly waiting for fsync, which the disk batches. */
const WRITE_CONCURRENCY = 64

/**
 * Bytes hashed between two turns of the event loop. Parsing, decoding and hashing a maximal
 * bundle are long stretches of work; run back to back for several bundles that arrive together,
 * they would keep every other request waiting for all of them (docs/benchmarks.md). A
 * publish lets the event loop go after its body is parsed, after decoding, and after each slice
 * of hashing, so no stretch is longer than one of these steps.
 */
const HASH_SLICE_BYTES = 1024 * 1024

export class PublishPipeline {
  /**
   * Whether a bundle's publish runs the site check (and its files' scans gather facts for it):
   * always, but where a benchmark measures what the check costs a publish (bench/publishing.ts).
   */
  siteCheck = true
  /** Runs the site check of a bundle that breaks no rule. */
  private readonly sites: BundleSiteCheck

  constructor(private readonly options: PublishPipelineOptions) {
    this.sites = new BundleSiteCheck(options.blobs, options.scans)
  }

  /**
   * Checks the bundle (PUBLISH_INVALID with every violation) and writes the blobs it lacks. The
   * content rules run in worker threads while the bytes are hashed and stored; a bundle that
   * breaks one has the blobs it stored removed again before the refusal, so it changes nothing.
   * Bytes are stored only once every rule that bounds them (count, sizes, paths) has passed.
   */
  async store(input: PipelineFileInput[], target: PublishTarget): Promise<StoredBundle> {
    return this.checkAndStore(await this.inspect(input, target), target, 'bundle')
  }

  /**
   * The bundle with its external scripts, stylesheets, fonts and images fetched with `fetch` and
   * put in it, its references rewritten (bundle-vendoring.ts): what store() then takes. Refused
   * with PUBLISH_INVALID, naming each URL, when any cannot be brought in.
   */
  vendor(input: PipelineFileInput[], target: PublishTarget, fetch: VendorFetch): Promise<{ files: PipelineFileInput[]; vendored: VendoredFile[] }> {
    const { references, blobRows, blobs, limits } = this.options
    return vendorBundle(input, target, { references, blobRows, blobs, limits, fetch })
  }

  /**
   * One file of a site being assembled file by file (a draft): checked against every rule of a
   * file (its path, encoding, size and content) and stored as store() stores a bundle, so the
   * caller records it, then confirms or abandons it. The rules of a whole bundle (MISSING_INDEX,
   * TOO_MANY_FILES, BUNDLE_TOO_LARGE, TOO_MANY_PAGES) are the caller's, and a publish's.
   */
  async storeFile(input: PipelineFileInput, target: PublishTarget): Promise<StoredBundle> {
    const inspection = await this.inspect([input], target)
    return this.checkAndStore({ ...inspection, bundle: [] }, target, 'file')
  }

  /** The files resolved (references looked up) and inspected: every rule but the content rules. */
  private async inspect(input: PipelineFileInput[], target: PublishTarget): Promise<BundleInspection<DecodedFile | StoredFile>> {
    const resolved = await resolveFiles(input, target, this.options.references, this.options.blobRows, this.options.limits.maxFiles)
    await nextTurn()
    return inspectBundle(resolved, this.options.limits, { collectionNames: target.collectionNames, httpsSites: this.options.httpsSites })
  }

  /**
   * Runs the content rules, and for a bundle that breaks none the site check, while storing the
   * bytes of an inspected bundle (see store).
   */
  private async checkAndStore(inspection: BundleInspection<DecodedFile | StoredFile>, target: PublishTarget, refused: Refused): Promise<StoredBundle> {
    const limit = inspection.limits.maxViolations
    const siteCheck = refused === 'bundle' && this.siteCheck
    // A file stored alone (a draft's edit) gathers its facts too: its draft's publish then finds
    // the file's scan remembered, and checks the site without scanning it again.
    const checking = this.scanContent(inspection.scans, limit, target.userId, this.siteCheck).then(async (outcomes) => {
      const check = finishCheck(
        inspection,
        outcomes.map((outcome) => outcome.found),
      )
      // The forms the pages declare were found with their rules, in a content-scan thread.
      const forms = refused === 'bundle' ? mergeForms(outcomes.flatMap((outcome) => outcome.forms)) : []
      if (check.violations.length > 0 || !siteCheck) return { check, forms, warnings: check.warnings.map(asWarning) }
      return { check, forms, warnings: await this.sites.check(inspection, outcomes, check.warnings, target.collectionNames) }
    })
    const fitsTheLimits = inspection.bundle.length === 0 && inspection.perFile.every((found) => found.length === 0)
    const storing = fitsTheLimits ? this.storeBytes(inspection.files) : Promise.resolve(null)
    // Both are awaited whatever happens to the other: no check is left running unobserved.
    const [checked, stored] = await Promise.allSettled([checking, storing])
    if (stored.status === 'rejected') throw stored.reason
    const check = checked.status === 'fulfilled' ? checked.value.check : null
    if (check === null || check.violations.length > 0) {
      if (stored.value !== null) await this.removeUnclaimed(stored.value.written)
      throw checked.status === 'rejected' ? checked.reason : publishInvalid(check!.violations, refused)
    }
    const { files, written } = stored.value!
    const { warnings, forms } = (checked as PromiseFulfilledResult<{ warnings: Warning[]; forms: FormDeclaration[] }>).value
    return {
      files,
      newBlobs: written.map((w) => w.row),
      written,
      totalBytes: check.totalBytes,
      newBlobBytes: written.reduce((sum, { row }) => sum + row.size, 0),
      warnings,
      forms,
    }
  }

  /**
   * What the content rules find in each file (same order), with its facts for the site check when
   * `facts`: remembered for the texts this user had checked before (see ContentScanResults),
   * checked now for the others, whose stored bytes are read only then.
   */
  private async scanContent(scans: readonly FileScan[], limit: number, owner: string, facts: boolean): Promise<ScanOutcome[]> {
    const keys = scans.map((scan) => this.options.scanResults.keyOf(owner, scan, limit, facts))
    const found = keys.map((key) => this.options.scanResults.get(key))
    const unknown = scans.flatMap((_, i) => (found[i] === undefined ? [i] : []))
    if (unknown.length > 0) {
      const texts = await this.textsOf(unknown.map((i) => scans[i]!))
      const checked = this.options.scans ? await this.options.scans.scan(texts, limit, facts) : scanTexts(texts, limit, facts)
      unknown.forEach((i, k) => {
        found[i] = checked[k]!
        this.options.scanResults.remember(keys[i]!, checked[k]!)
      })
    }
    return found as ScanOutcome[]
  }

  /** The texts of these files, read from their blobs where they were not given (each blob once). */
  private async textsOf(scans: readonly FileScan[]): Promise<TextScan[]> {
    const reads = new Map<string, Promise<string>>()
    const read = (hash: string) => {
      let text = reads.get(hash)
      if (!text) reads.set(hash, (text = this.options.blobs.get(hash).then(bytesToText)))
      return text
    }
    return Promise.all(
      scans.map(async (scan) => ({
        path: scan.path,
        contentType: scan.contentType,
        text: 'hash' in scan ? (scan.text ?? (await read(scan.hash))) : scan.text,
      })),
    )
  }

  /** Hashes the inline files and writes the blobs no row knows yet; on a failure, removes what it wrote. */
  private async storeBytes(decoded: Array<DecodedFile | StoredFile>): Promise<{ files: StoredFile[]; written: WrittenBlob[] }> {
    // Files given by reference are stored already: only inline bytes are hashed, and maybe written.
    const bytesByHash = new Map<string, { bytes: Buffer; contentType: string }>()
    const files: StoredFile[] = []
    // Decoding took this turn; hashing starts on the next one (see HASH_SLICE_BYTES).
    await nextTurn()
    let hashedSinceTurn = 0
    for (const file of decoded) {
      if ('hash' in file) {
        files.push(file)
        continue
      }
      if (hashedSinceTurn >= HASH_SLICE_BYTES) {
        await nextTurn()
        hashedSinceTurn = 0
      }
      const hash = createHash('sha256').update(file.bytes).digest('hex')
      hashedSinceTurn += file.bytes.length
      bytesByHash.set(hash, { bytes: file.bytes, contentType: file.contentType })
      files.push({ path: file.path, hash, size: file.bytes.length, contentType: file.contentType })
    }
    const known = await this.options.blobRows.findExisting([...bytesByHash.keys()])
    const missing = [...bytesByHash].filter(([hash]) => !known.has(hash))

    const written: WrittenBlob[] = []
    let next = 0
    const worker = async () => {
      while (next < missing.length) {
        const [hash, { bytes, contentType }] = missing[next++]!
        await this.options.blobs.put(hash, bytes)
        written.push({ row: blobRow(hash, bytes, contentType), bytes })
      }
    }
    const outcomes = await Promise.allSettled(Array.from({ length: Math.min(WRITE_CONCURRENCY, missing.length) }, worker))
    const failed = outcomes.find((o) => o.status === 'rejected')
    if (failed) {
      await this.removeUnclaimed(written)
      throw failed.reason
    }
    return { files, written }
  }

  /**
   * After the metadata transaction that records the bundle committed: another publish of the same
   * bytes may have failed meanwhile and removed blobs this one wrote (see abandon), so each new
   * blob is checked and rewritten if it is gone. Then their variants are made, off this request;
   * `whenVariantsReady` runs once they are (to tell the serving caches). With `variantsLater`
   * (a draft's files: most are replaced before anyone but their author sees them) the variants
   * stay pending until makePendingVariants, and are served uncompressed until then.
   */
  async confirm(
    bundle: StoredBundle,
    { whenVariantsReady, variantsLater = false }: { whenVariantsReady?: () => void; variantsLater?: boolean } = {},
  ): Promise<void> {
    const present = await Promise.all(bundle.written.map((blob) => this.options.blobs.has(blob.row.hash)))
    const gone = bundle.written.filter((_blob, i) => !present[i])
    await Promise.all(gone.map((blob) => this.options.blobs.put(blob.row.hash, blob.bytes)))
    // With nothing to make, the caller's own event already told the caches all there is.
    if (!variantsLater) this.options.variants.scheduleWritten(bundle.written, whenVariantsReady)
  }

  /** Makes the variants left pending among these blobs (confirm's `variantsLater`), off this request; `whenReady` as confirm's. */
  makePendingVariants(hashes: readonly string[], whenReady?: () => void): void {
    this.options.variants.schedulePending(hashes, whenReady)
  }

  /**
   * After the metadata transaction failed: the blobs this publish wrote are removed again, so a
   * failed publish leaves no bytes behind. Another publish of the same bytes may be relying on
   * them at the same moment; both sides hold the bytes, so each repairs the other's move: this
   * side deletes only blobs without a row and restores any whose row appeared meanwhile, and the
   * succeeding side rewrites any that are gone in confirm().
   */
  async abandon(bundle: StoredBundle): Promise<void> {
    await this.removeUnclaimed(bundle.written)
  }

  /** Removes the blobs among `written` that no row claims, restoring any a row claims meanwhile (see abandon). */
  private async removeUnclaimed(written: WrittenBlob[]): Promise<void> {
    if (written.length === 0) return
    const hashes = written.map((w) => w.row.hash)
    const kept = await this.options.blobRows.findExisting(hashes)
    const orphans = written.filter((w) => !kept.has(w.row.hash))
    for (const blob of orphans) await this.options.blobs.delete(blob.row.hash)
    const restored = await restoreClaimed(
      this.options.blobs,
      this.options.blobRows,
      new Map(orphans.map((w) => [w.row.hash, new Map([['identity', w.bytes] as const])])),
    )
    // The publish that claimed one may have made its variants already, and they went with the delete.
    this.options.variants.scheduleWritten(orphans.filter(({ row }) => restored.has(row.hash)))
  }
}

/** What a refusal is of: a whole bundle, or one file written on its own. */
type Refused = 'bundle' | 'file'

function publishInvalid(violations: PublishViolation[], refused: Refused): AppError {
  const count = violations.length
  const unknownHashes = violations.filter((v) => v.code === 'UNKNOWN_HASH').length
  const resend =
    unknownHashes === 0
      ? ''
      : ` ${unknownHashes === 1 ? 'One file is' : `${unknownHashes} files are`} given by a sha256 the service cannot use for you (UNKNOWN_HASH): send ${unknownHashes === 1 ? 'it' : 'those files'} with content instead.`
  return new AppError(
    'PUBLISH_INVALID',
    `The ${refused} breaks ${count === 1 ? 'an authoring rule' : `${count} authoring rules`}; fix every listed violation and ${refused === 'bundle' ? 'publish' : 'write it'} again.${resend}`,
    { violations },
  )
}
