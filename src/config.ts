/**
 * Every setting Plinth reads, parsed once at boot from the environment, validated, frozen and
 * passed down. Nothing else in src/ reads process.env.
 */
import path from 'node:path'
import { parseHostList } from './net/allow-hosts.ts'

export interface Config {
  port: number
  host: string
  dataDir: string
  /** API origin, no trailing slash, e.g. http://localhost:8080 */
  baseUrl: string
  /** Public web site origin, no trailing slash. */
  siteUrl: string
  /** Domain under which sites are served as subdomains, may carry a port: localhost:8080 */
  siteDomain: string
  /** Scheme used in page URLs of published sites: that of siteUrl. */
  siteScheme: 'http' | 'https'
  databaseUrl: string | null
  publishRatePerMinute: number
  maxWebsites: number
  freeChangesLimit: number
  serveCacheBytes: number
  logLevel: string
  /** Whether people may create accounts on the web site (`PLINTH_SIGNUP`); the admin CLI creates users either way. */
  signup: 'open' | 'closed'
  /** PEM file of certificate authorities that fetches (images, client metadata documents) trust on top of the system's. */
  fetchCaFile: string | null
  /** Hosts image fetching may reach although they are not public (tests, intranets); normalized `host` or `host:port`. */
  fetchAllowHosts: readonly string[]
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

export function loadConfig(env: Env = process.env, cwd = process.cwd()): Readonly<Config> {
  const problems: string[] = []

  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name]
    if (raw === undefined || raw === '') return fallback
    const value = Number(raw)
    if (!Number.isInteger(value) || value < min || value > max) {
      problems.push(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`)
      return fallback
    }
    return value
  }

  const origin = (name: string, fallback: string): string => {
    const raw = env[name]
    if (raw === undefined || raw === '') return fallback
    try {
      const url = new URL(raw)
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('scheme')
      if (url.pathname !== '/' || url.search || url.hash) {
        problems.push(`${name} must be an origin without a path, got "${raw}"`)
      }
      return url.origin
    } catch {
      problems.push(`${name} must be an http(s) URL, got "${raw}"`)
      return fallback
    }
  }

  const port = int('PORT', 8080, 0, 65535)
  const host = env.HOST || '127.0.0.1'
  const localOrigin = `http://localhost:${port === 0 ? 8080 : port}`
  const baseUrl = origin('PLINTH_BASE_URL', localOrigin)
  const siteUrl = origin('PLINTH_SITE_URL', baseUrl)

  const siteDomain = (env.PLINTH_SITE_DOMAIN || new URL(siteUrl).host).toLowerCase()
  if (!/^[a-z0-9.-]+(:\d{1,5})?$/.test(siteDomain) || siteDomain.startsWith('.')) {
    problems.push(`PLINTH_SITE_DOMAIN must be a host name with an optional port, got "${siteDomain}"`)
  }

  const databaseUrl = env.DATABASE_URL || null
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push('DATABASE_URL must be a postgres:// URL (leave it unset for SQLite)')
  }

  const logLevel = env.PLINTH_LOG_LEVEL || 'info'
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`PLINTH_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`)

  const signup = env.PLINTH_SIGNUP || 'open'
  if (signup !== 'open' && signup !== 'closed') problems.push(`PLINTH_SIGNUP must be open or closed, got "${signup}"`)

  const fetchAllow = parseHostList(env.PLINTH_FETCH_ALLOW_HOSTS ?? '')
  if (fetchAllow.invalid.length) {
    problems.push(
      `PLINTH_FETCH_ALLOW_HOSTS must list host names or IP addresses, each with an optional :port, got ${fetchAllow.invalid.map((h) => `"${h}"`).join(', ')}`,
    )
  }

  const config: Config = {
    port,
    host,
    dataDir: path.resolve(cwd, env.PLINTH_DATA_DIR || 'data'),
    baseUrl,
    siteUrl,
    siteDomain,
    siteScheme: siteUrl.startsWith('https:') ? 'https' : 'http',
    databaseUrl,
    publishRatePerMinute: int('PLINTH_PUBLISH_RATE_PER_MINUTE', 30, 1, 1_000_000),
    maxWebsites: int('PLINTH_MAX_WEBSITES', 50, 1, 1_000_000),
    freeChangesLimit: int('PLINTH_FREE_CHANGES_LIMIT', 1000, 0, 1_000_000_000),
    serveCacheBytes: int('PLINTH_SERVE_CACHE_BYTES', 128 * 1024 * 1024, 0, 64 * 1024 * 1024 * 1024),
    logLevel,
    signup: signup === 'closed' ? 'closed' : 'open',
    fetchCaFile: env.PLINTH_FETCH_CA_FILE ? path.resolve(cwd, env.PLINTH_FETCH_CA_FILE) : null,
    fetchAllowHosts: Object.freeze(fetchAllow.hosts),
  }
  if (problems.length) throw new ConfigError(`Invalid settings:\n  - ${problems.join('\n  - ')}`)
  return Object.freeze(config)
}
