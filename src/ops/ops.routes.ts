/**
 * The operations endpoints, for load balancers, orchestrators and Prometheus rather than for API
 * clients: `GET /healthz` (the process answers), `GET /readyz` (the database and the blob store
 * answer) and `GET /metrics` (Prometheus text format). They are left out of the OpenAPI document,
 * like `/tls/ask`: they are not part of the API a client programs against, and take no API token.
 * They answer on every host that is not a site's, since a load balancer often probes by address.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { HttpError } from '../http/errors.http.ts'
import type { Metrics } from './metrics.ts'
import { checkReadiness, type ReadinessProbes } from './readiness.ts'

export interface OperationsOptions {
  metrics: Metrics
  /** What /readyz checks (readiness.ts storeProbes). */
  readiness: ReadinessProbes
  /** The bearer token /metrics requires (`PLINTH_METRICS_TOKEN`); null leaves it open. */
  metricsToken: string | null
}

/** Probes and scrapes must always reach this instance, never a cache in between. */
const NO_STORE = 'no-store'

export function operationsRoutes({ metrics, readiness, metricsToken }: OperationsOptions) {
  const expected = metricsToken === null ? null : digest(metricsToken)
  // eslint-disable-next-line @typescript-eslint/require-await -- Fastify awaits an async plugin, so a throw while registering rejects register()
  return async (app: FastifyInstance) => {
    app.get('/healthz', { schema: { hide: true } }, async (_request, reply) => reply.header('Cache-Control', NO_STORE).send({ status: 'ok' }))

    app.get('/readyz', { schema: { hide: true } }, async (request, reply) => {
      const { ready, checks, errors } = await checkReadiness(readiness)
      for (const [check, error] of Object.entries(errors)) request.log.warn({ err: error, check }, `readiness check ${check} failed`)
      return reply
        .code(ready ? 200 : 503)
        .header('Cache-Control', NO_STORE)
        .send({ status: ready ? 'ready' : 'unready', checks })
    })

    app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
      if (expected !== null && !bearerMatches(request.headers.authorization, expected)) {
        throw new HttpError('AUTH_REQUIRED', 'Send the metrics token (PLINTH_METRICS_TOKEN) as "Authorization: Bearer <token>".', {
          'WWW-Authenticate': 'Bearer realm="metrics"',
          'Cache-Control': NO_STORE,
        })
      }
      const { contentType, body } = await metrics.exposition()
      return reply.header('Cache-Control', NO_STORE).type(contentType).send(body)
    })
  }
}

/** Tokens are compared as SHA-256 digests: equal lengths, so the comparison takes the same time whatever was sent. */
function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest()
}

function bearerMatches(authorization: string | undefined, expected: Buffer): boolean {
  const given = /^Bearer +(\S+) *$/i.exec(authorization ?? '')?.[1]
  return given !== undefined && timingSafeEqual(digest(given), expected)
}
