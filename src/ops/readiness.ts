/**
 * Readiness (`GET /readyz`): whether this instance can serve now, that is whether the database and
 * the blob store answer. Each probe has a deadline, so a dependency that hangs (a stalled
 * connection, a bucket endpoint that accepts and never answers) makes the instance unready within
 * it instead of hanging the probe until the load balancer gives up on it.
 */
import { sql } from 'kysely'
import type { BlobStore } from '../blobs/blob-store.ts'
import type { Db } from '../db/connect.ts'

/** How long each dependency has to answer. Load balancers probe every few seconds with a timeout of about 5. */
export const PROBE_TIMEOUT_MS = 2_000

/** What a probe is given to check, by name: resolves when the dependency answers. */
export type ReadinessProbes = Record<string, () => Promise<unknown>>

export interface Readiness {
  ready: boolean
  /** `ok`, or `failed: <short reason>`, by probe name: an error code or class, never a message (the body is public). */
  checks: Record<string, string>
  /** The errors behind the failed checks, for the log. */
  errors: Record<string, unknown>
}

/** The stores an instance needs: a trivial query, and the blob store's own check (read and write access). */
export function storeProbes(db: Pick<Db, 'kysely'>, blobs: Pick<BlobStore, 'check'>): ReadinessProbes {
  return {
    database: () => sql`select 1`.execute(db.kysely),
    blobStore: () => blobs.check(),
  }
}

/** Runs every probe at once, each under its deadline. */
export async function checkReadiness(probes: ReadinessProbes, timeoutMs = PROBE_TIMEOUT_MS): Promise<Readiness> {
  const names = Object.keys(probes)
  const outcomes = await Promise.all(names.map((name) => withDeadline(probes[name]!, timeoutMs)))
  const readiness: Readiness = { ready: true, checks: {}, errors: {} }
  names.forEach((name, i) => {
    const outcome = outcomes[i]!
    if (outcome === OK) {
      readiness.checks[name] = 'ok'
      return
    }
    readiness.ready = false
    readiness.checks[name] = `failed: ${reasonOf(outcome.error)}`
    readiness.errors[name] = outcome.error
  })
  return readiness
}

const OK: unique symbol = Symbol('ok')

class ProbeTimeout extends Error {
  readonly code = 'TIMEOUT'
  constructor(timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`)
  }
}

async function withDeadline(probe: () => Promise<unknown>, timeoutMs: number): Promise<typeof OK | { error: unknown }> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<{ error: unknown }>((resolve) => {
    timer = setTimeout(() => resolve({ error: new ProbeTimeout(timeoutMs) }), timeoutMs)
  })
  const answer = Promise.resolve()
    .then(probe)
    .then(
      (): typeof OK => OK,
      (error: unknown) => ({ error }),
    )
  try {
    return await Promise.race([answer, deadline])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * What a failed check shows: the error's code (ECONNREFUSED, ENOTDIR, a SQLSTATE, TIMEOUT) or
 * class (NoSuchBucket, AccessDenied). Messages stay in the log: they name internal hosts, paths
 * and buckets, and /readyz answers anyone.
 */
function reasonOf(error: unknown): string {
  const e = error as { code?: unknown; name?: unknown } | null
  const reason = typeof e?.code === 'string' && e.code !== '' ? e.code : typeof e?.name === 'string' && e.name !== 'Error' ? e.name : 'error'
  return reason.replace(/[^A-Za-z0-9_.-]/g, '').slice(0, 64) || 'error'
}
