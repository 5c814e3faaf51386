/**
 * Deploying a folder from the dashboard, as the signed-in person, on a new site or as a site's
 * next version. The drop area's script (assets/deploy.js) hashes the files in the browser, asks
 * which hashes the server lacks (`/dashboard/deploy/missing`, answered by the same check a
 * publish makes of a file given by `sha256`: bytes of a version or open draft of a site the
 * person owns or edits, or of an upload of theirs), reserves uploads for the large ones (the
 * signed upload URLs of the REST API, given as paths on this origin) and publishes the bundle
 * with every other file given by `sha256`. Those calls are JSON, answered with the error
 * envelope, and carry the page's CSRF token in `X-CSRF-Token`; the publish takes the REST API's
 * own request schemas. Without JavaScript, a `.zip` is sent through a plain multipart form and
 * unpacked on the server (publishing/zip-bundle.ts); its answer is the new version's page, or a
 * page listing every problem.
 */
import multipart from '@fastify/multipart'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { CATEGORIES, type Category } from '../core/enums.ts'
import { AppError } from '../core/errors.ts'
import { MAX_FOLDER_ENTRIES } from '../core/folder-skips.js'
import { formatSize } from '../core/limits.ts'
import { ref } from '../core/schemas.ts'
import { answerWithEnvelope } from '../http/errors.http.ts'
import { statusOf } from '../http/error-status.ts'
import type { PublishFileInput } from '../publishing/publishing.schemas.ts'
import { readZipBundle } from '../publishing/zip-bundle.ts'
import { createUploadsRequestSchema, type CreateUploadsRequest } from '../uploads/uploads.schemas.ts'
import type { UploadsService } from '../uploads/uploads.service.ts'
import type { VersionPatches } from '../websites/version-patches.ts'
import type { WebsitePublishing } from '../websites/website-publishing.ts'
import type { PublishRequestSchemas, PublishVersionRequest, PublishWebsiteRequest } from '../websites/websites.schemas.ts'
import { accountOf, field, principalOf } from './forms.ts'
import { sendPage } from './pages.ts'
import { pageContext, type WebContext } from './web-context.ts'

export interface DeployServices {
  publishing: WebsitePublishing
  patches: VersionPatches
  uploads: Pick<UploadsService, 'create' | 'usableHashes'>
  /** The publish request schemas with this instance's bundle limits (the REST API's own). */
  publishSchemas: PublishRequestSchemas
}

/** What the drop area is told after a publish: the version, where to see it, and what was sent. */
export interface DeployAnswer {
  websiteId: string
  version: number
  versionId: string
  isCurrent: boolean
  pageUrl: string
  previewUrl?: string
  /** The dashboard page of the new version: its preview link and its promote button. */
  versionPage: string
  /** Files sent with their bytes (inline or as an upload), and those given by sha256. */
  filesSent: number
  filesReused: number
  /** Bytes sent inline in the publish itself. */
  bytesInline: number
}

const SHA256 = Type.String({ pattern: '^[0-9a-f]{64}$' })
const MissingRequest = Type.Object({ hashes: Type.Array(SHA256, { maxItems: MAX_FOLDER_ENTRIES }) }, { additionalProperties: false })

/** The multipart form of a `.zip`: a few short fields and the one file. */
const FORM_FIELD_MAX_BYTES = 16 * 1024
const FORM_FIELDS_MAX = 8

const versionPage = (websiteId: string, version: number) => `/dashboard/sites/${encodeURIComponent(websiteId)}/versions/${version}`

function answerOf(files: PublishFileInput[], result: Omit<DeployAnswer, 'versionPage' | 'filesSent' | 'filesReused' | 'bytesInline'>): DeployAnswer {
  const inline = files.filter((file) => file.content !== undefined)
  return {
    ...result,
    versionPage: versionPage(result.websiteId, result.version),
    filesSent: files.filter((file) => file.sha256 === undefined).length,
    filesReused: files.filter((file) => file.sha256 !== undefined).length,
    bytesInline: inline.reduce((sum, file) => sum + Buffer.byteLength(file.content!, file.contentEncoding === 'base64' ? 'base64' : 'utf8'), 0),
  }
}

