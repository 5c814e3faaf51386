/**
 * Every setting Plinth reads, parsed once at boot from the environment, validated, frozen and
 * passed down. Nothing else in src/ reads process.env.
 */
import { isIP } from 'node:net'
import proxyAddr from '@fastify/proxy-addr'
import path from 'node:path'
import {
  BROWSER_PAGE_SECONDS_DEFAULT,
  BROWSER_PAGE_SECONDS_RANGE,
  BROWSER_PAGES_DEFAULT,
  BUNDLE_LIMIT_RANGES,
  BUNDLE_LIMITS,
  type BundleLimits,
  DRAFT_TTL_DAYS_DEFAULT,
  FORM_RATE_LIMITS,
  WEBHOOK_POLL_MS_DEFAULT,
  WEBHOOK_RETRY_SCHEDULE_DEFAULT,
  WEBHOOK_TIMEOUT_MS_DEFAULT,
} from './core/limits.ts'
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
  /** Called with a site's host after it goes live on a new version or is deleted, for a CDN to purge (`PLINTH_PURGE_URL`). */
  purgeUrl: string | null
  /** The bearer token `GET /metrics` requires (`PLINTH_METRICS_TOKEN`); null leaves /metrics open to anyone who reaches it. */
  metricsToken: string | null
  /** Where blobs live: the filesystem under dataDir (default), or an S3-compatible bucket (`PLINTH_BLOB_STORE=s3`). */
  blobStore: 'fs' | 's3'
  /** The bucket's settings when blobStore is s3 (credentials come from the standard AWS variables). */
  s3: S3Settings | null
  /**
   * The proxies in front of Plinth whose `X-Forwarded-For` is believed (`PLINTH_TRUST_PROXY`):
   * addresses, CIDR ranges, or `loopback`, `linklocal`, `uniquelocal`. Empty: the connection's
   * own address is the client's. Throttles count per client address, so behind a load balancer
   * they need it.
   */
  trustProxy: readonly string[]
  /** DNS servers that custom domains' TXT challenges are checked with (`PLINTH_DNS_SERVERS`), as `addr:port`; empty: the system's resolver. */
  dnsServers: readonly string[]
  /**
   * What one published bundle may hold: the interface's limits unless `PLINTH_MAX_FILES`,
   * `PLINTH_MAX_PAGES`, `PLINTH_MAX_FILE_BYTES` or `PLINTH_MAX_BUNDLE_BYTES` set others. Uploads
   * and the image library follow the per-file size, the JSON body limit the bundle size.
   */
  bundleLimits: Readonly<BundleLimits>
  /** Days a draft nobody writes to is kept (`PLINTH_DRAFT_TTL_DAYS`); every write starts them again. */
  draftTtlDays: number
  /**
   * The browser executable that loads pages for screenshots and browser reports (`PLINTH_BROWSER`;
   * unset: `/usr/bin/chromium`, used when present); null when set to `off`.
   */
  browser: string | null
  /** Pages the browser loads at once (`PLINTH_BROWSER_PAGES`); more wait in a queue. */
  browserPages: number
  /** Seconds one page may keep the browser, navigation to screenshot (`PLINTH_BROWSER_PAGE_SECONDS`). */
  browserPageSeconds: number
  /** The SMTP server form submissions are e-mailed through (`PLINTH_SMTP_URL`, smtp:// or smtps://); null sends no e-mail. */
  smtpUrl: string | null
  /** The From of every e-mail Plinth sends (`PLINTH_MAIL_FROM`). */
  mailFrom: string
  /** Form posts taken per minute per site and per client address (`PLINTH_FORM_RATE_PER_SITE`, `PLINTH_FORM_RATE_PER_ADDRESS`). */
  formRates: Readonly<{ perSitePerMinute: number; perAddressPerMinute: number }>
  /** Webhook deliveries: the waits between attempts, in ms, one attempt's time limit, and how often each instance looks for due ones. */
  webhooks: Readonly<WebhookSettings>
  /** Counting site traffic (`PLINTH_TRAFFIC=on|off`) and how often each instance writes its counts (`PLINTH_TRAFFIC_FLUSH_SECONDS`). */
  traffic: Readonly<{ enabled: boolean; flushSeconds: number }>
}

export interface WebhookSettings {
  /** `PLINTH_WEBHOOK_RETRY_SCHEDULE` (seconds) in ms: the wait before each retry; its length is the number of retries. */
  retryDelaysMs: readonly number[]
  timeoutMs: number
  pollMs: number
}

export interface S3Settings {
  bucket: string
  region: string
  /** For MinIO, R2, Ceph and tests; null means AWS. */
  endpoint: string | null
  forcePathStyle: boolean
  /** Put before every key (`PLINTH_S3_PREFIX`), so one bucket can serve several deployments. */
  prefix: string
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>

/** The browser used when PLINTH_BROWSER is unset: Debian's Chromium package. */
const DEFAULT_BROWSER = '/usr/bin/chromium'

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

  const purgeUrl = env.PLINTH_PURGE_URL || null
  if (purgeUrl !== null && !(URL.canParse(purgeUrl) && /^https?:$/.test(new URL(purgeUrl).protocol))) {
    problems.push(`PLINTH_PURGE_URL must be an http(s) URL, got "${purgeUrl}"`)
  }

