/**
 * Opens the stores, builds the app and the site server, and serves both from one HTTP server:
 * requests for a site host ({slug}.{site_domain}) go straight to the site handler, the rest to
 * Fastify. Used by main.ts and by the tests, so both run exactly the same wiring.
 */
import http from 'node:http'
import path from 'node:path'
import type { AddressInfo } from 'node:net'
import { buildApp, type App } from './app.ts'
import { FsBlobStore } from './blobs/fs-blob-store.ts'
import type { Config } from './config.ts'
import { migrate, openDb, type Db } from './db/connect.ts'
import { SiteContent } from './site-content/site-content.ts'
import { SiteContentRepository } from './site-content/site-content.repository.ts'
import { DbSiteLookup } from './serving/db-site-lookup.ts'
import { createSiteEvents } from './serving/site-events.ts'
import { createSiteServer, type SiteServer } from './serving/site-handler.ts'
import { createServices, type Services } from './compose.ts'

export interface RunningServer {
  app: App
  db: Db
  services: Services
  siteServer: SiteServer
  /** http://host:port actually bound (port 0 picks a free one). */
  address: string
  close(): Promise<void>
}

export async function startServer(config: Config): Promise<RunningServer> {
  const db = openDb(config)
  try {
    await migrate(db)
  } catch (error) {
    await db.close()
    throw error
  }
  const blobs = new FsBlobStore(path.join(config.dataDir, 'blobs'))
  const log = { error: (obj: unknown, msg?: string) => app.log.error(obj, msg), warn: (obj: unknown, msg?: string) => app.log.warn(obj, msg) }
  const content = new SiteContent({ repo: new SiteContentRepository(db.kysely), blobs, scheme: config.siteScheme, log })
  const siteServer = createSiteServer({
    siteDomain: config.siteDomain,
    // The API and web site hosts are never site hosts, even when they sit under the site domain.
    serviceHosts: [new URL(config.baseUrl).hostname, new URL(config.siteUrl).hostname],
    lookup: new DbSiteLookup(db.kysely),
    blobs,
    cacheBytes: config.serveCacheBytes,
    log,
    content,
  })
  const siteEvents = await createSiteEvents(db, config.databaseUrl, (slug) => siteServer.invalidate(slug), log)
  const services = createServices(config, db, blobs, siteEvents)

  const app: App = await buildApp({
    config,
    services,
    serverFactory: (fastifyHandler) =>
      http.createServer((req, res) => {
        if (siteServer.isSiteHost(req.headers.host)) siteServer.handle(req, res)
        else fastifyHandler(req, res)
      }),
  })
  app.addHook('onClose', async () => {
    await siteEvents.close()
    await db.close()
  })
  await app.listen({ port: config.port, host: config.host })
  const { port } = app.server.address() as AddressInfo
  const host = config.host.includes(':') ? `[${config.host}]` : config.host
  return { app, db, services, siteServer, address: `http://${host}:${port}`, close: () => app.close() }
}
