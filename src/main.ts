import { ConfigError, loadConfig } from './config.ts'
import { createLogger } from './log.ts'
import { startServer } from './server.ts'

async function main(): Promise<void> {
  const config = loadConfig()
  const log = createLogger(config.logLevel)
  const server = await startServer(config, log)
  log.info(
    { api: config.baseUrl, sites: `${config.siteScheme}://{slug}.${config.siteDomain}`, data: config.databaseUrl ? 'postgres' : config.dataDir },
    `Plinth is serving on ${server.address}`,
  )

  let closing = false
  const shutdown = (signal: string) => {
    if (closing) return
    closing = true
    log.info(`${signal} received, finishing open requests`)
    const force = setTimeout(() => process.exit(1), 10_000)
    force.unref()
    server.close().then(
      () => process.exit(0),
      (error) => {
        log.error({ err: error }, 'shutdown failed')
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
