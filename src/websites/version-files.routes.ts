import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { principalOf } from '../auth/auth.routes.ts'
import { FileContentSchema, FilePathParam, LineRangeQuery } from '../editing/editing.schemas.ts'
import { AUTH_ERRORS, BEARER_AUTH as security, errorResponses, success } from '../http/openapi.ts'
import { queryNumbers } from '../http/query-numbers.ts'
import type { VersionFiles } from './version-files.ts'
import { FileSetRefParam, VersionDiffSchema, WebsiteIdParam } from './websites.schemas.ts'

const tags = ['Publishing']

/** Reading a version's files back and comparing two versions (or a version and a draft), under /v1 (authenticated). */
export function versionFilesRoutes(versionFiles: VersionFiles): FastifyPluginAsyncTypebox {
  // eslint-disable-next-line @typescript-eslint/require-await -- Fastify awaits an async plugin, so a throw while registering rejects register()
  return async (app) => {
    app.get(
      '/websites/:websiteId/versions/:versionId/files/*',
      {
        preValidation: queryNumbers('offset', 'limit'),
        schema: {
          operationId: 'getVersionFile',
          tags,
          security,
          summary: 'Read one file of a version',
          description:
            'A text file (by its type, or `_redirects`, `_headers` and templates, and valid UTF-8) comes back as text, whole or the lines asked for with offset and limit (then `lines` says which, and how many the file has); any other file as base64, whole. versionId is the version id (job_...), its number, or a draft id (drf_...). Owners and editors.',
          params: Type.Object({ websiteId: WebsiteIdParam, versionId: FileSetRefParam, '*': FilePathParam }),
          querystring: LineRangeQuery,
          response: {
            200: success(FileContentSchema, 'The file.'),
            ...errorResponses([...AUTH_ERRORS, 'NOT_FOUND', 'VALIDATION_FAILED']),
          },
        },
      },
      (request) => {
        const { websiteId, versionId, '*': path } = request.params
        return versionFiles.read(principalOf(request), websiteId, versionId, path, request.query)
      },
    )

    app.get(
      '/websites/:websiteId/versions/:a/diff/:b',
      {
        schema: {
          operationId: 'diffWebsiteVersions',
          tags,
          security,
          summary: 'Compare two versions, file by file',
          description:
            'What changed from version `a` to `b` (reported as `from` and `to`), unchanged files left out: each file added, removed, changed or moved (the same bytes at a new path), with its sizes, and for a changed text file a unified diff (`diffTruncated` instead when it is too large to show). Each side is a version id (job_...), a version number or a draft id (drf_...). Owners and editors.',
          params: Type.Object({ websiteId: WebsiteIdParam, a: FileSetRefParam, b: FileSetRefParam }),
          response: {
            200: success(VersionDiffSchema, 'The files that differ.'),
            ...errorResponses([...AUTH_ERRORS, 'NOT_FOUND']),
          },
        },
      },
      (request) => {
        const { websiteId, a, b } = request.params
        return versionFiles.compare(principalOf(request), websiteId, a, b)
      },
    )
  }
}