export function deployRoutes(web: WebContext, services: DeployServices) {
  const { publishing, patches, uploads, publishSchemas } = services
  const limits = web.config.bundleLimits
  /** A zip holds at most the bundle's bytes, plus room for its headers and what compresses badly. */
  const zipMaxBytes = limits.maxBundleBytes + Math.ceil(limits.maxBundleBytes / 4) + 64 * 1024

  const createSite = async (request: FastifyRequest, input: PublishWebsiteRequest): Promise<DeployAnswer> => {
    const { result } = await publishing.create(principalOf(accountOf(request)), input)
    const { websiteId, jobId, version, pageUrl } = result
    return answerOf(input.files, { websiteId, version, versionId: jobId, isCurrent: true, pageUrl })
  }
  const createVersion = async (request: FastifyRequest, websiteId: string, input: PublishVersionRequest): Promise<DeployAnswer> => {
    const { result } = await patches.publish(principalOf(accountOf(request)), websiteId, input)
    const { jobId, version, isCurrent, pageUrl, previewUrl } = result
    return answerOf(input.files ?? [], { websiteId: result.websiteId, version, versionId: jobId, isCurrent, pageUrl, ...(previewUrl && { previewUrl }) })
  }

  return async (app: FastifyInstance) => {
    // The drop area's calls: JSON in, JSON out, failures as the envelope.
    // eslint-disable-next-line @typescript-eslint/require-await -- Fastify awaits an async plugin, so a throw while registering rejects register()
    await app.register(async (json) => {
      json.setErrorHandler((error: FastifyError, request, reply) => answerWithEnvelope(csrfRefusal(error) ?? error, request, reply))

      json.post<{ Body: { hashes: string[] } }>('/dashboard/deploy/missing', { schema: { hide: true, body: MissingRequest } }, async (request) => {
        const hashes = [...new Set(request.body.hashes)]
        const usable = await uploads.usableHashes({ userId: accountOf(request).userId }, hashes)
        return { missing: hashes.filter((hash) => !usable.has(hash)) }
      })

      json.post<{ Body: CreateUploadsRequest }>(
        '/dashboard/deploy/uploads',
        { schema: { hide: true, body: ref(createUploadsRequestSchema(limits)) } },
        async (request, reply) => {
          const reserved = await uploads.create(principalOf(accountOf(request)), request.body)
          // The same signed URLs, on the page's own origin: the upload PUT is served on every host of the instance.
          const samePage = reserved.uploads.map((upload) => ({ ...upload, uploadUrl: new URL(upload.uploadUrl).pathname + new URL(upload.uploadUrl).search }))
          return reply.code(201).send({ uploads: samePage })
        },
      )

      json.post<{ Body: PublishWebsiteRequest }>(
        '/dashboard/deploy',
        { schema: { hide: true, body: ref(publishSchemas.PublishWebsiteRequestSchema) } },
        async (request, reply) => reply.code(201).send(await createSite(request, request.body)),
      )

      json.post<{ Params: { websiteId: string }; Body: PublishVersionRequest }>(
        '/dashboard/sites/:websiteId/deploy',
        { schema: { hide: true, body: ref(publishSchemas.PublishVersionRequestSchema) } },
        async (request, reply) => reply.code(201).send(await createVersion(request, request.params.websiteId, request.body)),
      )
    })

    // The .zip form, which works without JavaScript; the drop area sends a dropped .zip here too, asking for JSON.
    await app.register(async (form) => {
      await form.register(multipart, {
        attachFieldsToBody: 'keyValues',
        limits: { fileSize: zipMaxBytes, files: 1, fields: FORM_FIELDS_MAX, parts: FORM_FIELDS_MAX + 1, fieldSize: FORM_FIELD_MAX_BYTES },
      })

      const zipFiles = async (request: FastifyRequest): Promise<PublishFileInput[]> => {
        const archive = (request.body as Record<string, unknown> | undefined)?.bundle
        if (!Buffer.isBuffer(archive) || archive.length === 0) {
          throw new AppError('VALIDATION_FAILED', 'Choose a .zip of your site to publish.', { fields: { bundle: 'choose a .zip file' } })
        }
        const { files } = await readZipBundle(archive, limits.maxBundleBytes)
        if (files.length === 0) throw new AppError('ARCHIVE_INVALID', 'The .zip cannot be published: it holds no file to publish.')
        return files.map((file) => ({ path: file.path, content: file.bytes.toString('base64'), contentEncoding: 'base64' as const }))
      }
      const answer = async (request: FastifyRequest, reply: FastifyReply, publish: () => Promise<DeployAnswer>) => {
        const wantsJson = request.headers.accept?.includes('application/json') === true
        try {
          const result = await publish()
          if (wantsJson) return reply.code(201).send(result)
          return reply.redirect(`${result.versionPage}?done=deployed`, 303)
        } catch (error) {
          if (wantsJson) return answerWithEnvelope(error as FastifyError, request, reply)
          if (!(error instanceof AppError) || !['PUBLISH_INVALID', 'ARCHIVE_INVALID', 'VALIDATION_FAILED'].includes(error.code)) throw error
          return refusalPage(request, reply, error)
        }
      }

      form.post('/dashboard/deploy/zip', { schema: { hide: true } }, (request, reply) =>
        answer(request, reply, async () => {
          const category = field(request, 'category')
          if (!(CATEGORIES as readonly string[]).includes(category)) {
            throw new AppError('VALIDATION_FAILED', 'Choose a category for the new site.', { fields: { category: 'choose one of the categories' } })
          }
          const name = field(request, 'name')
          const files = await zipFiles(request)
          return createSite(request, { category: category as Category, files, ...(name !== '' && { name }) })
        }),
      )

      form.post<{ Params: { websiteId: string } }>('/dashboard/sites/:websiteId/deploy/zip', { schema: { hide: true } }, (request, reply) =>
        answer(request, reply, async () => {
          const message = field(request, 'message')
          const files = await zipFiles(request)
          return createVersion(request, request.params.websiteId, { files, promote: field(request, 'promote') === 'true', ...(message !== '' && { message }) })
        }),
      )
    })
  }

  /** The refusal of a .zip, as a page: the message, and every violation with the file it concerns. */
  function refusalPage(request: FastifyRequest, reply: FastifyReply, error: AppError) {
    const data = {
      title: 'Not published · Plinth',
      message: error.message,
      violations: error.violations ?? [],
      back: samePagePath(request) ?? '/dashboard',
      zipMax: formatSize(zipMaxBytes),
    }
    return sendPage(reply, pageContext(web, request, reply), 'deploy-refused', data, { status: statusOf(error) })
  }
}

/** The page the form was sent from, when it is one of this site's. */
function samePagePath(request: FastifyRequest): string | null {
  try {
    const url = new URL(request.headers.referer ?? '')
    return url.host === request.headers.host ? url.pathname : null
  } catch {
    return null
  }
}

/** A refused CSRF token, told to the script in the envelope (a page gets words of its own, forms.ts). */
function csrfRefusal(error: FastifyError): AppError | null {
  if (error.code !== 'FST_CSRF_INVALID_TOKEN' && error.code !== 'FST_CSRF_MISSING_SECRET') return null
  return new AppError('ORIGIN_NOT_ALLOWED', 'This call carries no valid token of this page: reload the page and try again.')
}
