/**
 * Benchmark child for BENCH_DIAGNOSE=1: splits the Plinth/bare gap into its parts. It starts a
 * full Plinth server (startServer, so the process holds everything Plinth loads and runs), then
 * serves the bench page from a SECOND plain node:http server on another port with:
 *   VARIANT=bare-in-plinth  the bare handler (same bytes, Plinth's exact header list)
 *   VARIANT=site-handler    Plinth's site handler alone (no Fastify, no server.ts host check)
 *   VARIANT=site-handler-forms  the same, built with a form receiver as the real server is: beside
 *                           site-handler it shows what taking forms costs a site that has none
 *                           (its GETs never reach the receiver, which refuses every post here)
 * Uses the data dir of the Plinth child the page was published with (read-only here).
 */
import { readFileSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { FsBlobStore } from '../src/blobs/fs-blob-store.ts'
import { loadConfig } from '../src/config.ts'
import { createLogger } from '../src/log.ts'
import { startServer } from '../src/server.ts'
import { DbSiteLookup } from '../src/serving/db-site-lookup.ts'
import { AppError } from '../src/core/errors.ts'
import { NO_CONTENT } from '../src/serving/content-responder.ts'
import type { FormReceiver } from '../src/serving/form-posts.ts'
import { createSiteServer } from '../src/serving/site-handler.ts'
import { MANIFEST_CACHE_LIMITS } from '../src/serving/site-cache.ts'
import { serveIpc } from './lib/child-ipc.ts'

const config = loadConfig(process.env)
const plinth = await startServer(config, createLogger(config.logLevel))
const body = readFileSync(process.env.BENCH_BODY_FILE as string)
const headers: string[] = JSON.parse(process.env.BENCH_FULL_HEADERS as string)

/** A form receiver that admits posts and refuses them all: the bench page's site declares no form, so it is never asked. */
const REFUSING_RECEIVER: FormReceiver = {
  admit: () => null,
  declaration: () => Promise.resolve(undefined),
  receive: () => Promise.reject(new AppError('NOT_FOUND', 'This site has no such form.')),
}

let handler: http.RequestListener
if (process.env.VARIANT === 'bare-in-plinth') {
  handler = (_req, res) => {
    res.writeHead(200, headers)
    res.end(body)
  }
} else {
  const blobs = new FsBlobStore(path.join(config.dataDir, 'blobs'))
  const site = createSiteServer({
    siteDomain: config.siteDomain,
    lookup: new DbSiteLookup(plinth.db.kysely),
    blobs,
    cacheBytes: config.serveCacheBytes,
    manifests: MANIFEST_CACHE_LIMITS,
    now: Date.now,
    log: createLogger(config.logLevel),
    content: NO_CONTENT,
    forms: process.env.VARIANT === 'site-handler-forms' ? REFUSING_RECEIVER : null,
  })
  handler = (req, res) => site.handle(req, res)
}
const server = http.createServer(handler)

serveIpc({}, async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
  await plinth.close()
})

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo
  console.log(JSON.stringify({ ready: true, address: `http://127.0.0.1:${port}`, pid: process.pid }))
})
