/**
 * Publishing a website's files: a new website as version 1, or a new version of one. The pipeline
 * checks and stores the bundle; one transaction then records it (the rate limit taken again under
 * the user's row lock, the version number, blob, version and file rows, the live pointer); the
 * pipeline is told after how that went, and every cache of the site's slug is told it changed.
 */
import type { Config } from '../config.ts'
import { AppError, notFound, type RateLimitState } from '../core/errors.ts'
import { storedExpiry } from '../core/future-time.ts'
import { newId, nowIso } from '../core/ids.ts'
import type { Principal } from '../core/principal.ts'
import { pageUrlFor } from '../core/site-address.ts'
import type { VisibleWebsite, WebsiteAccess } from '../db/access.ts'
import { isUniqueViolation } from '../db/connect.ts'
import type { VersionRow } from '../db/types.ts'
import type { BlobsRepository } from '../blobs/blobs.repository.ts'
import { compareFiles } from '../editing/file-changes.ts'
import type { PipelineFileInput, PublishPipeline, PublishTarget, StoredBundle } from '../publishing/publish-pipeline.ts'
import type { SiteEvents } from '../serving/site-events.ts'
import type { VendoredFile, VendorFetch } from '../vendoring/vendoring.ts'
import type { WebhookEvents } from '../webhooks/webhook-events.ts'
import type { PurgeHook } from './purge-hook.ts'
import type { PublishRateLimiter } from './publish-rate-limit.ts'
import { randomSlugVariant, type SlugClaims } from './slug-claims.ts'
import type { Executor, WebsitesRepository } from './websites.repository.ts'
import type { PublishVersionRequest, PublishVersionResult, PublishWebsiteRequest, PublishWebsiteResult } from './websites.schemas.ts'

/** The names of a website's content collections: a publish may not add files where they serve entries. */
export interface CollectionNames {
  namesOf(websiteId: string): Promise<string[]>
}

export interface WebsitePublishingOptions {
  config: Config
  /** The clock a preview's expiry is checked against (the server's, or a test's). */
  now: () => Date
  access: WebsiteAccess
  repo: WebsitesRepository
  blobRows: BlobsRepository
  pipeline: PublishPipeline
  rateLimiter: PublishRateLimiter
  slugs: SlugClaims
  /** Told whenever what a slug serves changes, so every cache (here and on other instances) drops it. */
  siteEvents: SiteEvents
  /** Told when a site's live version changes, for a CDN to purge (PLINTH_PURGE_URL). */
  purge: PurgeHook
  /** Told of each version published and its decoded bytes, whichever surface asked (the metrics). */
  onPublished: (bytes: number) => void
  collections: CollectionNames
  /** How a publish asking `vendor: true` fetches the external files it brings in (the SSRF-safe fetcher). */
  vendorFetch: VendorFetch
  /** Told of each new version (and of each made live) in the transaction that records it. */
  webhookEvents: WebhookEvents
}

/**
 * The version a new one is built on (a draft's or a patch's base): publishing is refused with
 * VERSION_CONFLICT when a newer version exists, unless `overwrite`.
 */
export interface PublishBase {
  number: number
  overwrite: boolean
}

/** More work for the transaction that records a version: it commits, or rolls back, with the version. */
export type AlsoRecord = (trx: Executor, versionId: string) => Promise<void>

/** Thrown inside the recording transaction, so it rolls back; answered as VERSION_CONFLICT. */
class StaleBase extends Error {
  constructor(readonly newest: number) {
    super('stale base')
  }
}

/** A version as publishVersion takes it: the complete bundle. */
export type VersionFilesInput = Pick<PublishVersionRequest, 'message' | 'promote' | 'vendor' | 'expiresAt'> & { files: PipelineFileInput[] }

export interface Published<T> {
  result: T
  rateLimit: RateLimitState
}

const DERIVED_SLUG_ATTEMPTS = 5
/** Derived-slug collisions with concurrent creates after which a random suffix is used instead. */
const SEQUENTIAL_SLUG_ATTEMPTS = 2

export class WebsitePublishing {
  constructor(private readonly options: WebsitePublishingOptions) {}

