import type { Principal } from '../core/principal.ts'
import type { BlobStore } from '../blobs/blob-store.ts'
import { readBlobFiles, restoreClaimed } from '../blobs/blob-removal.ts'
import type { BlobsRepository } from '../blobs/blobs.repository.ts'
import type { Config } from '../config.ts'
import { AppError, notFound, type RateLimitState } from '../core/errors.ts'
import { newId, nowIso } from '../core/ids.ts'
import { VERSION_PAGE_DEFAULT, VERSION_PAGE_MAX, WEBSITE_LIST_LIMIT } from '../core/limits.ts'
import { pageUrlFor } from '../core/site-address.ts'
import type { VisibleWebsite, WebsiteAccess } from '../db/access.ts'
import { isUniqueViolation } from '../db/connect.ts'
import type { VersionRow } from '../db/types.ts'
import { quoted } from '../core/text.ts'
import type { PublishPipeline, StoredBundle } from '../publishing/publish-pipeline.ts'
import { collectionOwning, reservedPathsOf } from '../publishing/reserved-paths.ts'
import type { SiteEvents } from '../serving/site-events.ts'
import type { PurgeHook } from './purge-hook.ts'
import type { PublishRateLimiter } from './publish-rate-limit.ts'
import { randomSlugVariant, SlugClaims } from './slug-claims.ts'
import type { Executor, WebsitesRepository } from './websites.repository.ts'
import type {
  Job,
  PublishVersionRequest,
  PublishVersionResult,
  PublishWebsiteRequest,
  PublishWebsiteResult,
  SlugSuggestion,
  Version,
  VersionPage,
  VersionPageQuery,
  Website,
  WebsiteList,
  WebsiteSummary,
  WebsiteWithVersionPage,
} from './websites.schemas.ts'
import { decodeVersionCursor, encodeVersionCursor, jobView, livePageUrl, versionView, websiteSummaryView } from './websites.views.ts'

/** The names of a website's content collections: a publish may not add files where they serve entries. */
export interface CollectionNames {
  namesOf(websiteId: string): Promise<string[]>
}

export interface WebsitesServiceOptions {
  config: Config
  access: WebsiteAccess
  repo: WebsitesRepository
  /** Where a deleted website's blobs are removed from (publishes write through the pipeline). */
  blobs: BlobStore
  blobRows: BlobsRepository
  pipeline: PublishPipeline
  rateLimiter: PublishRateLimiter
  /** Told whenever what a slug serves changes, so every cache (here and on other instances) drops it. */
  siteEvents: SiteEvents
  /** Told when a site's live version changes or it is deleted, for a CDN to purge (PLINTH_PURGE_URL). */
  purge: PurgeHook
  /** Told of each version published and its decoded bytes, whichever surface asked (the metrics). */
  onPublished: (bytes: number) => void
  collections: CollectionNames
}

export interface Published<T> {
  result: T
  rateLimit: RateLimitState
}

/** A version as the Version view shows it, with who published it. */
export type PublishedVersion = Version & { publishedBy: { name: string | null; email: string } }

const DERIVED_SLUG_ATTEMPTS = 5
/** A version number given where a version id is expected (promote). */
const VERSION_NUMBER = /^[1-9][0-9]{0,8}$/
/** Derived-slug collisions with concurrent creates after which a random suffix is used instead. */
const SEQUENTIAL_SLUG_ATTEMPTS = 2
/** Blobs of a deleted website whose rows are deleted in one statement. */
const BLOB_CHUNK = 500

export class WebsitesService {
  private readonly config: Config
  private readonly access: WebsiteAccess
  private readonly repo: WebsitesRepository
  private readonly blobs: BlobStore
  private readonly blobRows: BlobsRepository
  private readonly pipeline: PublishPipeline
  private readonly rateLimiter: PublishRateLimiter
  private readonly siteEvents: SiteEvents
  private readonly purge: PurgeHook
  private readonly onPublished: (bytes: number) => void
  private readonly collections: CollectionNames
  private readonly slugs: SlugClaims

  constructor(options: WebsitesServiceOptions) {
    this.config = options.config
    this.access = options.access
    this.repo = options.repo
    this.blobs = options.blobs
    this.blobRows = options.blobRows
    this.pipeline = options.pipeline
    this.rateLimiter = options.rateLimiter
    this.siteEvents = options.siteEvents
    this.purge = options.purge
    this.onPublished = options.onPublished
    this.collections = options.collections
    this.slugs = new SlugClaims(options.repo)
  }

