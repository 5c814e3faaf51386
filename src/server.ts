/**
 * Composes Plinth and serves it from one HTTP server: requests for a site host
 * ({slug}.{site_domain}) go straight to the site server, the OAuth authorization server's
 * endpoints (/oauth/..., its metadata) to oidc-provider (oauth/oauth.routes.ts), the rest to Fastify. Used by main.ts and
 * by the tests, so both run exactly the same wiring.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { type App, buildApp } from './app.ts'
import { type ComposeOptions, type Composition, compose } from './compose.ts'
import type { Config } from './config.ts'
import { KEEP_ALIVE_TIMEOUT_MS } from './core/limits.ts'
import type { Logger } from './log.ts'
import { OAUTH_ROUTE, SITE_ROUTE } from './ops/metrics.ts'
import { storeProbes } from './ops/readiness.ts'
import { PlinthResponse, rawRequestTracker } from './ops/request-tracking.ts'

export interface RunningServer extends Omit<Composition, 'close'> {
  app: App
  /** http://host:port actually bound (port 0 picks a free one). */
  address: string
  close(): Promise<void>
}

/** `pools`: worker pools shared with other servers of the process (compose.ts); the server makes its own otherwise. `now`: the clock of schedules (tests move it). */
export async function startServer(config: Config, log: Logger, { pools, now }: Pick<ComposeOptions, 'pools' | 'now'> = {}): Promise<RunningServer> {
  const composition = await compose(config, log, { pools, now })
  const { siteServer, oauthEndpoint, metrics } = composition
  metrics.collectProcessMetrics()
  // Requests answered before Fastify get their request id and are counted here; Fastify does both itself (app.ts).
  const trackSite = rawRequestTracker({ metrics, route: SITE_ROUTE })
  const trackOAuth = rawRequestTracker({ metrics, route: OAUTH_ROUTE, log })
  const app: App = await buildApp({
    config,
    services: composition.services,
    oauthEndpoint,
    log,
    metrics,
    readiness: storeProbes(composition.db, composition.blobs),
    serverFactory: (fastifyHandler) => {
      const server = http.createServer({ ServerResponse: PlinthResponse }, (req, res) => {
        // A site's address, or one under the site domain naming no site (its page says so, never the service's own pages).
        const site = siteServer.addressOf(req.headers.host)
        if (site !== null) {
          trackSite(req, res)
          siteServer.serve(site, req, res)
        } else if (oauthEndpoint.handles(req.url)) {
          trackOAuth(req, res)
          oauthEndpoint.handle(req, res)
        } else fastifyHandler(req, res)
      })
      server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS
      return server
    },
  })
  app.addHook('onClose', () => composition.close())
  await app.listen({ port: config.port, host: config.host })
  const { port } = app.server.address() as AddressInfo
  const host = config.host.includes(':') ? `[${config.host}]` : config.host
  return { ...composition, app, address: `http://${host}:${port}`, close: () => app.close() }
}
