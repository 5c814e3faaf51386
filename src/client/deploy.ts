/**
 * A deploy: a site folder checked against the instance's bundle limits and the authoring rules
 * before anything is sent, then published as a new site or a new version of one, sending only
 * the bytes the server lacks. A file the site already holds (in any of its versions) is given by
 * its sha256; a large one goes through an upload URL; the rest is sent inline. Should a reused
 * hash no longer name stored bytes (UNKNOWN_HASH), those files are sent once more with their
 * bytes.
 */
import { isUtf8 } from 'node:buffer'
import path from 'node:path'
import type { PublishViolation } from '../core/errors.ts'
import { BUNDLE_LIMITS, type BundleLimits } from '../core/limits.ts'
import type { Warning } from '../core/schemas.ts'
import type { ApiIndex } from '../http/api-index.schemas.ts'
import { checkBundle } from '../publishing/authoring-rules.ts'
import { contentTypeFor, readsText } from '../publishing/content-rules.ts'
import { type ApiClient, ApiError } from './api-client.ts'
import { findSite } from './site-commands.ts'
import type { LocalFile, SiteFolder } from './site-folder.ts'
import type { VendoredFile, VendorFetch } from '../vendoring/vendoring.ts'
import { vendorFolder } from './vendor-folder.ts'

/** Files at least this large are sent through an upload URL rather than inline (as base64, a third larger). */
export const UPLOAD_FROM_BYTES = 256 * 1024

export interface DeployRequest {
  folder: SiteFolder
  /** The site's slug or id; null deploys a new site. */
  site: string | null
  /** For a new site: its name and category. */
  name: string
  category: string
  /** Store the version without making it live (an existing site only: a new site's first version is live). */
  preview: boolean
  message?: string
  /** With a fetcher: the external files the pages and stylesheets name are brought into the bundle first (--vendor). */
  vendor?: VendorFetch
}

export type DeployProgress =
  | { step: 'vendoring' }
  | { step: 'checked'; files: number; bytes: number }
  | { step: 'planned'; reused: number; toSend: number; bytesToSend: number }
  | { step: 'sent'; bytes: number }
  | { step: 'publishing' }

export interface DeployResult {
  websiteId: string
  slug: string
  version: number
  versionId: string
  isCurrent: boolean
  pageUrl: string
  previewUrl?: string
  filesSent: number
  bytesSent: number
  filesReused: number
  warnings?: Warning[]
  /** With --vendor: each external file brought into the bundle. */
  vendored?: VendoredFile[]
}

/** The bundle breaks rules: every violation, found before sending (local) or by the server. */
export class DeployRefused extends Error {
  constructor(
    readonly violations: PublishViolation[],
    readonly where: 'local' | 'server',
  ) {
    super(`The site breaks ${violations.length} authoring rule${violations.length === 1 ? '' : 's'}`)
  }
}

type BundleFile = { path: string; sha256: string } | { path: string; uploadId: string } | { path: string; content: string; contentEncoding: 'utf8' | 'base64' }

interface PublishAnswer {
  websiteId: string
  jobId: string
  version: number
  slug?: string
  isCurrent?: boolean
  pageUrl: string
  previewUrl?: string
  warnings?: Warning[]
}