  async list(principal: Principal): Promise<WebsiteList> {
    return (await this.listing(principal)).list
  }

  /** The list, each site with the number of its live version (the dashboard's). */
  async listWithLiveVersions(principal: Principal): Promise<WebsiteList & { items: Array<WebsiteSummary & { liveVersion: number | null }> }> {
    const { rows, list } = await this.listing(principal)
    return { ...list, items: list.items.map((item, i) => ({ ...item, liveVersion: rows[i].live_version })) }
  }

  private async listing(principal: Principal) {
    const [rows, count] = await Promise.all([this.repo.listVisible(principal.userId, WEBSITE_LIST_LIMIT), this.repo.countOwned(principal.userId)])
    const items = rows.map((row) => websiteSummaryView(this.config, row))
    const list: WebsiteList = { items, websites: items, websiteLimits: { count, max: this.config.maxWebsites, canCreate: count < this.config.maxWebsites } }
    return { rows, list }
  }

  async create(principal: Principal, input: PublishWebsiteRequest): Promise<Published<PublishWebsiteResult>> {
    await this.rateLimiter.take(principal.userId)
    await this.assertCanCreate(principal.userId)
    if (input.slug !== undefined) await this.slugs.assertClaimable(input.slug)
    // A new site has no collections yet: no path is reserved.
    const bundle = await this.pipeline.store(input.files, { userId: principal.userId, collectionNames: [] })
    const { slug, websiteId, version, rateLimit } = await this.recorded(bundle, this.insertWithFreeSlug(principal, input, bundle), (inserted) => inserted.slug)
    await this.siteEvents.siteChanged(slug)
    this.onPublished(bundle.totalBytes)
    // The slug may have served a deleted site before.
    this.purge.siteChanged('promote', { id: websiteId, slug })
    const result = {
      websiteId,
      jobId: version.id,
      version: 1,
      slug,
      pageUrl: pageUrlFor(this.config, slug),
      bytesWritten: bundle.totalBytes,
      ...warningsOf(bundle),
    }
    return { result, rateLimit }
  }

  /** Inserts the website under its slug; a derived slug that a concurrent create took is derived again. */
  private async insertWithFreeSlug(principal: Principal, input: PublishWebsiteRequest, bundle: StoredBundle) {
    for (let attempt = 1; ; attempt++) {
      const derivedFrom = input.name ?? input.category
      const slug = input.slug ?? (attempt <= SEQUENTIAL_SLUG_ATTEMPTS ? await this.slugs.freeSlugFor(derivedFrom) : randomSlugVariant(derivedFrom))
      try {
        return { slug, ...(await this.insertWebsite(principal, input, slug, bundle)) }
      } catch (error) {
        if (!isUniqueViolation(error)) throw error
        // Someone claimed the slug between our check and our insert.
        if (input.slug !== undefined) throw await this.slugs.takenError(input.slug)
        if (attempt >= DERIVED_SLUG_ATTEMPTS) throw error
      }
    }
  }

  async get(principal: Principal, websiteId: string): Promise<Website> {
    const site = await this.access.requireSite(principal, websiteId, 'see')
    return this.websiteView(site, await this.versionsOf(site))
  }

  /** A website with one page of its versions, newest first, instead of every version. */
  async getWithVersionPage(principal: Principal, websiteId: string, query: VersionPageQuery): Promise<WebsiteWithVersionPage> {
    const site = await this.access.requireSite(principal, websiteId, 'see')
    const page = await this.versionRowsPage(site.id, query)
    // currentVersion describes the served version even when it is on another page.
    const currentId = site.current_version_id
    const current = currentId && !page.rows.some((row) => row.id === currentId) ? await this.repo.findVersion(site.id, currentId) : undefined
    const versions = await this.versionsOf(site, current ? [...page.rows, current] : page.rows)
    return { ...this.websiteView(site, versions), versions: versions.views.slice(0, page.rows.length), nextCursor: page.nextCursor }
  }

