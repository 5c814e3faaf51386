/**
 * Benchmark child: a real Plinth server (startServer, the same wiring as `npm start`) on the temp
 * data dir and settings given in the environment, plus a bench user and REST token created
 * through the services. Prints one JSON line {ready, address, pid, token} when listening.
 *
 * IPC requests from the parent (besides profile-start/profile-stop, see lib/child-ipc.ts):
 *   stats    -> process.memoryUsage() and the site server's cache stats
 *   settled  -> answers once no compressed variants are being made and the blob store's spare files are made again
 *   gc       -> two full GCs (needs --expose-gc), then stats
 *   site-check {on} -> turns a publish's site check on or off (the publishing phase measures what it costs)
 *
 * With BENCH_SEED_ENTRIES=N set, before reporting ready it also creates the content benchmark's
 * site and collections through the services and bulk-inserts N entries (lib/seed.ts); the ready
 * line then carries a `seed` object (websiteId, siteSlug, archiveId, seeded, seedSeconds).
 */
import { loadConfig } from '../src/config.ts'
import { createLogger } from '../src/log.ts'
import { startServer } from '../src/server.ts'
import { serveIpc } from './lib/child-ipc.ts'
import { seedContent } from './lib/seed.ts'

const config = loadConfig(process.env)
const server = await startServer(config, createLogger(config.logLevel))
const user = await server.services.users.create({ email: `bench-${process.pid}@example.com`, password: 'bench-password-1', name: 'Bench' })
const { token, row } = await server.services.tokens.create(user.id, { name: 'bench', access: 'rest' })

const stats = () => ({ memory: process.memoryUsage(), site: server.siteServer.stats() })

serveIpc(
  {
    stats,
    /** Waits until no compressed variants are being made and the spare files are made again (the work a publish leaves behind it). */
    async settled() {
      await server.blobVariants.settled()
      await server.blobs.settled()
      return {}
    },
    'site-check'(msg) {
      server.pipeline.siteCheck = msg.on === true
      return {}
    },
    gc() {
      const gc = (globalThis as { gc?: () => void }).gc
      if (!gc) throw new Error('start the child with --expose-gc')
      gc()
      gc()
      return stats()
    },
  },
  () => server.close(),
)

// After serveIpc, so a SIGTERM or the parent going away during a long seed still shuts down cleanly.
const seedCount = process.env.BENCH_SEED_ENTRIES
const seed =
  seedCount === undefined || seedCount === ''
    ? undefined
    : await seedContent(
        server,
        { userId: user.id, email: user.email, name: user.name ?? null, tokenId: row.id, access: 'rest', capabilities: null, sites: null },
        Number(seedCount),
      )

console.log(JSON.stringify({ ready: true, address: server.address, pid: process.pid, token, siteDomain: config.siteDomain, seed }))
