import type { Principal } from '../auth/tokens.service.ts'
import type { BlobsRepository } from '../blobs/blobs.repository.ts'
import type { Config } from '../config.ts'
import { AppError, notFound, validationFailed } from '../core/errors.ts'
import { newId, nowIso, randomBase62 } from '../core/ids.ts'
import { WEBSITE_LIST_LIMIT } from '../core/limits.ts'
import { firstFreeSlug, normalizeSlug, pageUrlFor, RESERVED_SLUGS, SLUG_MAX, slugBase, slugProblem } from '../core/site-address.ts'
import { isUniqueViolation } from '../db/connect.ts'
import type { VersionRow } from '../db/types.ts'
import type { PublishPipeline, StoredBundle } from '../publishing/publish-pipeline.ts'
import type { SiteEvents } from '../serving/site-events.ts'
import type { PublishRateLimiter, RateLimitState } from './publish-rate-limit.ts'
import type { Executor, VisibleWebsite, WebsitesRepository } from './websites.repository.ts'
import type {
  Job,
  PublishVersionRequest,
  PublishVersionResult,
  PublishWebsiteRequest,
  PublishWebsiteResult,
  SlugSuggestion,
  Version,
  Website,
  WebsiteList,
} from './websites.schemas.ts'
import { jobView, livePageUrl, versionView, websiteSummaryView } from './websites.views.ts'

/** The names of a website's content collections: a publish may not add files where they serve entries. */
export interface CollectionNames {
  namesOf(websiteId: string): Promise<string[]>
}

export interface WebsitesServiceOptions {
  config: Config
  repo: WebsitesRepository
  blobRows: BlobsRepository
  pipeline: PublishPipeline
  rateLimiter: PublishRateLimiter
  /** Told whenever what a slug serves changes, so every cache (here and on other instances) drops it. */
  siteEvents: SiteEvents
  collections: CollectionNames
}

export interface Published<T> {
  result: T
  rateLimit: RateLimitState
}

const DERIVED_SLUG_ATTEMPTS = 5
/** Derived-slug collisions with concurrent creates after which a random suffix is used instead. */
const SEQUENTIAL_SLUG_ATTEMPTS = 2

export class WebsitesService {
  private readonly config: Config
  private readonly repo: WebsitesRepository
  private readonly blobRows: BlobsRepository
  private readonly pipeline: PublishPipeline
  private readonly rateLimiter: PublishRateLimiter
  private readonly siteEvents: SiteEvents
  private readonly collections: CollectionNames

  constructor(options: WebsitesServiceOptions) {
    this.config = options.config
    this.repo = options.repo
    this.blobRows = options.blobRows
    this.pipeline = options.pipeline
    this.rateLimiter = options.rateLimiter
    this.siteEvents = options.siteEvents
    this.collections = options.collections
  }

  async list(principal: Principal): Promise<WebsiteList> {
    const [rows, count] = await Promise.all([this.repo.listVisible(principal.userId, WEBSITE_LIST_LIMIT), this.repo.countOwned(principal.userId)])
    const items = rows.map((row) => websiteSummaryView(this.config, row))
    return { items, websites: items, websiteLimits: { count, max: this.config.maxWebsites, canCreate: count < this.config.maxWebsites } }
  }

  async create(principal: Principal, input: PublishWebsiteRequest): Promise<Published<PublishWebsiteResult>> {
    await this.rateLimiter.take(principal.userId)
    await this.assertCanCreate(principal.userId)
    if (input.slug !== undefined) await this.assertSlugClaimable(input.slug)
    // A new site has no collections yet: no path is reserved.
    const bundle = await this.pipeline.store(input.files, { userId: principal.userId, collectionNames: [] })
    const { slug, websiteId, version, rateLimit } = await this.recorded(bundle, this.insertWithFreeSlug(principal, input, bundle))
    await this.siteEvents.siteChanged(slug)
    const result = { websiteId, jobId: version.id, version: 1, slug, pageUrl: pageUrlFor(this.config, slug), bytesWritten: bundle.totalBytes }
    return { result, rateLimit }
  }

  /** Inserts the website under its slug; a derived slug that a concurrent create took is derived again. */
  private async insertWithFreeSlug(principal: Principal, input: PublishWebsiteRequest, bundle: StoredBundle) {
    for (let attempt = 1; ; attempt++) {
      const derivedFrom = input.name ?? input.category
      const slug = input.slug ?? (attempt <= SEQUENTIAL_SLUG_ATTEMPTS ? await this.freeSlugFor(derivedFrom) : randomSlugVariant(slugBase(derivedFrom)))
      try {
        return { slug, ...(await this.insertWebsite(principal, input, slug, bundle)) }
      } catch (error) {
        if (!isUniqueViolation(error)) throw error
        // Someone claimed the slug between our check and our insert.
        if (input.slug !== undefined) throw await this.slugTakenError(input.slug)
        if (attempt >= DERIVED_SLUG_ATTEMPTS) throw error
      }
    }
  }