  const metricsToken = env.PLINTH_METRICS_TOKEN || null
  if (metricsToken !== null && !/^[\x21-\x7e]{16,512}$/.test(metricsToken)) {
    problems.push('PLINTH_METRICS_TOKEN must be 16 to 512 visible ASCII characters without spaces (e.g. the output of openssl rand -hex 32)')
  }

  const blobStore = env.PLINTH_BLOB_STORE || 'fs'
  if (blobStore !== 'fs' && blobStore !== 's3') problems.push(`PLINTH_BLOB_STORE must be fs or s3, got "${blobStore}"`)
  let s3: S3Settings | null = null
  if (blobStore === 's3') {
    const bucket = env.PLINTH_S3_BUCKET ?? ''
    if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket))
      problems.push(`PLINTH_S3_BUCKET must name a bucket (3 to 63 lowercase letters, digits, dots and hyphens), got "${bucket}"`)
    const endpoint = env.PLINTH_S3_ENDPOINT ? origin('PLINTH_S3_ENDPOINT', '') : null
    const pathStyle = env.PLINTH_S3_FORCE_PATH_STYLE || 'false'
    if (pathStyle !== 'true' && pathStyle !== 'false') problems.push(`PLINTH_S3_FORCE_PATH_STYLE must be true or false, got "${pathStyle}"`)
    const prefix = env.PLINTH_S3_PREFIX ?? ''
    if (!/^[A-Za-z0-9!_.*'()/-]*$/.test(prefix) || prefix.startsWith('/'))
      problems.push(`PLINTH_S3_PREFIX must be a key prefix of letters, digits and -_.!*'()/ not starting with /, got "${prefix}"`)
    s3 = { bucket, region: env.PLINTH_S3_REGION || 'us-east-1', endpoint, forcePathStyle: pathStyle === 'true', prefix }
  } else if (env.PLINTH_S3_BUCKET) {
    problems.push('PLINTH_S3_BUCKET is set but PLINTH_BLOB_STORE is not s3: set PLINTH_BLOB_STORE=s3 to store blobs in the bucket')
  }

  const trustProxy = (env.PLINTH_TRUST_PROXY ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
  try {
    proxyAddr.compile(trustProxy)
  } catch (error) {
    problems.push(`PLINTH_TRUST_PROXY must list IP addresses, CIDR ranges or loopback, linklocal, uniquelocal: ${(error as Error).message}`)
  }

  const dnsServers = parseDnsServers(env.PLINTH_DNS_SERVERS ?? '')
  if (dnsServers.invalid.length) {
    problems.push(
      `PLINTH_DNS_SERVERS must list IP addresses or host names, each with an optional :port (IPv6 as [addr]:port), got ${dnsServers.invalid.map((s) => `"${s}"`).join(', ')}`,
    )
  }

  const bundleLimit = (name: string, key: keyof typeof BUNDLE_LIMIT_RANGES): number =>
    int(name, BUNDLE_LIMITS[key], BUNDLE_LIMIT_RANGES[key].min, BUNDLE_LIMIT_RANGES[key].max)
  const bundleLimits: BundleLimits = {
    ...BUNDLE_LIMITS,
    maxFiles: bundleLimit('PLINTH_MAX_FILES', 'maxFiles'),
    maxHtmlPages: bundleLimit('PLINTH_MAX_PAGES', 'maxHtmlPages'),
    maxFileBytes: bundleLimit('PLINTH_MAX_FILE_BYTES', 'maxFileBytes'),
    maxBundleBytes: bundleLimit('PLINTH_MAX_BUNDLE_BYTES', 'maxBundleBytes'),
  }

  const browserSetting = env.PLINTH_BROWSER || DEFAULT_BROWSER
  if (browserSetting !== 'off' && !path.isAbsolute(browserSetting)) {
    problems.push(`PLINTH_BROWSER must be the absolute path of a Chromium executable, or off, got "${browserSetting}"`)
  }
  const smtpUrl = env.PLINTH_SMTP_URL || null
  if (smtpUrl !== null && !(URL.canParse(smtpUrl) && /^smtps?:$/.test(new URL(smtpUrl).protocol) && new URL(smtpUrl).hostname !== '')) {
    problems.push('PLINTH_SMTP_URL must be an smtp:// or smtps:// URL with a host, e.g. smtps://user:password@mail.example.com')
  }
  const siteHost = new URL(siteUrl).hostname
  const mailFrom = env.PLINTH_MAIL_FROM || `Plinth <plinth@${siteHost.includes('.') ? siteHost : 'localhost.localdomain'}>`
  if (/[\r\n]/.test(mailFrom) || !/@[^\s@>]+\.[^\s@>]+>?$/.test(mailFrom)) {
    problems.push(`PLINTH_MAIL_FROM must be an e-mail address, optionally with a name ("Plinth <forms@example.com>"), got "${mailFrom}"`)
  }
  const retryDelaysMs = parseRetrySchedule(env.PLINTH_WEBHOOK_RETRY_SCHEDULE)
  if (retryDelaysMs === null) {
    problems.push(
      `PLINTH_WEBHOOK_RETRY_SCHEDULE must list 1 to 20 waits in seconds (decimals allowed, each at most 7 days), comma-separated, got "${env.PLINTH_WEBHOOK_RETRY_SCHEDULE}"`,
    )
  }

  const trafficSetting = env.PLINTH_TRAFFIC || 'on'
  if (trafficSetting !== 'on' && trafficSetting !== 'off') problems.push(`PLINTH_TRAFFIC must be on or off, got "${trafficSetting}"`)

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
    purgeUrl,
    metricsToken,
    blobStore: blobStore === 's3' ? 's3' : 'fs',
    s3: s3 && Object.freeze(s3),
    dnsServers: Object.freeze(dnsServers.servers),
    trustProxy: Object.freeze(trustProxy),
    bundleLimits: Object.freeze(bundleLimits),
    draftTtlDays: int('PLINTH_DRAFT_TTL_DAYS', DRAFT_TTL_DAYS_DEFAULT, 1, 3650),
    browser: browserSetting === 'off' ? null : browserSetting,
    browserPages: int('PLINTH_BROWSER_PAGES', BROWSER_PAGES_DEFAULT, 1, 16),
    browserPageSeconds: int('PLINTH_BROWSER_PAGE_SECONDS', BROWSER_PAGE_SECONDS_DEFAULT, BROWSER_PAGE_SECONDS_RANGE.min, BROWSER_PAGE_SECONDS_RANGE.max),
    smtpUrl,
    mailFrom,
    formRates: Object.freeze({
      perSitePerMinute: int('PLINTH_FORM_RATE_PER_SITE', FORM_RATE_LIMITS.perSitePerMinute, 1, 1_000_000),
      perAddressPerMinute: int('PLINTH_FORM_RATE_PER_ADDRESS', FORM_RATE_LIMITS.perAddressPerMinute, 1, 1_000_000),
    }),
    webhooks: Object.freeze({
      retryDelaysMs: Object.freeze(retryDelaysMs ?? WEBHOOK_RETRY_SCHEDULE_DEFAULT.map((s) => s * 1000)),
      timeoutMs: int('PLINTH_WEBHOOK_TIMEOUT_MS', WEBHOOK_TIMEOUT_MS_DEFAULT, 100, 60_000),
      pollMs: int('PLINTH_WEBHOOK_POLL_MS', WEBHOOK_POLL_MS_DEFAULT, 10, 60_000),
    }),
    traffic: Object.freeze({ enabled: trafficSetting !== 'off', flushSeconds: int('PLINTH_TRAFFIC_FLUSH_SECONDS', 10, 1, 3600) }),
  }
  if (problems.length) throw new ConfigError(`Invalid settings:\n  - ${problems.join('\n  - ')}`)
  return Object.freeze(config)
}

