import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { principalOf } from '../auth/auth.routes.ts'
import { DRAFTS_PER_SITE, MAX_EDITS } from '../core/limits.ts'
import { ref } from '../core/schemas.ts'
import { FileContentSchema, LineRangeQuery } from '../editing/editing.schemas.ts'
import { AUTH_ERRORS, BEARER_AUTH as security, BODY_ERRORS, errorResponses, OPTIONAL_BODY, success } from '../http/openapi.ts'
import { queryNumbers } from '../http/query-numbers.ts'
import { rateLimitHeaders } from '../http/rate-limit-headers.ts'
import { PublishVersionResultSchema, WebsiteIdParam, WebsiteParams } from '../websites/websites.schemas.ts'
import type { DraftFiles } from './draft-files.ts'
import type { DraftsService } from './drafts.service.ts'
import {
  CreateDraftRequestSchema,
  DraftFileEditsSchema,
  DraftFileMoveSchema,
  DraftFileWriteSchema,
  DraftFileWrittenSchema,
  DraftIdParam,
  DraftListSchema,
  DraftSchema,
  PublishDraftRequestSchema,
  UpdateDraftRequestSchema,
} from './drafts.schemas.ts'

const tags = ['Drafts']
const DraftParams = Type.Object({ websiteId: WebsiteIdParam, draftId: DraftIdParam })
/**
 * A file of a draft: its path after `/files/`, slashes as they are. The router names the wildcard
 * `*`; the OpenAPI document names it `path` (app.ts).
 */
const FileParams = Type.Object({
  websiteId: WebsiteIdParam,
  draftId: DraftIdParam,
  '*': Type.String({ description: 'The path of the file in the site, e.g. `index.html` or `css/site.css`, its slashes as they are.' }),
})

