/** The composition root of the domain: every service, wired once, shared by HTTP, MCP and the CLI. */
import type { BlobStore } from './blobs/blob-store.ts'
import type { Config } from './config.ts'
import type { Db } from './db/connect.ts'
import { TokensRepository } from './modules/auth/tokens.repository.ts'
import { TokensService } from './modules/auth/tokens.service.ts'
import { BlobsRepository } from './modules/publishing/blobs.repository.ts'
import { PublishPipeline } from './modules/publishing/publish-pipeline.ts'
import { PublishRateLimiter } from './modules/publishing/rate-limit.ts'
import { UsersRepository } from './modules/users/users.repository.ts'
import { UsersService } from './modules/users/users.service.ts'
import { WebsitesRepository } from './modules/websites/websites.repository.ts'
import { WebsitesService, type SiteEvents } from './modules/websites/websites.service.ts'

export interface Services {
  users: UsersService
  tokens: TokensService
  websites: WebsitesService
}

export function createServices(config: Config, db: Db, blobs: BlobStore, siteEvents: SiteEvents): Services {
  const websitesRepo = new WebsitesRepository(db.kysely)
  const blobRows = new BlobsRepository(db.kysely)
  return {
    users: new UsersService(new UsersRepository(db.kysely)),
    tokens: new TokensService(new TokensRepository(db.kysely)),
    websites: new WebsitesService(
      config,
      websitesRepo,
      blobRows,
      new PublishPipeline(blobs, blobRows),
      new PublishRateLimiter(websitesRepo, config.publishRatePerMinute),
      siteEvents,
    ),
  }
}
