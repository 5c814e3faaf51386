import { ConfigError, loadConfig } from './config.ts'
import { startServer } from './server.ts'

async function main(): Promise<void> {
  const config = loadConfig()
  const server = await startServer(config)
  server.app.log.info(
    { api: config.baseUrl, sites: `${config.siteScheme}://{slug}.${config.siteDomain}`, data: config.databaseUrl ? 'postgres' : config.dataDir },
    `Plinth is serving on ${server.address}`,
  )

  let closing = false
  const shutdown = (signal: string) => {
    if (closing) return
    closing = true
    server.app.log.info(`${signal} received, finishing open requests`)
    const force = setTimeout(() => process.exit(1), 10_000)
    force.unref()
    server.close().then(
      () => process.exit(0),
      (error) => {
        server.app.log.error({ err: error }, 'shutdown failed')
        process.exit(1)
      },
    )
  }
  process.on('SIGTERM', () => shutdown('SIGTERM'))
  process.on('SIGINT', () => shutdown('SIGINT'))
}

main().catch((error) => {
  console.error(error instanceof ConfigError ? error.message : error)
  process.exit(1)
})