  async create(principal: Principal, input: PublishWebsiteRequest): Promise<Published<PublishWebsiteResult>> {
    const { config, pipeline, rateLimiter, slugs, siteEvents, purge } = this.options
    await rateLimiter.take(principal.userId)
    await this.assertUnderWebsiteLimit(principal.userId)
    if (input.slug !== undefined) await slugs.assertClaimable(input.slug)
    // A new site has no collections yet: no path is reserved.
    const target = { userId: principal.userId, sites: principal.sites, collectionNames: [] }
    const { files, vendored } = await this.vendored(input.files, input.vendor, target)
    const bundle = await pipeline.store(files, target)
    const recording = this.recordWebsiteUnderFreeSlug(principal, input, bundle)
    const { slug, websiteId, version, rateLimit } = await this.confirmOrAbandon(bundle, recording, (inserted) => inserted.slug)
    await siteEvents.siteChanged(slug)
    this.options.onPublished(bundle.totalBytes)
    // The slug may have served a deleted site before.
    purge.siteChanged('promote', { id: websiteId, slug })
    const result = {
      websiteId,
      jobId: version.id,
      version: 1,
      slug,
      pageUrl: pageUrlFor(config, slug),
      bytesWritten: bundle.totalBytes,
      ...warningsOf(bundle),
      ...(vendored && { vendored }),
    }
    return { result, rateLimit }
  }

  /** The files as the website's next version; with a `base`, only while no version newer than it exists. */
  async publishVersion(principal: Principal, websiteId: string, input: VersionFilesInput, base?: PublishBase): Promise<Published<PublishVersionResult>> {
    return this.publishVersionOf(principal, await this.options.access.requireSite(principal, websiteId, 'edit'), input, base)
  }

  /** publishVersion on a site this request found the caller may edit (requireSite, `edit`). */
  async publishVersionOf(
    principal: Principal,
    site: VisibleWebsite,
    input: VersionFilesInput,
    base?: PublishBase,
    alsoRecord?: AlsoRecord,
  ): Promise<Published<PublishVersionResult>> {
    const { config, pipeline, rateLimiter, siteEvents, purge, collections } = this.options
    if (base && !base.overwrite && site.last_version_number > base.number) throw await this.versionConflict(site.id, base.number, site.last_version_number)
    const promote = input.promote ?? true
    const expiresAt = previewExpiryOf(input.expiresAt, promote, this.options.now())
    await rateLimiter.take(principal.userId)
    const target = { userId: principal.userId, sites: principal.sites, collectionNames: await collections.namesOf(site.id) }
    const { files, vendored } = await this.vendored(input.files, input.vendor, target)
    const bundle = await pipeline.store(files, target)
    const recording = this.recordVersion(principal, site, { message: input.message ?? null, promote, expiresAt }, bundle, base, alsoRecord)
    let recorded: Awaited<typeof recording>
    try {
      recorded = await this.confirmOrAbandon(bundle, recording, () => site.slug)
    } catch (error) {
      if (error instanceof StaleBase && base) throw await this.versionConflict(site.id, base.number, error.newest)
      throw error
    }
    const { version, rateLimit } = recorded
    // Also when not promoted: a preview host probed before this version existed is remembered as unknown.
    await siteEvents.siteChanged(site.slug)
    this.options.onPublished(bundle.totalBytes)
    if (promote) purge.siteChanged('promote', site)
    const result = {
      websiteId: site.id,
      jobId: version.id,
      version: version.number,
      isCurrent: promote,
      pageUrl: pageUrlFor(config, site.slug),
      previewUrl: pageUrlFor(config, site.slug, version.number),
      bytesWritten: bundle.totalBytes,
      ...warningsOf(bundle),
      ...(vendored && { vendored }),
    }
    return { result, rateLimit }
  }

  /** The files with their external files brought in when the request asks `vendor`; `vendored` says what was, and is absent when it was not asked. */
  private async vendored(
    files: PipelineFileInput[],
    vendor: boolean | undefined,
    target: PublishTarget,
  ): Promise<{ files: PipelineFileInput[]; vendored?: VendoredFile[] }> {
    if (!vendor) return { files }
    return this.options.pipeline.vendor(files, target, this.options.vendorFetch)
  }