/** A host name as a DNS server may be named: dot-separated labels of letters, digits and inner hyphens. */
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i

/**
 * `PLINTH_DNS_SERVERS`: comma-separated `host`, `host:port`, `[v6addr]` or `[v6addr]:port`, where a
 * host is an IPv4 address or a name (`unbound:53` in a container network), which the system's
 * resolver turns into an address at each check (domains/dns-check.ts). Entries come out as
 * `host:port`, IPv6 in brackets, names lowercased.
 */
function parseDnsServers(raw: string): { servers: string[]; invalid: string[] } {
  const servers: string[] = []
  const invalid: string[] = []
  for (const entry of raw.split(',').map((s) => s.trim())) {
    if (entry === '') continue
    // `[v6]:port`, `host:port`, or a host alone (a bare IPv6 address takes no port).
    const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(entry)
    const plain = /^([^:[\]]+)(?::(\d{1,5}))?$/.exec(entry)
    const match = bracketed ?? plain
    const host = match?.[1] ?? entry
    const portText = match?.[2]
    const family = isIP(host)
    const port = portText === undefined ? 53 : Number(portText)
    // A name of digits and dots alone is a malformed address, not a name.
    const named = plain !== null && family === 0 && HOST_NAME.test(host) && !/^[\d.]+$/.test(host)
    if ((family === 0 && !named) || (bracketed && family !== 6) || port < 1 || port > 65535) invalid.push(entry)
    else servers.push(family === 6 ? `[${host}]:${port}` : `${host.toLowerCase()}:${port}`)
  }
  return { servers, invalid }
}

/** `PLINTH_WEBHOOK_RETRY_SCHEDULE`: waits in seconds, comma-separated, as ms; undefined when unset, null when invalid. */
function parseRetrySchedule(raw: string | undefined): number[] | null | undefined {
  if (raw === undefined || raw.trim() === '') return undefined
  const items = raw.split(',').map((s) => s.trim())
  if (items.length > 20) return null
  const delays = items.map((item) => (/^\d+(\.\d+)?$/.test(item) ? Math.round(Number(item) * 1000) : NaN))
  return delays.every((ms) => Number.isFinite(ms) && ms <= 7 * 24 * 3600 * 1000) ? delays : null
}
