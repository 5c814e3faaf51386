/**
 * Drafts: a site's files, started from one of its versions (the base) and changed file by file
 * (draft-files.ts) before they are published as the site's next version, in one ordinary publish
 * of the draft's files as the stored blobs they are. Owners and editors of a site work on its drafts; to anyone else
 * a draft does not exist. A site has at most DRAFTS_PER_SITE open drafts. A draft nobody writes to
 * expires after the configured days: from then on it is gone for every caller, and the sweep (at
 * start and hourly, on a server) removes it and the blobs only it held.
 */
import type { Config } from '../config.ts'
import { storedExpiry } from '../core/future-time.ts'
import { AppError, notFound, type RateLimitState } from '../core/errors.ts'
import { newDraftId } from '../core/ids.ts'
import { DRAFT_SWEEP_INTERVAL_MS, DRAFTS_PER_SITE } from '../core/limits.ts'
import type { Principal } from '../core/principal.ts'
import { draftLabel, draftUrlFor } from '../core/site-address.ts'
import type { VisibleWebsite } from '../db/access.ts'
import type { DraftFileRow, VersionRow } from '../db/types.ts'
import { compareFiles, type SiteFile } from '../editing/file-changes.ts'
import type { StoredFileRef } from '../editing/file-views.ts'
import type { StoredFileInput } from '../publishing/authoring-rules.ts'
import type { Logger } from '../log.ts'
import { requireVersion } from '../websites/version-refs.ts'
import type { WebsitePublishing } from '../websites/website-publishing.ts'
import type { WebsitesRepository } from '../websites/websites.repository.ts'
import type { PublishVersionResult } from '../websites/websites.schemas.ts'
import type { DraftRecords } from './draft-records.ts'
import type { DraftWithBase } from './drafts.repository.ts'
import type { CreateDraftRequest, Draft, DraftFile, DraftList, DraftSummary, PublishDraftRequest } from './drafts.schemas.ts'

/** Expired drafts removed in one transaction of the sweep. */
const SWEEP_BATCH = 100

export interface DraftsServiceOptions {
  config: Pick<Config, 'siteScheme' | 'siteDomain'>
  records: DraftRecords
  /** The site's versions: a draft's base, its files, and the site's row lock. */
  versions: WebsitesRepository
  publishing: WebsitePublishing
  log: Logger
}

/** A draft's files as other operations take them (comparing, serving, screenshots). */
export interface DraftManifest {
  draftId: string
  websiteId: string
  slug: string
  baseVersionId: string
  baseVersion: number
  files: StoredFileRef[]
}

export class DraftsService {
  private sweeps?: NodeJS.Timeout

  constructor(private readonly options: DraftsServiceOptions) {}

  /** A new draft of the site, with the files of `baseVersion` (the live version by default). */
  async create(principal: Principal, websiteId: string, input: CreateDraftRequest = {}): Promise<Draft> {
    const { records, versions } = this.options
    const { access, repo } = records.options
    const site = await access.requireSite(principal, websiteId, 'edit')
    const base = input.baseVersion === undefined ? await this.liveVersion(site) : await requireVersion(versions, site.id, input.baseVersion)
    const now = records.nowIso()
    const expiresBy = storedExpiry(input.expiresAt, records.options.now())
    const draft = {
      id: newDraftId(),
      website_id: site.id,
      base_version_id: base.id,
      created_by: principal.userId,
      created_at: now,
      updated_at: now,
      expires_at: records.expiryFrom(now, expiresBy),
      expires_by: expiresBy,
    }
    await repo.transaction(async (trx) => {
      // The site's row, locked as a publish locks it, counts its drafts one create at a time.
      await versions.lockWebsite(trx, site.id)
      const open = await repo.listOpen(site.id, now, trx)
      if (open.length >= DRAFTS_PER_SITE) {
        // Named here: an agent that lost its draft ids finds them in the refusal.
        const named = open.map((d) => `${d.id} (from version ${d.base_number}, last written ${d.updated_at})`).join(', ')
        throw new AppError(
          'DRAFT_LIMIT_REACHED',
          `This site already has ${open.length} open drafts, the most it may have (${DRAFTS_PER_SITE}): ${named}. Publish or discard one of them first.`,
        )
      }
      await repo.insertDraft(trx, draft)
      await repo.copyVersionFiles(trx, draft.id, base.id)
    })
    const files = await repo.filesOf(draft.id)
    await records.changed(draftLabel(site.slug, draft.id), [])
    return this.draftView(site, { ...draft, base_number: base.number }, files, files)
  }