  private websiteView(site: VisibleWebsite, versions: { rows: VersionRow[]; views: Version[] }): Website {
    const currentRow = versions.rows.find((row) => row.id === site.current_version_id)
    const current = versions.views.find((v) => v.isCurrent)
    return {
      id: site.id,
      name: site.name,
      slug: site.slug,
      status: site.status,
      role: site.role,
      ...(site.role === 'editor' ? { ownerName: site.owner_name } : {}),
      category: site.category,
      description: site.description,
      ...livePageUrl(this.config, site),
      ...(site.current_version_id ? { currentVersionId: site.current_version_id } : {}),
      currentVersion: current && currentRow ? { ...current, websiteId: site.id, bytes: Number(currentRow.bytes) } : null,
      freeChangesUsed: Math.max(0, site.last_version_number - 1),
      freeChangesLimit: this.config.freeChangesLimit,
      passwordProtected: site.password_hash !== null,
      versions: versions.views,
      createdAt: site.created_at,
      updatedAt: site.updated_at,
    }
  }

  async listVersions(principal: Principal, websiteId: string): Promise<{ versions: Version[] }> {
    const site = await this.access.requireSite(principal, websiteId, 'see')
    return { versions: (await this.versionsOf(site)).views }
  }

  /** One page of a website's versions, newest first; nextCursor gives the next, older page. */
  async listVersionsPage(principal: Principal, websiteId: string, query: VersionPageQuery): Promise<VersionPage> {
    const site = await this.access.requireSite(principal, websiteId, 'see')
    const page = await this.versionRowsPage(site.id, query)
    return { versions: (await this.versionsOf(site, page.rows)).views, nextCursor: page.nextCursor }
  }

  /** Every version of a website, newest first, each with who published it (the dashboard's history). */
  async history(principal: Principal, websiteId: string): Promise<PublishedVersion[]> {
    const site = await this.access.requireSite(principal, websiteId, 'see')
    const rows = await this.repo.listVersionsWithPublisher(site.id)
    const { views } = await this.versionsOf(site, rows)
    return views.map((view, i) => ({ ...view, publishedBy: { name: rows[i]!.publisher_name, email: rows[i]!.publisher_email } }))
  }

  private async versionRowsPage(websiteId: string, query: VersionPageQuery): Promise<{ rows: VersionRow[]; nextCursor: string | null }> {
    const limit = Math.min(query.limit ?? VERSION_PAGE_DEFAULT, VERSION_PAGE_MAX)
    const before = query.cursor === undefined ? undefined : decodeVersionCursor(query.cursor)
    const rows = await this.repo.versionsPage(websiteId, limit + 1, before)
    const page = rows.slice(0, limit)
    const last = page.at(-1)
    return { rows: page, nextCursor: rows.length > limit && last ? encodeVersionCursor(last.number) : null }
  }

  async publishVersion(principal: Principal, websiteId: string, input: PublishVersionRequest): Promise<Published<PublishVersionResult>> {
    const site = await this.access.requireSite(principal, websiteId, 'edit')
    await this.rateLimiter.take(principal.userId)
    const bundle = await this.pipeline.store(input.files, { userId: principal.userId, collectionNames: await this.collections.namesOf(site.id) })
    const promote = input.promote ?? true
    const { version, rateLimit } = await this.recorded(bundle, this.insertVersion(principal, site.id, input.message ?? null, promote, bundle), () => site.slug)
    // Also when not promoted: a preview host probed before this version existed is remembered as unknown.
    await this.siteEvents.siteChanged(site.slug)
    this.onPublished(bundle.totalBytes)
    if (promote) this.purge.siteChanged('promote', site)
    const result = {
      websiteId: site.id,
      jobId: version.id,
      version: version.number,
      isCurrent: promote,
      pageUrl: pageUrlFor(this.config, site.slug),
      previewUrl: pageUrlFor(this.config, site.slug, version.number),
      bytesWritten: bundle.totalBytes,
      ...warningsOf(bundle),
    }
    return { result, rateLimit }
  }

  /**
   * Makes a stored version the live one: publish-time review and instant rollback alike.
   * `versionId` is a version id (job_...) or a version number.
   */
  async promote(principal: Principal, websiteId: string, versionId: string): Promise<Version> {
    const site = await this.access.requireSite(principal, websiteId, 'edit')
    const byNumber = VERSION_NUMBER.test(versionId)
    const version = byNumber ? await this.repo.findVersionByNumber(site.id, Number(versionId)) : await this.repo.findVersion(site.id, versionId)
    if (!version) {
      throw new AppError(
        'NOT_FOUND',
        byNumber
          ? `This website has no version ${versionId}.`
          : `Version ${quoted(versionId, 60)} not found: give a version id (job_...) or a version number of this website.`,
      )
    }
    if (version.status !== 'ready') throw new AppError('VALIDATION_FAILED', 'Only a ready version can be promoted.', { fields: { versionId: 'is not ready' } })
    const files = await this.repo.filesOf([version.id])
    await this.assertNoReservedPaths(site.id, version.number, files)
    await this.repo.transaction((trx) => this.repo.setCurrentVersion(trx, site.id, version.id, nowIso()))
    await this.siteEvents.siteChanged(site.slug)
    this.purge.siteChanged('promote', site)
    return versionView(this.config, site.slug, version, files, version.id)
  }