  /** VERSION_CONFLICT naming the versions published since `baseNumber` (`newest` the newest of them) and the files they changed. */
  async versionConflict(websiteId: string, baseNumber: number, newest: number): Promise<AppError> {
    const { repo } = this.options
    const [base, latest] = await Promise.all([repo.findVersionByNumber(websiteId, baseNumber), repo.findVersionByNumber(websiteId, newest)])
    const files = base && latest ? await repo.filesOf([base.id, latest.id]) : []
    const of = (versionId: string | undefined) => files.filter((file) => file.version_id === versionId)
    const changed = compareFiles(of(base?.id), of(latest?.id)).map((change) => change.path)
    const newer = Array.from({ length: newest - baseNumber }, (_, i) => baseNumber + 1 + i)
    const named = newer.length === 1 ? `version ${newer[0]} was` : `versions ${newer.join(', ')} were`
    const what = changed.length === 0 ? 'no file' : clippedList(changed)
    const message = `Version ${baseNumber} is not the newest: ${named} published since, changing ${what}. Start again from version ${newest}, or publish anyway with overwrite: true (the changes since are then lost).`
    return new AppError('VERSION_CONFLICT', message, { fields: { baseVersion: `${newest} is the newest version; changed since ${baseNumber}: ${what}` } })
  }

  private async assertUnderWebsiteLimit(userId: string, db?: Executor): Promise<void> {
    const { config, repo } = this.options
    const count = await repo.countOwned(userId, db)
    if (count >= config.maxWebsites) {
      throw new AppError('WEBSITE_LIMIT_REACHED', `This account already has ${count} websites, the most it may have (${config.maxWebsites}).`)
    }
  }

  /**
   * Waits for the metadata transaction that records a stored bundle, then tells the pipeline how
   * it went: a failed one has its new blobs removed, a committed one has them checked, and the
   * serving caches of its site are told again once the new blobs' compressed variants are made.
   */
  private async confirmOrAbandon<T>(bundle: StoredBundle, recording: Promise<T>, slugOf: (result: T) => string): Promise<T> {
    const { pipeline, siteEvents } = this.options
    let result: T
    try {
      result = await recording
    } catch (error) {
      await pipeline.abandon(bundle)
      throw error
    }
    const slug = slugOf(result)
    await pipeline.confirm(bundle, {
      whenVariantsReady: () => {
        // Nobody waits for this notice: the event bus logs a failure (see site-events.ts).
        siteEvents.siteChanged(slug).catch(() => {})
      },
    })
    return result
  }

  /** Records the website under its slug; a derived slug that a concurrent create took is derived again. */
  private async recordWebsiteUnderFreeSlug(principal: Principal, input: PublishWebsiteRequest, bundle: StoredBundle) {
    const { slugs } = this.options
    for (let attempt = 1; ; attempt++) {
      const derivedFrom = input.name ?? input.category
      const slug = input.slug ?? (attempt <= SEQUENTIAL_SLUG_ATTEMPTS ? await slugs.freeSlugFor(derivedFrom) : randomSlugVariant(derivedFrom))
      try {
        return { slug, ...(await this.recordWebsite(principal, input, slug, bundle)) }
      } catch (error) {
        if (!isUniqueViolation(error)) throw error
        // Someone claimed the slug between our check and our insert.
        if (input.slug !== undefined) throw await slugs.takenError(input.slug)
        if (attempt >= DERIVED_SLUG_ATTEMPTS) throw error
      }
    }
  }

  /** One transaction: a new website with the bundle as its live version 1. */
  private recordWebsite(principal: Principal, input: PublishWebsiteRequest, slug: string, bundle: StoredBundle) {
    const { repo, rateLimiter } = this.options
    return repo.transaction(async (trx) => {
      // Checked again with the user's row locked, so concurrent creates cannot overshoot the limits.
      const rateLimit = await rateLimiter.takeInTransaction(trx, principal.userId)
      await this.assertUnderWebsiteLimit(principal.userId, trx)
      const at = nowIso()
      const websiteId = newId('web')
      await repo.insertWebsite(trx, {
        id: websiteId,
        owner_id: principal.userId,
        name: input.name ?? slug,
        slug,
        category: input.category,
        description: input.description ?? null,
        status: 'draft',
        current_version_id: null,
        created_at: at,
        updated_at: at,
      })
      // The row was inserted just above, in this transaction.
      const number = (await repo.nextVersionNumber(trx, websiteId))!
      const version = newVersionRow(websiteId, number, 'initial', null, bundle, principal.userId)
      await this.insertVersionRows(trx, version, bundle)
      await repo.setCurrentVersion(trx, websiteId, version.id, at)
      return { websiteId, version, rateLimit }
    })
  }

