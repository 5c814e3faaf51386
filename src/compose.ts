/**
 * The composition root: opens the stores and builds every service, the site server and the site
 * events once. The HTTP server and the CLI both start from here, so they run the same wiring.
 * Every collaborator is passed explicitly; nothing has a silent default.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { AccountsService } from './auth/accounts.service.ts'
import { SessionsRepository } from './auth/sessions.repository.ts'
import { TokensRepository } from './auth/tokens.repository.ts'
import { TokensService } from './auth/tokens.service.ts'
import type { BlobStore } from './blobs/blob-store.ts'
import { describeSweep, type SweepResult, sweepBlobs } from './blobs/blob-sweep.ts'
import { BlobsRepository } from './blobs/blobs.repository.ts'
import { FsBlobStore } from './blobs/fs-blob-store.ts'
import type { Config } from './config.ts'
import { CollectionsRepository } from './content/collections.repository.ts'
import { CollectionsService } from './content/collections.service.ts'
import { libraryMedia } from './content/entries.media.ts'
import { EntriesRepository } from './content/entries.repository.ts'
import { EntriesService } from './content/entries.service.ts'
import { defaultRichTextPoolOptions, RichTextPool } from './content/rich-text.pool.ts'
import { WebsiteAccess } from './db/access.ts'
import { type Db, migrate, openDb } from './db/connect.ts'
import { ServerSecrets } from './db/server-secrets.ts'
import { AssetLibrary } from './images/asset-library.ts'
import { AssetsRepository } from './images/assets.repository.ts'
import { AssetsService } from './images/assets.service.ts'
import type { Logger } from './log.ts'
import { OAuthRepository } from './oauth/oauth.repository.ts'
import { OAuthService } from './oauth/oauth.service.ts'
import { PublishPipeline } from './publishing/publish-pipeline.ts'
import { DbSiteLookup } from './serving/db-site-lookup.ts'
import { createSiteEvents, type SiteEventBus } from './serving/site-events.ts'
import { createSiteServer, type SiteServer } from './serving/site-handler.ts'
import { SiteContentRepository } from './site-content/site-content.repository.ts'
import { SiteContent } from './site-content/site-content.ts'
import { defaultTemplatePoolOptions, TemplatePool } from './site-content/site-templates.pool.ts'
import { UploadsRepository } from './uploads/uploads.repository.ts'
import { UploadsService } from './uploads/uploads.service.ts'
import { UsersRepository } from './users/users.repository.ts'
import { UsersService } from './users/users.service.ts'
import { RICH_TEXT_MEMORY_MB, RICH_TEXT_TIME_LIMIT_MS } from './core/limits.ts'
import { PublishRateLimiter } from './websites/publish-rate-limit.ts'
import { WebsitesRepository } from './websites/websites.repository.ts'
import { WebsitesService } from './websites/websites.service.ts'

/** The services every surface (REST, MCP, CLI) calls. */
export interface Services {
  users: UsersService
  /** People on the web site: sign-up, sign-in, sessions. */
  accounts: AccountsService
  /** Keys shared by every instance (upload URLs, CSRF tokens, OAuth). */
  secrets: ServerSecrets
  /** Sign-in from MCP clients: consent, connected apps. */
  oauth: OAuthService
  tokens: TokensService
  websites: WebsitesService
  uploads: UploadsService
  collections: CollectionsService
  entries: EntriesService
  assets: AssetsService
}

/** Everything one Plinth process runs on. */
export interface Composition {
  db: Db
  /** The OAuth authorization server for MCP clients (its endpoints are answered before Fastify). */
  oauth: OAuthService
  blobs: BlobStore
  services: Services
  /** Serves published sites ({slug}.{site_domain}). */
  siteServer: SiteServer
  siteEvents: SiteEventBus
  /** Removes temp files and unreferenced blobs a crash left behind (blobs/blob-sweep.ts). */
  sweepBlobs(): Promise<SweepResult>
  /** Stops listening for site changes, stops the rich-text and template threads and closes the database. */
  close(): Promise<void>
}

/**
 * Opens the stores (running pending migrations) and builds everything on them. At start the blob
 * store is swept in the background (what a crash left behind), unless told not to (the CLI).
 */
