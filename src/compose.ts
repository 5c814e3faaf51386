/** The composition root of the domain: every service, wired once, shared by HTTP, MCP and the CLI. */
import type { BlobStore } from './blobs/blob-store.ts'
import type { Config } from './config.ts'
import type { Db } from './db/connect.ts'
import { CollectionsRepository } from './content/collections.repository.ts'
import { CollectionsService } from './content/collections.service.ts'
import { EntriesRepository } from './content/entries.repository.ts'
import { EntriesService } from './content/entries.service.ts'
import { libraryMedia } from './content/entries.media.ts'
import { TokensRepository } from './auth/tokens.repository.ts'
import { TokensService } from './auth/tokens.service.ts'
import { BlobsRepository } from './blobs/blobs.repository.ts'
import { UploadsRepository } from './uploads/uploads.repository.ts'
import { UploadsService } from './uploads/uploads.service.ts'
import { PublishPipeline } from './publishing/publish-pipeline.ts'
import { PublishRateLimiter } from './websites/publish-rate-limit.ts'
import { UsersRepository } from './users/users.repository.ts'
import { UsersService } from './users/users.service.ts'
import { WebsitesRepository } from './websites/websites.repository.ts'
import { WebsitesService, type SiteEvents } from './websites/websites.service.ts'
import { AssetLibrary } from './images/asset-library.ts'
import { AssetsRepository } from './images/assets.repository.ts'
import { AssetsService } from './images/assets.service.ts'

export interface Services {
  users: UsersService
  tokens: TokensService
  websites: WebsitesService
  uploads: UploadsService
  collections: CollectionsService
  entries: EntriesService
  assets: AssetsService
  /** The image library (per collection and site-wide), for entries and importAsset. */
  assetLibrary: AssetLibrary
}

export function createServices(config: Config, db: Db, blobs: BlobStore, siteEvents: SiteEvents): Services {
  const websitesRepo = new WebsitesRepository(db.kysely)
  const blobRows = new BlobsRepository(db.kysely)
  const uploads = new UploadsService(config, new UploadsRepository(db.kysely), blobs, blobRows)
  const collectionsRepo = new CollectionsRepository(db.kysely, db.dialect)
  // Content changes reach the site caches (of every instance) through the same event as a publish.
  const contentChanged = async (websiteId: string): Promise<void> => {
    const site = await websitesRepo.findById(websiteId)
    if (site) await siteEvents.siteChanged(site.slug)
  }
  const collections = new CollectionsService(collectionsRepo, websitesRepo, contentChanged)
  const assetLibrary = new AssetLibrary(
    { allowHosts: new Set(config.fetchAllowHosts), userAgent: `Plinth/1.0 (+${config.siteUrl})` },
    new AssetsRepository(db.kysely),
    blobs,
    blobRows,
  )
  return {
    users: new UsersService(new UsersRepository(db.kysely)),
    tokens: new TokensService(new TokensRepository(db.kysely)),
    websites: new WebsitesService(
      config,
      websitesRepo,
      blobRows,
      new PublishPipeline(blobs, blobRows, uploads),
      new PublishRateLimiter(websitesRepo, config.publishRatePerMinute),
      siteEvents,
      (websiteId) => collectionsRepo.namesOf(websiteId),
    ),
    uploads,
    collections,
    assets: new AssetsService(websitesRepo, assetLibrary, uploads),
    assetLibrary,
    entries: new EntriesService(collections, new EntriesRepository(db.kysely), libraryMedia(assetLibrary), contentChanged),
  }
}