  /** The site's open drafts, oldest first. */
  async list(principal: Principal, websiteId: string): Promise<DraftList> {
    const { access, repo } = this.options.records.options
    const site = await access.requireSite(principal, websiteId, 'edit')
    const drafts = await repo.listOpen(site.id, this.options.records.nowIso())
    return { items: drafts.map((draft) => this.summaryView(site, draft)) }
  }

  /** One draft with its files, each told apart from the base version's. */
  async get(principal: Principal, websiteId: string, draftId: string): Promise<Draft> {
    const { site, draft } = await this.options.records.require(principal, websiteId, draftId)
    const [files, baseFiles] = await Promise.all([this.options.records.options.repo.filesOf(draft.id), this.options.versions.filesOf([draft.base_version_id])])
    return this.draftView(site, draft, files, baseFiles)
  }

  /** A draft's files and base, for the operations that read drafts as they read versions. */
  async manifest(principal: Principal, websiteId: string, draftId: string): Promise<DraftManifest> {
    const { site, draft } = await this.options.records.require(principal, websiteId, draftId)
    const files = await this.options.records.options.repo.filesOf(draft.id)
    return {
      draftId: draft.id,
      websiteId: site.id,
      slug: site.slug,
      baseVersionId: draft.base_version_id,
      baseVersion: draft.base_number,
      files: files.map((file) => ({ path: file.path, hash: file.hash, size: Number(file.size), contentType: file.content_type })),
    }
  }

  /** Discards a draft and the blobs only it held. */
  /**
   * Sets when the draft expires at the latest (its preview answers 404 from then on): writes still
   * move its expiry on by PLINTH_DRAFT_TTL_DAYS, never past this. null: only that rule again.
   */
  async setExpiry(principal: Principal, websiteId: string, draftId: string, expiresAt: string | null): Promise<Draft> {
    const { records } = this.options
    const { site, draft } = await records.require(principal, websiteId, draftId)
    const now = records.nowIso()
    const by = storedExpiry(expiresAt, records.options.now())
    const { repo } = records.options
    // Not a write: the expiry still runs from the last one, read with the row locked so a write meanwhile is not undone.
    const set = await repo.transaction(async (trx) => {
      if (!(await repo.lock(trx, draft.id))) return false
      const current = await repo.findOpen(site.id, draft.id, now, trx)
      return current !== undefined && repo.setExpiry(trx, draft.id, now, records.expiryFrom(current.updated_at, by), by)
    })
    if (!set) throw notFound('Draft')
    await records.changed(draftLabel(site.slug, draft.id), [])
    return this.get(principal, websiteId, draftId)
  }

  async discard(principal: Principal, websiteId: string, draftId: string): Promise<void> {
    const { records } = this.options
    const { site, draft } = await records.require(principal, websiteId, draftId)
    const dropped = await records.options.repo.transaction(async (trx) => {
      if (!(await records.options.repo.lock(trx, draft.id))) throw notFound('Draft')
      return records.options.repo.deleteDrafts(trx, [draft.id])
    })
    await records.changed(draftLabel(site.slug, draft.id), dropped)
  }

  /**
   * Publishes the draft's files as the site's next version, on the draft's base (VERSION_CONFLICT
   * while a newer version exists, unless `overwrite`), checked as any bundle is; the draft is then
   * gone. A write that lands while the publish runs is kept: the draft then stays, based on the
   * version just published.
   */
  async publish(
    principal: Principal,
    websiteId: string,
    draftId: string,
    input: PublishDraftRequest = {},
  ): Promise<{ result: PublishVersionResult; rateLimit: RateLimitState }> {
    const { records, publishing } = this.options
    const { repo } = records.options
    const { site, draft } = await records.require(principal, websiteId, draftId)
    const files = await repo.filesOf(draft.id)
    const published = await publishing.publishVersionOf(
      principal,
      site,
      { files: files.map(storedFile), message: input.message, promote: input.promote, vendor: input.vendor },
      { number: draft.base_number, overwrite: input.overwrite ?? false },
      // In the version's own transaction, so the draft goes exactly when its version is recorded.
      async (trx, versionId) => {
        // Discarded or expired meanwhile: nothing is left to remove.
        if (!(await repo.lock(trx, draft.id))) return
        if (sameFiles(await repo.filesOf(draft.id, trx), files)) await repo.removeDrafts(trx, [draft.id])
        else await repo.setBase(trx, draft.id, versionId)
      },
    )
    // Every blob the draft held when it went is a file of the version just published: none is left unreferenced.
    await records.changed(draftLabel(site.slug, draft.id), [])
    // The draft's files were stored with their compressed variants left for now (DraftRecords.record).
    records.options.pipeline.makePendingVariants(
      files.map((file) => file.hash),
      () => {
        records.options.siteEvents.siteChanged(site.slug).catch(() => {})
      },
    )
    return published
  }

