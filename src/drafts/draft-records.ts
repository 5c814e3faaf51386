/**
 * What every change of a draft shares: finding the draft for a caller who edits its site, and
 * recording a change in one transaction that first moves the draft's expiry on (locking its row,
 * so changes of one draft are recorded one at a time), with the blobs it stored; then telling the
 * pipeline how that went, telling serving, and removing the blobs the change left unreferenced.
 *
 * Serving is told through SiteEvents with the draft's preview host label (`{slug}--d{token}`,
 * core/site-address.ts) as the key: the serving caches hold prepared versions by host label, so
 * exactly the draft's preview is dropped, on every instance, and never the live site's.
 */
import { removeUnreferencedBlobs } from '../blobs/blob-removal.ts'
import type { BlobStore } from '../blobs/blob-store.ts'
import type { BlobsRepository } from '../blobs/blobs.repository.ts'
import type { Config } from '../config.ts'
import { notFound } from '../core/errors.ts'
import type { Principal } from '../core/principal.ts'
import { draftLabel } from '../core/site-address.ts'
import type { VisibleWebsite, WebsiteAccess } from '../db/access.ts'
import type { Database } from '../db/types.ts'
import type { PublishPipeline, PublishTarget, StoredBundle } from '../publishing/publish-pipeline.ts'
import type { SiteEvents } from '../serving/site-events.ts'
import type { CollectionNames } from '../websites/website-publishing.ts'
import type { Transaction } from 'kysely'
import type { DraftsRepository, DraftWithBase } from './drafts.repository.ts'

const DAY_MS = 24 * 60 * 60 * 1000

export interface DraftRecordsOptions {
  config: Pick<Config, 'siteScheme' | 'siteDomain' | 'bundleLimits'>
  access: WebsiteAccess
  repo: DraftsRepository
  blobs: BlobStore
  blobRows: BlobsRepository
  pipeline: PublishPipeline
  collections: CollectionNames
  /** Told of every change of a draft, keyed by its preview host label (see above). */
  siteEvents: SiteEvents
  /** How long a draft nobody writes to is kept (PLINTH_DRAFT_TTL_DAYS). */
  ttlDays: number
  /** The clock: drafts are open while their expiry is after it. */
  now: () => Date
}

/** A draft found for a caller, with its site. */
export interface FoundDraft {
  site: VisibleWebsite
  draft: DraftWithBase
}

/** What a recorded change answers: its result, and the blobs it stopped holding. */
export interface Change<T> {
  result: T
  dropped: readonly string[]
}

export class DraftRecords {
  constructor(readonly options: DraftRecordsOptions) {}

  nowIso(): string {
    return this.options.now().toISOString()
  }

  /** When a draft written now expires: PLINTH_DRAFT_TTL_DAYS on, or at `by` (an expiry its caller set) when that is sooner. */
  expiryFrom(now: string, by: string | null = null): string {
    const ttl = new Date(Date.parse(now) + this.options.ttlDays * DAY_MS).toISOString()
    return by !== null && by < ttl ? by : ttl
  }

  /** The open draft of a site the caller edits; NOT_FOUND for anyone else, and once it is gone. */
  async require(principal: Principal, websiteId: string, draftId: string): Promise<FoundDraft> {
    const site = await this.options.access.requireSite(principal, websiteId, 'edit')
    const draft = await this.options.repo.findOpen(site.id, draftId, this.nowIso())
    if (!draft) throw notFound('Draft')
    return { site, draft }
  }

  /** Who writes to the site, and where no file may go: as a publish to it would be checked. */
  async targetOf(principal: Principal, site: VisibleWebsite): Promise<PublishTarget> {
    return { userId: principal.userId, sites: principal.sites, collectionNames: await this.options.collections.namesOf(site.id) }
  }

  /**
   * Records a change of an open draft (NOT_FOUND once it is gone) with the blobs `stored` wrote, in
   * one transaction; on a failure those blobs are removed again, so a refused change leaves nothing.
   */
  async record<T>(found: FoundDraft, stored: StoredBundle | null, work: (trx: Transaction<Database>) => Promise<Change<T>>): Promise<T> {
    const { repo, blobRows, pipeline } = this.options
    let change: Change<T>
    try {
      change = await repo.transaction(async (trx) => {
        const now = this.nowIso()
        if (!(await repo.touch(trx, found.draft.id, now, this.expiryFrom(now)))) throw notFound('Draft')
        if (stored) await blobRows.insertMissing(trx, stored.newBlobs)
        return work(trx)
      })
    } catch (error) {
      if (stored) await pipeline.abandon(stored)
      throw error
    }
    const label = draftLabel(found.site.slug, found.draft.id)
    // A draft's files get their compressed variants when it is published (DraftsService.publish).
    if (stored) await pipeline.confirm(stored, { variantsLater: true })
    await this.changed(label, change.dropped)
    return change.result
  }

  /** After a change committed: serving is told, and blobs nothing refers to any more are removed. */
  async changed(label: string, dropped: readonly string[]): Promise<void> {
    await this.options.siteEvents.siteChanged(label)
    await this.release(dropped)
  }

  /** Removes the blobs among these that nothing refers to any more (blobs/blob-removal.ts). */
  release(dropped: readonly string[]): Promise<void> {
    return removeUnreferencedBlobs(this.options.blobs, this.options.blobRows, dropped)
  }
}