export async function deploy(api: ApiClient, request: DeployRequest, progress: (event: DeployProgress) => void): Promise<DeployResult> {
  // A server older than bundleLimits in its index enforces the defaults.
  const index = await api.call<Partial<ApiIndex>>('GET', '/v1')
  const limits: BundleLimits = { ...BUNDLE_LIMITS, ...index.bundleLimits }
  let { files } = request.folder
  let vendored: VendoredFile[] | undefined
  if (request.vendor) {
    progress({ step: 'vendoring' })
    const outcome = await vendorFolder(files, limits, request.vendor)
    if (outcome.failures.length > 0) {
      throw new DeployRefused(
        outcome.failures.map((f) => ({ code: f.code, path: f.path, detail: f.url, message: f.message })),
        'local',
      )
    }
    ;({ files, vendored } = outcome)
  }
  const local = checkBundle(
    files.map((file) => ({ path: file.path, stored: { hash: file.sha256, size: file.bytes.length, bytes: file.bytes } })),
    limits,
  )
  if (local.violations.length > 0) throw new DeployRefused(local.violations, 'local')
  progress({ step: 'checked', files: files.length, bytes: local.totalBytes })

  const site = request.site === null ? null : await findSite(api, request.site)
  const held = new Set(site?.versions.flatMap((version) => version.files.map((file) => file.sha256 ?? '')) ?? [])
  const sent = { files: 0, bytes: 0 }
  const toSend = files.filter((file) => !held.has(file.sha256))
  progress({ step: 'planned', reused: files.length - toSend.length, toSend: toSend.length, bytesToSend: toSend.reduce((sum, f) => sum + f.bytes.length, 0) })

  const bundleOf = async (byHash: (file: LocalFile) => boolean): Promise<BundleFile[]> => {
    const sending = files.filter((file) => !byHash(file))
    const uploads = await uploadLarge(api, sending, sent, progress)
    return files.map((file) => {
      if (byHash(file)) return { path: file.path, sha256: file.sha256 }
      const uploadId = uploads.get(file.path)
      sent.files++
      if (uploadId !== undefined) return { path: file.path, uploadId }
      sent.bytes += file.bytes.length
      return inline(file)
    })
  }
  const publish = async (bundle: BundleFile[]): Promise<PublishAnswer> => {
    progress({ step: 'publishing' })
    if (site === null) return api.call('POST', '/v1/websites', { name: request.name, category: request.category, files: bundle })
    return api.call('POST', `/v1/websites/${encodeURIComponent(site.id)}/versions`, { files: bundle, promote: !request.preview, message: request.message })
  }

  let answer: PublishAnswer
  try {
    answer = await publish(await bundleOf((file) => held.has(file.sha256)))
  } catch (error) {
    const lacking = unknownHashes(error)
    if (lacking === null) throw refusedOr(error)
    // Bytes swept since the site listed them: sent again, this time with their bytes.
    try {
      answer = await publish(await bundleOf((file) => held.has(file.sha256) && !lacking.has(file.path)))
    } catch (again) {
      throw refusedOr(again)
    }
  }
  progress({ step: 'sent', bytes: sent.bytes })
  return {
    websiteId: answer.websiteId,
    slug: answer.slug ?? site?.slug ?? '',
    version: answer.version,
    versionId: answer.jobId,
    isCurrent: answer.isCurrent ?? true,
    pageUrl: answer.pageUrl,
    ...(answer.previewUrl !== undefined && { previewUrl: answer.previewUrl }),
    filesSent: sent.files,
    bytesSent: sent.bytes,
    filesReused: files.length - sent.files,
    ...(answer.warnings !== undefined && { warnings: answer.warnings }),
    ...(vendored !== undefined && { vendored }),
  }
}

/** Reserves an upload for each large file and PUTs its bytes; the upload id of each by path. */
async function uploadLarge(
  api: ApiClient,
  files: LocalFile[],
  sent: { bytes: number },
  progress: (event: DeployProgress) => void,
): Promise<Map<string, string>> {
  const large = files.filter((file) => file.bytes.length >= UPLOAD_FROM_BYTES)
  const ids = new Map<string, string>()
  if (large.length === 0) return ids
  const { uploads } = await api.call<{ uploads: Array<{ uploadId: string; uploadUrl: string; headers: Record<string, string> }> }>('POST', '/v1/uploads', {
    files: large.map((file) => ({ filename: path.posix.basename(file.path), size: file.bytes.length })),
  })
  for (const [i, file] of large.entries()) {
    const upload = uploads[i]
    if (upload === undefined) throw new ApiError(0, 'BAD_RESPONSE', 'The server reserved fewer uploads than asked for')
    await api.putBytes(upload.uploadUrl, file.bytes, upload.headers)
    sent.bytes += file.bytes.length
    progress({ step: 'sent', bytes: sent.bytes })
    ids.set(file.path, upload.uploadId)
  }
  return ids
}

/** Text the server reads as text goes as UTF-8; anything else as base64. */
function inline(file: LocalFile): BundleFile {
  const text = readsText(file.path, contentTypeFor(file.path)) && isUtf8(file.bytes)
  return { path: file.path, content: file.bytes.toString(text ? 'utf8' : 'base64'), contentEncoding: text ? 'utf8' : 'base64' }
}

/** The paths whose sha256 the server could not use, when that is the only reason it refused; else null. */
function unknownHashes(error: unknown): Set<string> | null {
  if (!(error instanceof ApiError) || error.code !== 'PUBLISH_INVALID' || error.violations.length === 0) return null
  if (!error.violations.every((violation) => violation.code === 'UNKNOWN_HASH')) return null
  return new Set(error.violations.map((violation) => violation.path ?? ''))
}

function refusedOr(error: unknown): unknown {
  return error instanceof ApiError && error.code === 'PUBLISH_INVALID' ? new DeployRefused(error.violations, 'server') : error
}
