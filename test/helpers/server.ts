/** A real Plinth server on 127.0.0.1 (random port) over a real store, and clients for it. */
import http from 'node:http'
import { after } from 'node:test'
import { type Config, loadConfig } from '../../src/config.ts'
import type { WorkerPools } from '../../src/worker-pools.ts'
import { newId, nowIso } from '../../src/core/ids.ts'
import { hashPassword } from '../../src/core/passwords.ts'
import { createLogger, type Logger } from '../../src/log.ts'
import type { RunningServer } from '../../src/server.ts'
import { normalizeEmail } from '../../src/users/email-address.ts'
import { UsersRepository } from '../../src/users/users.repository.ts'
import { useCompiledThreadModules } from './build.ts'
import { createStore, type StoreName, type TestStore } from './stores.ts'

await useCompiledThreadModules()

/**
 * The worker pools every test server of this process shares, made on the first server's start
 * and closed once the process's tests are done (a top-level hook: this module is imported at the
 * top level of the test files). A thread's start loads its libraries, which costs more than most
 * tests, and a suite's servers come and go; the pools' settings are the same for every server.
 */
let sharedPools: WorkerPools | undefined
after(async () => {
  if (!sharedPools) return
  const { closeWorkerPools } = await import('../../src/worker-pools.ts')
  await closeWorkerPools(sharedPools)
})

export const SITE_DOMAIN = 'plinth.test:8080'
/** The password of the users TestServer.user makes. */
export const TEST_PASSWORD = 'correct horse battery'
let testPasswordHash: Promise<string> | undefined
export const BASE_URL = 'http://api.plinth.test:8080'

export interface ApiResponse<T = any> {
  status: number
  headers: Headers
  body: T
  text: string
}

export interface SiteResponse {
  status: number
  headers: http.IncomingHttpHeaders
  /** Names and values as sent, in order, repeats kept apart (`headers` joins them). */
  rawHeaders: string[]
  body: Buffer
}

export class TestServer {
  constructor(
    readonly server: RunningServer,
    readonly config: Config,
    readonly store: TestStore,
  ) {}

  get url(): string {
    return this.server.address
  }

  /**
   * A user with a token (REST and MCP unless told otherwise), whose password is TEST_PASSWORD. The
   * row is written as UsersService.create writes it, with a hash made once per process: hashing is
   * slow on purpose, and suites make hundreds of users.
   */
  async user(email = `user-${Math.random().toString(36).slice(2, 10)}@example.com`, access: 'rest' | 'mcp' | 'both' = 'both') {
    testPasswordHash ??= hashPassword(TEST_PASSWORD)
    const user = { id: newId('usr'), email: normalizeEmail(email), name: email.split('@')[0]!, password_hash: await testPasswordHash, created_at: nowIso() }
    await new UsersRepository(this.server.db.kysely).insert(user)
    const { token, row } = await this.server.services.tokens.create(user.id, { access })
    return { id: user.id, email, token, tokenId: row.id }
  }

  /** A JSON request to the API; body objects are sent as JSON, strings and Buffers as they are. */
  async api<T = any>(
    method: string,
    path: string,
    options: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...options.headers }
    if (options.token) headers.authorization = `Bearer ${options.token}`
    let body: BodyInit | undefined
    if (options.body !== undefined) {
      body = typeof options.body === 'string' || Buffer.isBuffer(options.body) ? (options.body as BodyInit) : JSON.stringify(options.body)
      headers['content-type'] ??= 'application/json'
    }
    const response = await fetch(this.url + path, { method, headers, body })
    const text = await response.text()
    let parsed: any
    try {
      parsed = text ? JSON.parse(text) : undefined
    } catch {
      parsed = undefined
    }
    return { status: response.status, headers: response.headers, body: parsed, text }
  }

  /** A request to a published site, by host label (`slug` or `slug--v2`), with raw bytes back. */
  site(label: string, path = '/', options: { method?: string; headers?: Record<string, string> } = {}): Promise<SiteResponse> {
    const { port } = new URL(this.url)
    return new Promise((resolve, reject) => {
      const req = http.request(
        { host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: { host: `${label}.${SITE_DOMAIN}`, ...options.headers }, agent: false },
        (res) => {
          const chunks: Buffer[] = []
          res.on('data', (c) => chunks.push(c))
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks) }))
        },
      )
      req.on('error', reject)
      req.end()
    })
  }

  async close(): Promise<void> {
    try {
      await this.server.close()
    } finally {
      await this.store.dispose()
    }
  }
}

