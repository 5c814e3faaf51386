import { ConfigError, loadConfig, type Config } from './config.ts'
import { createLogger } from './log.ts'
import { startServer } from './server.ts'

/** What a person starting Plinth in a terminal needs: where everything is, and what to run next. */
function banner(config: Config, address: string): string {
  const store = config.databaseUrl ? 'PostgreSQL' : `SQLite and files in ${config.dataDir}`
  return [
    '',
    `  Plinth is serving on ${address}`,
    '',
    `  API        ${config.baseUrl}/v1   (OpenAPI: ${config.baseUrl}/openapi.json)`,
    `  MCP        ${config.baseUrl}/mcp`,
    `  Sites      ${config.siteScheme}://{slug}.${config.siteDomain}/`,
    `  Data       ${store}`,
    '',
    '  Next: create an account and a token, in another terminal in this folder:',
    "    npx plinth user create --email you@example.com --password 'a long passphrase'",
    '    npx plinth token create --email you@example.com',
    '',
    '  Stop with Ctrl+C.',
    '',
  ].join('\n')
}

/** A start-up failure as one line a person can act on, or null when it needs the whole error. */
function plainReason(error: unknown): string | null {
  if (error instanceof ConfigError) return error.message
  const e = error as NodeJS.ErrnoException & { address?: string; port?: number }
  if (e?.code === 'EADDRINUSE') return `Port ${e.port} on ${e.address} is already in use: stop the other server or set PORT to a free port.`
  if (e?.code === 'EACCES' && e.syscall === 'listen') return `Not allowed to listen on port ${e.port}: choose a port above 1023 with PORT.`
  if (e?.code === 'EADDRNOTAVAIL') return `HOST ${e.address} is not an address of this machine: set HOST to one (127.0.0.1 by default).`
  return null
}

async function main(): Promise<void> {
  const config = loadConfig()
  // In a terminal, the banner says where everything is and the log shows warnings and errors;
  // otherwise (a service manager, a container) every line is JSON for the log collector.
  const interactive = process.stdout.isTTY === true
  const log = createLogger(interactive && config.logLevel === 'info' ? 'warn' : config.logLevel)
  const server = await startServer(config, log)
  if (interactive) process.stdout.write(`${banner(config, server.address)}\n`)
  else {
    log.info(
      { api: config.baseUrl, sites: `${config.siteScheme}://{slug}.${config.siteDomain}`, data: config.databaseUrl ? 'postgres' : config.dataDir },
      `Plinth is serving on ${server.address}`,
    )
  }

  let closing = false
  const shutdown = (signal: string) => {
    if (closing) return
    closing = true
    if (interactive) process.stdout.write(`\n  ${signal} received, finishing open requests\n`)
    else log.info(`${signal} received, finishing open requests`)
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
  console.error(plainReason(error) ?? error)
  process.exit(1)
})
