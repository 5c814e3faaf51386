/**
 * Benchmark child: a real Plinth server (startServer, the same wiring as `npm start`) on the temp
 * data dir and settings given in the environment, plus a bench user and REST token created
 * through the services. Prints one JSON line {ready, address, pid, token} when listening.
 *
 * IPC requests from the parent (besides profile-start/profile-stop, see lib/child-ipc.ts):
 *   stats  -> process.memoryUsage() and the site server's cache stats
 *   gc     -> two full GCs (needs --expose-gc), then stats
 */
import { loadConfig } from '../src/config.ts'
import { startServer } from '../src/server.ts'
import { serveIpc } from './lib/child-ipc.ts'

const config = loadConfig(process.env)
const server = await startServer(config)
const user = await server.services.users.create({ email: `bench-${process.pid}@example.com`, password: 'bench-password-1', name: 'Bench' })
const { token } = await server.services.tokens.create(user.id, { name: 'bench', access: 'rest' })

const stats = () => ({ memory: process.memoryUsage(), site: server.siteServer.stats() })

serveIpc(
  {
    stats,
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

console.log(JSON.stringify({ ready: true, address: server.address, pid: process.pid, token, siteDomain: config.siteDomain }))