/**
 * The configuration a test server runs with: port 0 on 127.0.0.1, the test domains, no logging,
 * its data in `dataDir`; `env` adds to it or overrides it.
 */
export function testConfig(dataDir: string, env: Record<string, string> = {}): Config {
  return loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    PLINTH_DATA_DIR: dataDir,
    PLINTH_BASE_URL: BASE_URL,
    PLINTH_SITE_DOMAIN: SITE_DOMAIN,
    PLINTH_LOG_LEVEL: 'silent',
    ...env,
  })
}

/** Starts a server with `config` over `store` (on the clock `now`, when given); if it fails to start, the store is disposed of. */
export async function startOnStore(
  store: TestStore,
  config: Config,
  log: Logger = createLogger('silent'),
  { now }: { now?: () => Date } = {},
): Promise<TestServer> {
  try {
    // Loaded on first use: a suite that takes only fixtures from the helpers does not load all of Plinth.
    const [{ startServer }, { createWorkerPools }] = await Promise.all([import('../../src/server.ts'), import('../../src/worker-pools.ts')])
    return new TestServer(await startServer(config, log, { pools: (sharedPools ??= createWorkerPools()), ...(now ? { now } : {}) }), config, store)
  } catch (error) {
    await store.dispose()
    throw error
  }
}

/** A server over a new store of `storeName`, logging nowhere unless given a logger. */
export async function startTestServer(
  storeName: StoreName,
  env: Record<string, string> = {},
  log?: Logger,
  options: { now?: () => Date } = {},
): Promise<TestServer> {
  const store = await createStore(storeName)
  const config = testConfig(store.dataDir, { ...(store.databaseUrl ? { DATABASE_URL: store.databaseUrl } : {}), ...env })
  return startOnStore(store, config, log, options)
}

/**
 * Servers the suites of one test file share, one per store and settings: each is started when a
 * suite first asks for it and closed once the file's tests are done. A server costs its start and
 * the worker threads it starts on its first publish or render, so suites that need no server of
 * their own share one; they must not depend on anything the others store (each makes its own
 * users and sites). Call at the top level of the test file.
 */
export function sharedTestServers(): (storeName: StoreName, env?: Record<string, string>) => Promise<TestServer> {
  const servers = new Map<string, Promise<TestServer>>()
  after(async () => {
    for (const server of servers.values()) await (await server.catch(() => undefined))?.close()
  })
  return (storeName, env = {}) => {
    const key = JSON.stringify([storeName, env])
    let server = servers.get(key)
    if (!server) servers.set(key, (server = startTestServer(storeName, env)))
    return server
  }
}

/** A file of a bundle as the API takes it. */
export interface BundleFile {
  path: string
  content: string
  contentEncoding?: 'utf8' | 'base64'
}

/** A small valid bundle the site check finds nothing in: index.html, then style.css, then `extra`. */
export function bundle(title = 'Hello', extra: BundleFile[] = []): [BundleFile, BundleFile, ...BundleFile[]] {
  return [
    {
      path: 'index.html',
      content: `<!doctype html><html lang="en"><head><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title><link rel="stylesheet" href="style.css"></head><body><h1>${title}</h1></body></html>`,
    },
    { path: 'style.css', content: 'body { font-family: sans-serif; color: #222; }' },
    ...extra,
  ]
}