  /** One transaction: the bundle as the next version of a website, made live when `promote`. */
  private recordVersion(
    principal: Principal,
    site: Pick<VisibleWebsite, 'id' | 'slug'>,
    { message, promote, expiresAt }: { message: string | null; promote: boolean; expiresAt: string | null },
    bundle: StoredBundle,
    base?: PublishBase,
    alsoRecord?: AlsoRecord,
  ) {
    const { config, repo, rateLimiter, webhookEvents } = this.options
    const websiteId = site.id
    return repo.transaction(async (trx) => {
      const rateLimit = await rateLimiter.takeInTransaction(trx, principal.userId)
      const number = await repo.nextVersionNumber(trx, websiteId)
      // Deleted since the publish found it.
      if (number === undefined) throw notFound('Website')
      // Checked again under the row lock the number took: another publish may have come between.
      if (base && !base.overwrite && number - 1 > base.number) throw new StaleBase(number - 1)
      const row = { ...newVersionRow(websiteId, number, 'refinement', message, bundle, principal.userId), preview_expires_at: expiresAt }
      await this.insertVersionRows(trx, row, bundle)
      if (promote) await repo.setCurrentVersion(trx, websiteId, row.id, row.created_at)
      else await repo.markUpdated(trx, websiteId, row.created_at)
      await alsoRecord?.(trx, row.id)
      const pageUrl = pageUrlFor(config, site.slug)
      const previewUrl = pageUrlFor(config, site.slug, number)
      await webhookEvents.emit(trx, websiteId, 'version.published', { versionId: row.id, version: number, isCurrent: promote, pageUrl, previewUrl })
      if (promote) await webhookEvents.emit(trx, websiteId, 'version.promoted', { versionId: row.id, version: number, pageUrl })
      return { version: row, rateLimit }
    })
  }

  /** The rows of a version: its new blobs, the version, its files. */
  private async insertVersionRows(trx: Executor, row: VersionRow, bundle: StoredBundle): Promise<void> {
    const { repo, blobRows } = this.options
    await blobRows.insertMissing(trx, bundle.newBlobs)
    await repo.insertVersion(trx, row)
    await repo.insertVersionFiles(
      trx,
      bundle.files.map((f) => ({ version_id: row.id, path: f.path, hash: f.hash, size: f.size, content_type: f.contentType })),
    )
    await repo.insertVersionForms(trx, row.id, bundle.forms)
    await repo.insertVersionWarnings(trx, row.id, bundle.warnings)
  }
}

function newVersionRow(
  websiteId: string,
  number: number,
  kind: VersionRow['kind'],
  instruction: string | null,
  bundle: StoredBundle,
  userId: string,
): VersionRow {
  const kb = (bundle.totalBytes / 1024).toFixed(1)
  return {
    id: newId('job'),
    website_id: websiteId,
    number,
    kind,
    status: 'ready',
    instruction,
    current_phase: 'published',
    progress_message: `Published ${bundle.files.length} file${bundle.files.length === 1 ? '' : 's'} (${kb} KiB).`,
    attempt: 1,
    bytes: bundle.totalBytes,
    created_by: userId,
    created_at: nowIso(),
    preview_expires_at: null,
  }
}

/** A preview's expiry as stored (null: none), for a version that does not go live; BAD_REQUEST otherwise. */
function previewExpiryOf(expiresAt: string | undefined, promote: boolean, now: Date): string | null {
  if (expiresAt === undefined) return null
  if (promote) {
    const why = 'is only for a version that does not go live (promote: false): the live version never expires'
    throw new AppError('BAD_REQUEST', `expiresAt ${why}.`, { fields: { expiresAt: why } })
  }
  return storedExpiry(expiresAt, now)
}

/** Paths for a message: the first few, then how many more. */
function clippedList(paths: string[], shown = 10): string {
  const listed = paths.slice(0, shown).join(', ')
  return paths.length > shown ? `${listed} and ${paths.length - shown} more` : listed
}

/** What a publish result says of the bundle: the site check's warnings (an empty list when it found nothing), and its forms when it declares some. */
const warningsOf = (bundle: StoredBundle) => ({
  warnings: bundle.warnings,
  ...(bundle.forms.length > 0 ? { forms: bundle.forms } : {}),
})
