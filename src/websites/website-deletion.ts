/**
 * Deleting a website for good (owner only): the site and everything that hangs off it go in one
 * transaction, so its slug is free at once; every instance then stops serving it, and the blobs
 * that only it held are removed.
 */
import type { BlobStore } from '../blobs/blob-store.ts'
import { readBlobFiles, restoreClaimed } from '../blobs/blob-removal.ts'
import type { BlobsRepository } from '../blobs/blobs.repository.ts'
import { notFound } from '../core/errors.ts'
import type { Principal } from '../core/principal.ts'
import type { WebsiteAccess } from '../db/access.ts'
import type { SiteEvents } from '../serving/site-events.ts'
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
}

/** Blobs of a deleted website whose rows are deleted in one statement. */
const BLOB_CHUNK = 500

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
      return held
    })
    await siteEvents.siteChanged(site.slug)
    purge.siteChanged('delete', site)
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
    const { blobs, blobRows } = this.options
    for (let start = 0; start < hashes.length; start += BLOB_CHUNK) {
      for (const hash of await blobRows.deleteUnreferenced(hashes.slice(start, start + BLOB_CHUNK))) {
        if ((await blobRows.referencedHashes([hash])).size > 0) continue
        // Read first, to put back should a publish claim the bytes while they go (blobs/blob-removal.ts).
        const saved = await readBlobFiles(blobs, hash)
        await blobs.delete(hash)
        await restoreClaimed(blobs, blobRows, new Map([[hash, saved]]))
      }
    }
  }
}
