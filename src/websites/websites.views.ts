/** Row -> API object mapping, shared by every operation that returns websites or versions. */
import type { Config } from '../config.ts'
import { validationFailed } from '../core/errors.ts'
import { pageUrlFor } from '../core/site-address.ts'
import type { Warning } from '../core/schemas.ts'
import type { VersionFileRow, VersionRow } from '../db/types.ts'
import type { WebsiteListRow } from './websites.repository.ts'
import type { Job, Version, WebsiteSummary } from './websites.schemas.ts'

export function versionView(
  config: Config,
  slug: string,
  row: VersionRow,
  files: VersionFileRow[],
  currentVersionId: string | null,
  warnings: readonly Warning[],
): Version {
  return {
    id: row.id,
    jobId: row.id,
    version: row.number,
    kind: row.kind,
    status: row.status,
    ...(row.instruction === null ? {} : { instruction: row.instruction }),
    files: files.map((f) => ({ originalName: f.path, contentType: f.content_type, size: Number(f.size), sha256: f.hash })),
    isCurrent: row.id === currentVersionId,
    previewUrl: pageUrlFor(config, slug, row.number),
    warnings: [...warnings],
    createdAt: row.created_at,
  }
}

const livePageUrl = (config: Config, site: { slug: string; current_version_id: string | null }) =>
  site.current_version_id ? { pageUrl: pageUrlFor(config, site.slug) } : {}

export function websiteSummaryView(config: Config, row: WebsiteListRow): WebsiteSummary {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    ...livePageUrl(config, row),
    status: row.status,
    ...(row.current_version_id ? { currentVersionId: row.current_version_id } : {}),
    latestJobStatus: row.latest_status,
    paid: false,
    role: row.role,
    ...(row.role === 'editor' ? { ownerName: row.owner_name } : {}),
    subscription: null,
    passwordProtected: row.password_hash !== null,
    updatedAt: row.updated_at,
  }
}

export function jobView(config: Config, row: VersionRow & { slug: string }): Job {
  return {
    jobId: row.id,
    websiteId: row.website_id,
    status: row.status,
    currentPhase: row.current_phase,
    progressMessage: row.progress_message,
    ...(row.status === 'ready' ? { pageUrl: pageUrlFor(config, row.slug), previewUrl: pageUrlFor(config, row.slug, row.number) } : {}),
    attempt: row.attempt,
    statusUrl: `/jobs/${row.id}`,
  }
}

export { livePageUrl }

/** A version page cursor: the number of the last version shown, opaque to clients. */
export const encodeVersionCursor = (number: number): string => Buffer.from(JSON.stringify([number])).toString('base64url')

export function decodeVersionCursor(cursor: string): number {
  let parsed: unknown
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
  } catch {
    parsed = undefined
  }
  const number: unknown = Array.isArray(parsed) && parsed.length === 1 ? parsed[0] : undefined
  if (typeof number !== 'number' || !Number.isSafeInteger(number) || number < 1) {
    throw validationFailed({ cursor: 'is not a cursor returned by this listing (pass nextCursor unchanged)' })
  }
  return number
}
