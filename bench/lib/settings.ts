/** Benchmark settings (overridable through BENCH_* variables for quick runs) and the Plinth child's env. */

const num = (name: string, fallback: number): number => {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, got "${raw}"`)
  return value
}

export const SETTINGS = Object.freeze({
  connections: num('BENCH_CONNECTIONS', 50),
  warmupSeconds: num('BENCH_WARMUP', 2),
  durationSeconds: num('BENCH_DURATION', 10),
  /** The measured seconds of each server are cut into this many interleaved slices. */
  slices: num('BENCH_SLICES', 5),
  /** Also measure the brotli variant of the page. */
  brotli: process.env.BENCH_BR !== '0',
  /** Add rows that split the Plinth/bare gap (bench/variant-server.ts). */
  diagnose: process.env.BENCH_DIAGNOSE === '1',
  /** 'auto': profile Plinth only when the ratio is below target; '1': always; '0': never. */
  profile: process.env.BENCH_PROFILE ?? 'auto',
  profileSeconds: num('BENCH_PROFILE_SECONDS', 5),
  /** Where to keep the raw .cpuprofile (else it is deleted with the temp dir). */
  profileOut: process.env.BENCH_PROFILE_OUT ?? '',
  publishIterations: num('BENCH_PUBLISH_ITERATIONS', 31),
  sites: num('BENCH_SITES', 1000),
  /** Entries bulk-inserted into the collection listEntries is timed on. */
  contentEntries: num('BENCH_CONTENT_ENTRIES', 100_000),
  /** Hostile requests the fuzz-memory phase sends. */
  fuzzRequests: num('BENCH_FUZZ_REQUESTS', 20_000),
})

export const SITE_DOMAIN = 'sites.bench.test'
export const BASE_URL = 'http://api.bench.test'

/** Environment of a Plinth child on its own data dir. */
export function plinthEnv(dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PORT: '0',
    HOST: '127.0.0.1',
    PLINTH_DATA_DIR: dataDir,
    PLINTH_BASE_URL: BASE_URL,
    PLINTH_SITE_DOMAIN: SITE_DOMAIN,
    PLINTH_LOG_LEVEL: 'silent',
    // Publishing benchmarks publish far faster than the default 30 per minute.
    PLINTH_PUBLISH_RATE_PER_MINUTE: '1000000',
    DATABASE_URL: '',
    ...extra,
  }
}
