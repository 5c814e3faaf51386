/**
 * Deleting a website for good (owner only): the site and everything that hangs off it go in one
 * transaction, so its slug is free at once; every instance then stops serving it, and the blobs
 * that only it held are removed.
 */
import type { BlobStore } from '../blobs/blob-store.ts'
import { removeUnreferencedBlobs } from '../blobs/blob-removal.ts'
import type { BlobsRepository } from '../blobs/blobs.repository.ts'
import { notFound } from '../core/errors.ts'
import type { Principal } from '../core/principal.ts'
import type { WebsiteAccess } from '../db/access.ts'
import type { SiteEvents } from '../serving/site-events.ts'
import type { WebhookEvents } from '../webhooks/webhook-events.ts'
import type { PurgeHook } from './purge-hook.ts'
import type { WebsitesRepository } from './websites.repository.ts'

export interface WebsiteDeletionOptions {
  access: WebsiteAccess
  repo: WebsitesRepository
  /** Where a deleted website's blobs are removed from. */
  blobs: BlobStore
  blobRows: BlobsRepository
  /** Told when a slug serves nothing any more, so every cache (here and on other instances) drops it. */
  siteEvents: SiteEvents
  /** Told when a site is deleted, for a CDN to purge (PLINTH_PURGE_URL). */
  purge: PurgeHook
  /** Told of the deletion in its transaction (`site.deleted`), which also retires the site's webhooks. */
  webhookEvents: WebhookEvents
}

export class WebsiteDeletion {
  constructor(private readonly options: WebsiteDeletionOptions) {}

  async delete(principal: Principal, websiteId: string): Promise<void> {
    const { access, repo, siteEvents, purge } = this.options
    const site = await access.requireSite(principal, websiteId, 'own', 'delete it')
    const hashes = await repo.transaction(async (trx) => {
      // Locks the site's row first, as a publish does (nextVersionNumber): a publish to it in
      // flight commits before the blobs are listed, and a later one finds no site.
      await repo.lockWebsite(trx, site.id)
      const held = await repo.blobHashesOf(trx, site.id)
      if (!(await repo.deleteWebsite(trx, site.id))) throw notFound('Website')
      await this.options.webhookEvents.siteDeleted(trx, site.id, { slug: site.slug, name: site.name })
      return held
    })
    await siteEvents.siteChanged(site.slug)
    purge.siteChanged('delete', site)
    // The blobs only it held go at once (blobs/blob-removal.ts says why that is safe).
    await removeUnreferencedBlobs(this.options.blobs, this.options.blobRows, hashes)
  }
}