/** The drafts operations, under /v1 (authenticated). Owners and editors alike; anyone else gets 404. */
export function draftsRoutes({ drafts, draftFiles }: { drafts: DraftsService; draftFiles: DraftFiles }): FastifyPluginAsyncTypebox {
  // eslint-disable-next-line @typescript-eslint/require-await -- Fastify awaits an async plugin, so a throw while registering rejects register()
  return async (app) => {
    const base = '/websites/:websiteId/drafts'

    app.post(
      base,
      {
        preValidation: OPTIONAL_BODY.preValidation,
        schema: {
          ...OPTIONAL_BODY.schema,
          operationId: 'createDraft',
          tags,
          security,
          summary: 'Start a draft: a working copy of a version',
          description: `A copy of the files of baseVersion (by id or number; the live version by default) to change file by file, preview at previewUrl, and publish as the next version. A site has at most ${DRAFTS_PER_SITE} open drafts (403 DRAFT_LIMIT_REACHED). A draft nobody writes to expires: expiresAt says when, and every write moves it on. Owners and editors.`,
          params: WebsiteParams,
          body: ref(CreateDraftRequestSchema),
          response: {
            201: success(DraftSchema, 'The draft, with its files (all unchanged).'),
            ...errorResponses([...AUTH_ERRORS, ...BODY_ERRORS, 'BAD_REQUEST', 'NOT_FOUND', 'DRAFT_LIMIT_REACHED']),
          },
        },
      },
      async (request, reply) => reply.code(201).send(await drafts.create(principalOf(request), request.params.websiteId, request.body)),
    )

    app.get(
      base,
      {
        schema: {
          operationId: 'listDrafts',
          tags,
          security,
          summary: "List a site's open drafts",
          params: WebsiteParams,
          response: { 200: success(DraftListSchema, 'The open drafts, oldest first.'), ...errorResponses([...AUTH_ERRORS, 'NOT_FOUND']) },
        },
      },
      (request) => drafts.list(principalOf(request), request.params.websiteId),
    )

    app.get(
      `${base}/:draftId`,
      {
        schema: {
          operationId: 'getDraft',
          tags,
          security,
          summary: 'Get a draft with its files',
          description: 'Every file with its size, sha256, contentType and how it differs from the base version (change).',
          params: DraftParams,
          response: { 200: success(DraftSchema, 'The draft.'), ...errorResponses([...AUTH_ERRORS, 'NOT_FOUND']) },
        },
      },
      (request) => drafts.get(principalOf(request), request.params.websiteId, request.params.draftId),
    )

    app.patch(
      `${base}/:draftId`,
      {
        schema: {
          operationId: 'updateDraft',
          tags,
          security,
          summary: "Set a draft's expiry",
          description:
            'expiresAt: when the draft expires at the latest; its preview answers 404 from then on. Writes still move its expiry on, never past this; null removes the limit. In the past, unparseable or more than a year ahead is 400 BAD_REQUEST.',
          params: DraftParams,
          body: ref(UpdateDraftRequestSchema),
          response: {
            200: success(DraftSchema, 'The draft, with its expiresAt.'),
            ...errorResponses([...AUTH_ERRORS, ...BODY_ERRORS, 'BAD_REQUEST', 'NOT_FOUND']),
          },
        },
      },
      (request) => drafts.setExpiry(principalOf(request), request.params.websiteId, request.params.draftId, request.body.expiresAt),
    )

    app.delete(
      `${base}/:draftId`,
      {
        schema: {
          operationId: 'discardDraft',
          tags,
          security,
          summary: 'Discard a draft',
          params: DraftParams,
          response: { 204: Type.Null({ description: 'Discarded: its preview stops serving.' }), ...errorResponses([...AUTH_ERRORS, 'NOT_FOUND']) },
        },
      },
      async (request, reply) => {
        await drafts.discard(principalOf(request), request.params.websiteId, request.params.draftId)
        return reply.code(204).send(null)
      },
    )

    app.post(
      `${base}/:draftId/publish`,
      {
        preValidation: OPTIONAL_BODY.preValidation,
        schema: {
          ...OPTIONAL_BODY.schema,
          operationId: 'publishDraft',
          tags,
          security,
          summary: 'Publish a draft as the next version',
          description:
            "Checks the draft's files as a whole bundle (every authoring rule, 422 PUBLISH_INVALID) and publishes them as the site's next version, live at once unless promote is false; the draft is then gone. While a version newer than the draft's base exists, it is refused with 409 VERSION_CONFLICT naming the newer versions and what they changed, unless overwrite is true. Counts toward the publish rate limit.",
          params: DraftParams,
          body: ref(PublishDraftRequestSchema),
          response: {
            201: success(PublishVersionResultSchema, 'Published: the version is stored, and live when promoted.'),
            ...errorResponses([...AUTH_ERRORS, ...BODY_ERRORS, 'NOT_FOUND', 'PUBLISH_INVALID', 'VERSION_CONFLICT', 'RATE_LIMITED']),
          },
        },
      },
      async (request, reply) => {
        const { result, rateLimit } = await drafts.publish(principalOf(request), request.params.websiteId, request.params.draftId, request.body)
        return reply.code(201).headers(rateLimitHeaders(rateLimit)).send(result)
      },
    )

    app.post(
      `${base}/:draftId/moves`,
      {
        schema: {
          operationId: 'moveDraftFile',
          tags,
          security,
          summary: 'Rename a file of a draft',
          description:
            'Moves the file at from to to, which no file of the draft may have (422 VALIDATION_FAILED naming to). Its bytes stay; it is checked again at its new path, and a type its old path implied follows the new one.',
          params: DraftParams,
          body: ref(DraftFileMoveSchema),
          response: {
            200: success(DraftFileWrittenSchema, 'The file at its new path.'),
            ...errorResponses([...AUTH_ERRORS, ...BODY_ERRORS, 'NOT_FOUND', 'PUBLISH_INVALID']),
          },
        },
      },
      (request) => draftFiles.move(principalOf(request), request.params.websiteId, request.params.draftId, request.body),
    )

    const file = `${base}/:draftId/files/*`

    app.get(
      file,
      {
        preValidation: queryNumbers('offset', 'limit'),
        schema: {
          operationId: 'readDraftFile',
          tags,
          security,
          summary: 'Read a file of a draft',
          description:
            'Text as text, or the lines from offset (counted from 1) up to limit lines, with lines: {from, to, total}; anything else (and text that is not valid UTF-8) as base64, whole.',
          params: FileParams,
          querystring: LineRangeQuery,
          response: { 200: success(FileContentSchema, 'The file.'), ...errorResponses([...AUTH_ERRORS, 'NOT_FOUND', 'VALIDATION_FAILED']) },
        },
      },
      (request) => draftFiles.read(principalOf(request), request.params.websiteId, request.params.draftId, request.params['*'], request.query),
    )

    app.put(
      file,
      {
        schema: {
          operationId: 'writeDraftFile',
          tags,
          security,
          summary: 'Write a file of a draft',
          description:
            "Creates the file (201) or replaces it (200), from content, sha256 or uploadId. It is checked at once against every rule of a file (path, encoding, size, content) and the site's limits for the draft as a whole: 422 PUBLISH_INVALID lists every violation, and nothing is written.",
          params: FileParams,
          body: ref(DraftFileWriteSchema),
          response: {
            200: success(DraftFileWrittenSchema, 'Replaced.'),
            201: success(DraftFileWrittenSchema, 'Created.'),
            ...errorResponses([...AUTH_ERRORS, ...BODY_ERRORS, 'NOT_FOUND', 'PUBLISH_INVALID']),
          },
        },
      },
      async (request, reply) => {
        const { params } = request
        const { created, file: written } = await draftFiles.write(principalOf(request), params.websiteId, params.draftId, params['*'], request.body)
        return reply.code(created ? 201 : 200).send(written)
      },
    )

    app.patch(
      file,
      {
        schema: {
          operationId: 'editDraftFile',
          tags,
          security,
          summary: 'Edit a text file of a draft',
          description: `Replaces each edit's oldText, which must occur exactly once, by its newText, in order (1 to ${MAX_EDITS} edits). An oldText that occurs nowhere is 422 EDIT_NO_MATCH (naming the closest line), more than once 422 EDIT_AMBIGUOUS; the result is checked like a write (422 PUBLISH_INVALID). Nothing is changed unless every edit applies. Text files only.`,
          params: FileParams,
          body: ref(DraftFileEditsSchema),
          response: {
            200: success(DraftFileWrittenSchema, 'The edited file.'),
            ...errorResponses([...AUTH_ERRORS, ...BODY_ERRORS, 'NOT_FOUND', 'EDIT_NO_MATCH', 'EDIT_AMBIGUOUS', 'PUBLISH_INVALID']),
          },
        },
      },
      (request) => draftFiles.edit(principalOf(request), request.params.websiteId, request.params.draftId, request.params['*'], request.body.edits),
    )

    app.delete(
      file,
      {
        schema: {
          operationId: 'deleteDraftFile',
          tags,
          security,
          summary: 'Delete a file of a draft',
          params: FileParams,
          response: { 204: Type.Null({ description: 'Deleted.' }), ...errorResponses([...AUTH_ERRORS, 'NOT_FOUND']) },
        },
      },
      async (request, reply) => {
        await draftFiles.delete(principalOf(request), request.params.websiteId, request.params.draftId, request.params['*'])
        return reply.code(204).send(null)
      },
    )
  }
}