  /**
   * A version stored before a collection was created may hold files where that collection now
   * serves its entries, listing or feeds: going live again, they would shadow them.
   */
  private async assertNoReservedPaths(websiteId: string, number: number, files: Array<{ path: string }>): Promise<void> {
    const names = await this.collections.namesOf(websiteId)
    if (names.length === 0) return
    const clashes = new Map<string, string[]>()
    for (const { path } of files) {
      const name = collectionOwning(path, names)
      if (name !== null) clashes.set(name, [...(clashes.get(name) ?? []), path])
    }
    if (clashes.size === 0) return
    const described = [...clashes].map(([name, paths]) => {
      const shown = paths.slice(0, 10).map((p) => quoted(p, 80))
      const more = paths.length > 10 ? `, and ${paths.length - 10} more` : ''
      return `${shown.join(', ')}${more} (where the collection "${name}" serves ${reservedPathsOf(name).join(', ')})`
    })
    throw new AppError(
      'PROMOTE_CONFLICT',
      `Version ${number} cannot go live: it has files where a collection serves its entries, listing or feeds: ${described.join('; ')}. Publish a version without these files instead.`,
      { fields: { versionId: `has files where ${[...clashes.keys()].map((name) => `the collection "${name}"`).join(' and ')} serves entries` } },
    )
  }

  async getJob(principal: Principal, jobId: string): Promise<Job> {
    const job = await this.repo.findVisibleJob(principal.userId, jobId)
    if (!job) throw notFound('Job')
    return jobView(this.config, job)
  }

  async suggestSlug(value: string): Promise<SlugSuggestion> {
    const verdict = await this.slugs.verdict(value)
    return { ...verdict, pageUrl: pageUrlFor(this.config, verdict.suggestion) }
  }

  /**
   * Deletes a website for good (owner only): the site and everything that hangs off it go in one
   * transaction, so its slug is free at once; every instance then stops serving it, and the blobs
   * that only it held are removed.
   */
  async delete(principal: Principal, websiteId: string): Promise<void> {
    const site = await this.access.requireSite(principal, websiteId, 'own', 'delete it')
    const hashes = await this.repo.transaction(async (trx) => {
      // Locks the site's row first, as a publish does (nextVersionNumber): a publish to it in
      // flight commits before the blobs are listed, and a later one finds no site.
      await this.repo.touchWebsite(trx, site.id, nowIso())
      const held = await this.repo.blobHashesOf(trx, site.id)
      if (!(await this.repo.deleteWebsite(trx, site.id))) throw notFound('Website')
      return held
    })
    await this.siteEvents.siteChanged(site.slug)
    this.purge.siteChanged('delete', site)
    await this.removeUnreferencedBlobs(hashes)
  }

  /**
   * Removes the blobs among `hashes` that nothing refers to any more: their rows, then their files.
   * Doing it at once, rather than leaving it to the sweep and its grace period, is safe with
   * publishes and uploads in flight (see blobs/blob-sweep.ts and docs/architecture.md, "Storage"):
   * - A row that a version file, library image or upload refers to is never deleted, and one cannot
   *   be referred to once deleted (foreign keys): a publish that counted on it fails instead of
   *   serving a missing file.
   * - Bytes stored again after their row went get a new row, written with the bytes: the files of
   *   a hash are removed only if no row or reference has appeared when they are; should one appear
   *   while they go, they are put back (blobs/blob-removal.ts), and a publish committing later
   *   finds them gone in its confirm() and writes them again.
   */
  private async removeUnreferencedBlobs(hashes: string[]): Promise<void> {
    for (let start = 0; start < hashes.length; start += BLOB_CHUNK) {
      for (const hash of await this.blobRows.deleteUnreferenced(hashes.slice(start, start + BLOB_CHUNK))) {
        if ((await this.blobRows.referencedHashes([hash])).size > 0) continue
        // Read first, to put back should a publish claim the bytes while they go (blobs/blob-removal.ts).
        const saved = await readBlobFiles(this.blobs, hash)
        await this.blobs.delete(hash)
        await restoreClaimed(this.blobs, this.blobRows, new Map([[hash, saved]]))
      }
    }
  }