export async function compose(config: Config, log: Logger, options: { sweepAtStart?: boolean } = {}): Promise<Composition> {
  const db = openDb(config)
  try {
    await migrate(db)
  } catch (error) {
    await db.close()
    throw error
  }
  const blobs = new FsBlobStore(path.join(config.dataDir, 'blobs'))
  const assetsRepo = new AssetsRepository(db.kysely)
  const collectionsRepo = new CollectionsRepository(db.kysely, db.dialect)
  const entriesRepo = new EntriesRepository(db.kysely)

  // Content pages are rendered in worker threads, never on the event loop (site-content/site-templates.pool.ts).
  const templates = new TemplatePool(defaultTemplatePoolOptions())
  const siteServer = createSiteServer({
    siteDomain: config.siteDomain,
    // The API and web site hosts are never site hosts, even when they sit under the site domain.
    serviceHosts: [new URL(config.baseUrl).hostname, new URL(config.siteUrl).hostname],
    lookup: new DbSiteLookup(db.kysely),
    blobs,
    cacheBytes: config.serveCacheBytes,
    log,
    content: new SiteContent({
      sources: { live: new SiteContentRepository(db.kysely), collections: collectionsRepo, entries: entriesRepo, assets: assetsRepo },
      blobs,
      scheme: config.siteScheme,
      siteDomain: config.siteDomain,
      log,
      templates,
    }),
  })
  const siteEvents = await createSiteEvents(db, config.databaseUrl, (slug) => siteServer.invalidate(slug), log)

  const blobRows = new BlobsRepository(db.kysely)
  const access = new WebsiteAccess(db.kysely)
  const websitesRepo = new WebsitesRepository(db.kysely)
  const secrets = new ServerSecrets(db.kysely)
  const fetchCa = config.fetchCaFile ? readFileSync(config.fetchCaFile, 'utf8') : undefined
  const uploads = new UploadsService({ baseUrl: config.baseUrl, repo: new UploadsRepository(db.kysely), blobs, blobRows, secrets })
  const collections = new CollectionsService({ repo: collectionsRepo, access, siteEvents })
  const assetLibrary = new AssetLibrary({
    allowHosts: new Set(config.fetchAllowHosts),
    userAgent: `Plinth/1.0 (+${config.siteUrl})`,
    ca: fetchCa,
    repo: assetsRepo,
    blobs,
    blobRows,
  })
  // Rich text is rendered in worker threads, never on the event loop (content/rich-text.pool.ts).
  const richText = new RichTextPool(defaultRichTextPoolOptions({ timeLimitMs: RICH_TEXT_TIME_LIMIT_MS, memoryMb: RICH_TEXT_MEMORY_MB }))
  const users = new UsersService(new UsersRepository(db.kysely))
  const oauth = await OAuthService.create({ config, db: db.kysely, repo: new OAuthRepository(db.kysely), users, secrets, log, fetchCa })
  const services: Services = {
    users,
    accounts: new AccountsService({ users, sessions: new SessionsRepository(db.kysely), apps: oauth, signup: config.signup }),
    secrets,
    oauth,
    tokens: new TokensService({ repo: new TokensRepository(db.kysely), oauth }),
    websites: new WebsitesService({
      config,
      repo: websitesRepo,
      blobs,
      blobRows,
      pipeline: new PublishPipeline({ blobs, blobRows, references: uploads, httpsSites: config.siteScheme === 'https' }),
      rateLimiter: new PublishRateLimiter(websitesRepo, config.publishRatePerMinute),
      siteEvents,
      collections: collectionsRepo,
    }),
    uploads,
    collections,
    entries: new EntriesService({ collections, repo: entriesRepo, media: libraryMedia(richText, assetLibrary), siteEvents }),
    assets: new AssetsService({ access, library: assetLibrary, uploads }),
  }
  const sweep = () => sweepBlobs(blobs, blobRows, {})
  const startSweep =
    options.sweepAtStart === false
      ? Promise.resolve()
      : sweep().then(
          (result) => log.info({ sweep: result }, `blob store swept at start: ${describeSweep(result)}`),
          (error) => log.error({ err: error }, 'sweeping the blob store at start failed'),
        )
  return {
    db,
    oauth,
    blobs,
    services,
    siteServer,
    siteEvents,
    sweepBlobs: sweep,
    async close() {
      await startSweep
      await siteEvents.close()
      await richText.close()
      await templates.close()
      await db.close()
    },
  }
}