  /** Removes expired drafts and the blobs only they held; how many. */
  async sweepExpired(): Promise<number> {
    const { records } = this.options
    const { repo } = records.options
    let removed = 0
    for (;;) {
      const now = records.nowIso()
      const { gone, dropped } = await repo.transaction(async (trx) => {
        const expired = await repo.expired(trx, now, SWEEP_BATCH)
        return {
          gone: expired,
          dropped: await repo.deleteDrafts(
            trx,
            expired.map((draft) => draft.id),
          ),
        }
      })
      for (const draft of gone) await records.options.siteEvents.siteChanged(draftLabel(draft.slug, draft.id))
      await records.release(dropped)
      removed += gone.length
      if (gone.length < SWEEP_BATCH) return removed
    }
  }

  /** Sweeps now, then every DRAFT_SWEEP_INTERVAL_MS until close(). */
  async startSweeps(): Promise<void> {
    await this.sweepExpired()
    this.sweeps = setInterval(() => {
      this.sweepExpired().catch((error: unknown) => this.options.log.error({ err: error }, 'sweeping expired drafts failed'))
    }, DRAFT_SWEEP_INTERVAL_MS).unref()
  }

  /** Stops the periodic sweep. */
  close(): void {
    clearInterval(this.sweeps)
  }

  /** The site's live version (its newest when none is live). */
  private async liveVersion(site: VisibleWebsite): Promise<VersionRow> {
    const { versions } = this.options
    const version = site.current_version_id
      ? await versions.findVersion(site.id, site.current_version_id)
      : await versions.findVersionByNumber(site.id, site.last_version_number)
    if (!version) throw notFound('Version')
    return version
  }

  private summaryView(site: VisibleWebsite, draft: DraftWithBase): DraftSummary {
    return {
      draftId: draft.id,
      websiteId: site.id,
      baseVersion: draft.base_number,
      baseVersionId: draft.base_version_id,
      previewUrl: draftUrlFor(this.options.config, site.slug, draft.id),
      createdAt: draft.created_at,
      updatedAt: draft.updated_at,
      expiresAt: draft.expires_at,
    }
  }

  private draftView(site: VisibleWebsite, draft: DraftWithBase, files: DraftFileRow[], baseFiles: ReadonlyArray<SiteFile>): Draft {
    const changes = new Map(compareFiles(baseFiles.map(siteFile), files.map(siteFile)).map((change) => [change.path, change]))
    return {
      ...this.summaryView(site, draft),
      files: files.map((file): DraftFile => {
        const change = changes.get(file.path)
        return {
          path: file.path,
          size: Number(file.size),
          sha256: file.hash,
          contentType: file.content_type,
          change: change === undefined || change.status === 'removed' ? 'unchanged' : change.status,
          ...(change?.previousPath === undefined ? {} : { previousPath: change.previousPath }),
        }
      }),
    }
  }
}

const siteFile = (file: SiteFile): SiteFile => ({ path: file.path, hash: file.hash, size: Number(file.size) })

/**
 * A draft's file as its publish gives it: its stored blob, which whoever edits the draft's site may
 * use and whose row the file keeps, so no reference is looked up (PipelineFileInput).
 */
const storedFile = (file: DraftFileRow): StoredFileInput => ({
  path: file.path,
  contentType: file.content_type,
  stored: { hash: file.hash, size: Number(file.size) },
})

/** Whether two listings of a draft's files (in path order) hold the same bytes at the same paths. */
function sameFiles(a: readonly DraftFileRow[], b: readonly DraftFileRow[]): boolean {
  return a.length === b.length && a.every((file, i) => file.path === b[i]!.path && file.hash === b[i]!.hash && file.content_type === b[i]!.content_type)
}