  private async versionsOf(site: VisibleWebsite, given?: VersionRow[]) {
    const rows = given ?? (await this.repo.listVersions(site.id))
    const files = await this.repo.filesOf(rows.map((r) => r.id))
    const byVersion = new Map<string, typeof files>()
    for (const file of files) {
      const list = byVersion.get(file.version_id)
      if (list) list.push(file)
      else byVersion.set(file.version_id, [file])
    }
    const views = rows.map((row) => versionView(this.config, site.slug, row, byVersion.get(row.id) ?? [], site.current_version_id))
    return { rows, views }
  }

  private async assertCanCreate(userId: string, db?: Executor): Promise<void> {
    const count = await this.repo.countOwned(userId, db)
    if (count >= this.config.maxWebsites) {
      throw new AppError('WEBSITE_LIMIT_REACHED', `This account already has ${count} websites, the most it may have (${this.config.maxWebsites}).`)
    }
  }

  /**
   * Waits for the metadata transaction that records a stored bundle, then tells the pipeline how
   * it went: a failed one has its new blobs removed, a committed one has them checked, and the
   * serving caches of its site are told again once the new blobs' compressed variants are made.
   */
  private async recorded<T>(bundle: StoredBundle, recording: Promise<T>, slugOf: (result: T) => string): Promise<T> {
    let result: T
    try {
      result = await recording
    } catch (error) {
      await this.pipeline.abandon(bundle)
      throw error
    }
    const slug = slugOf(result)
    await this.pipeline.confirm(bundle, () => {
      this.siteEvents.siteChanged(slug).catch(() => {})
    })
    return result
  }

  private insertVersion(principal: Principal, websiteId: string, message: string | null, promote: boolean, bundle: StoredBundle) {
    return this.repo.transaction(async (trx) => {
      const rateLimit = await this.rateLimiter.takeInTransaction(trx, principal.userId)
      const number = await this.repo.nextVersionNumber(trx, websiteId)
      // Deleted since the publish found it.
      if (number === undefined) throw notFound('Website')
      const row = versionRow(websiteId, number, 'refinement', message, bundle, principal.userId)
      await this.writeVersion(trx, row, bundle)
      if (promote) await this.repo.setCurrentVersion(trx, websiteId, row.id, row.created_at)
      else await this.repo.touchWebsite(trx, websiteId, row.created_at)
      return { version: row, rateLimit }
    })
  }

  private insertWebsite(principal: Principal, input: PublishWebsiteRequest, slug: string, bundle: StoredBundle) {
    return this.repo.transaction(async (trx) => {
      // Checked again with the user's row locked, so concurrent creates cannot overshoot the limits.
      const rateLimit = await this.rateLimiter.takeInTransaction(trx, principal.userId)
      await this.assertCanCreate(principal.userId, trx)
      const at = nowIso()
      const websiteId = newId('web')
      await this.repo.insertWebsite(trx, {
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
      const number = (await this.repo.nextVersionNumber(trx, websiteId))!
      const version = versionRow(websiteId, number, 'initial', null, bundle, principal.userId)
      await this.writeVersion(trx, version, bundle)
      await this.repo.setCurrentVersion(trx, websiteId, version.id, at)
      return { websiteId, version, rateLimit }
    })
  }

  private async writeVersion(trx: Parameters<WebsitesRepository['insertVersion']>[0], row: VersionRow, bundle: StoredBundle): Promise<void> {
    await this.blobRows.insertMissing(trx, bundle.newBlobs)
    await this.repo.insertVersion(trx, row)
    await this.repo.insertVersionFiles(
      trx,
      bundle.files.map((f) => ({ version_id: row.id, path: f.path, hash: f.hash, size: f.size, content_type: f.contentType })),
    )
  }
}

function versionRow(websiteId: string, number: number, kind: VersionRow['kind'], instruction: string | null, bundle: StoredBundle, userId: string): VersionRow {
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
  }
}

/** A publish result's warnings: present only when there is something to say. */
const warningsOf = (bundle: StoredBundle) => (bundle.warnings.length > 0 ? { warnings: bundle.warnings } : {})