  async get(principal: Principal, websiteId: string): Promise<Website> {
    const site = await this.requireVisible(principal, websiteId)
    const versions = await this.versionsOf(site)
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
      passwordProtected: false,
      versions: versions.views,
      createdAt: site.created_at,
      updatedAt: site.updated_at,
    }
  }

  async listVersions(principal: Principal, websiteId: string): Promise<{ versions: Version[] }> {
    const site = await this.requireVisible(principal, websiteId)
    return { versions: (await this.versionsOf(site)).views }
  }

  async publishVersion(principal: Principal, websiteId: string, input: PublishVersionRequest): Promise<Published<PublishVersionResult>> {
    const site = await this.requireVisible(principal, websiteId)
    await this.rateLimiter.take(principal.userId)
    const bundle = await this.pipeline.store(input.files, { userId: principal.userId, collectionNames: await this.collections.namesOf(site.id) })
    const promote = input.promote ?? true
    const { version, rateLimit } = await this.recorded(bundle, this.insertVersion(principal, site.id, input.message ?? null, promote, bundle))
    // Also when not promoted: a preview host probed before this version existed is remembered as unknown.
    await this.siteEvents.siteChanged(site.slug)
    const result = {
      websiteId: site.id,
      jobId: version.id,
      version: version.number,
      isCurrent: promote,
      pageUrl: pageUrlFor(this.config, site.slug),
      previewUrl: pageUrlFor(this.config, site.slug, version.number),
      bytesWritten: bundle.totalBytes,
    }
    return { result, rateLimit }
  }

  /** Makes a stored version the live one: publish-time review and instant rollback alike. */
  async promote(principal: Principal, websiteId: string, versionId: string): Promise<Version> {
    const site = await this.requireVisible(principal, websiteId)
    const version = await this.repo.findVersion(site.id, versionId)
    if (!version) throw notFound('Version')
    if (version.status !== 'ready') throw new AppError('VALIDATION_FAILED', 'Only a ready version can be promoted.', { fields: { versionId: 'is not ready' } })
    await this.repo.transaction((trx) => this.repo.setCurrentVersion(trx, site.id, version.id, nowIso()))
    await this.siteEvents.siteChanged(site.slug)
    return versionView(this.config, site.slug, version, await this.repo.filesOf([version.id]), version.id)
  }

  async getJob(principal: Principal, jobId: string): Promise<Job> {
    const job = await this.repo.findVisibleJob(principal.userId, jobId)
    if (!job) throw notFound('Job')
    return jobView(this.config, job)
  }

  async suggestSlug(value: string): Promise<SlugSuggestion> {
    const slug = normalizeSlug(value)
    const problem = slug === '' ? 'has no letters or digits to make a slug from' : slugProblem(slug)
    const reserved = RESERVED_SLUGS.has(slug)
    const available = !problem && !reserved && !(await this.repo.slugExists(slug))
    const suggestion = available ? slug : await this.freeSlugFor(value)
    let message: string | undefined
    if (problem) message = `"${slug || value}" is not a valid slug: it ${problem}. "${suggestion}" is available.`
    else if (reserved) message = `"${slug}" is reserved for the service itself. "${suggestion}" is available.`
    else if (!available) message = `"${slug}" is already taken. "${suggestion}" is available.`
    return { slug, valid: !problem, available, suggestion, ...(message ? { message } : {}), pageUrl: pageUrlFor(this.config, suggestion) }
  }

  /** Makes a user an editor of a site (administration; no visibility check). */
  async share(websiteId: string, user: { id: string; email: string }, role: string): Promise<void> {
    if (role !== 'editor') throw validationFailed({ role: 'must be "editor"' })
    const site = await this.repo.findById(websiteId)
    if (!site || site.status === 'deleted') throw notFound(`Website ${websiteId}`)
    if (site.owner_id === user.id) throw validationFailed({ email: `${user.email} already owns this website` })
    await this.repo.upsertMember(site.id, user.id, 'editor', nowIso())
  }

  private async requireVisible(principal: Principal, websiteId: string): Promise<VisibleWebsite> {
    const site = await this.repo.findVisible(principal.userId, websiteId)
    if (!site) throw notFound('Website')
    return site
  }

  private async versionsOf(site: VisibleWebsite) {
    const rows = await this.repo.listVersions(site.id)
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

  private async assertSlugClaimable(slug: string): Promise<void> {
    const problem = slugProblem(slug)
    if (problem) throw validationFailed({ slug: problem })
    if (RESERVED_SLUGS.has(slug) || (await this.repo.slugExists(slug))) throw await this.slugTakenError(slug)
  }

  private async slugTakenError(slug: string): Promise<AppError> {
    const suggestion = await this.freeSlugFor(slug)
    const why = RESERVED_SLUGS.has(slug) ? 'is reserved' : 'is already taken'
    return new AppError('SLUG_TAKEN', `The slug "${slug}" ${why}. "${suggestion}" is available.`, {
      fields: { slug: `${why}; try "${suggestion}"` },
    })
  }

  private async freeSlugFor(text: string): Promise<string> {
    const base = slugBase(text)
    return firstFreeSlug(base, await this.repo.slugsStartingWith(base.slice(0, 40)))
  }

  /**
   * Waits for the metadata transaction that records a stored bundle, then tells the pipeline how
   * it went: a failed one has its new blobs removed, a committed one has them checked.
   */
  private async recorded<T>(bundle: StoredBundle, recording: Promise<T>): Promise<T> {
    let result: T
    try {
      result = await recording
    } catch (error) {
      await this.pipeline.abandon(bundle)
      throw error
    }
    await this.pipeline.confirm(bundle)
    return result
  }

  private insertVersion(principal: Principal, websiteId: string, message: string | null, promote: boolean, bundle: StoredBundle) {
    return this.repo.transaction(async (trx) => {
      const rateLimit = await this.rateLimiter.takeInTransaction(trx, principal.userId)
      const number = await this.repo.nextVersionNumber(trx, websiteId)
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
      const number = await this.repo.nextVersionNumber(trx, websiteId)
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

/** `base-x7k2q9`: a derived slug that no concurrent create will pick too. */
function randomSlugVariant(base: string): string {
  const suffix = `-${randomBase62(6).toLowerCase()}`
  return base.slice(0, SLUG_MAX - suffix.length).replace(/-+$/, '') + suffix
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
