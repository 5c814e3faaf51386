import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { principalOf } from '../auth/auth.routes.ts'
import { ENTRY_PAGE_DEFAULT, ENTRY_PAGE_MAX, ID_MAX_CHARS, MAX_BATCH } from '../core/limits.ts'
import { PageQuery, ref } from '../core/schemas.ts'
import { AUTH_ERRORS, BODY_ERRORS, errorResponses, success } from '../http/openapi.ts'
import { queryNumbers } from '../http/query-numbers.ts'
import { WebsiteIdParam } from '../websites/websites.schemas.ts'
import { CollectionParam, CollectionParams, security, tags } from './collections.routes.ts'
import { EntryBatchRequestSchema, EntryBatchResultSchema, EntryListSchema, EntryPutSchema, EntrySchema } from './content.schemas.ts'
import type { EntriesService } from './entries.service.ts'

export { CollectionParams }
export const EntryParams = Type.Object({
  websiteId: WebsiteIdParam,
  collection: CollectionParam,
  entry: Type.String({ minLength: 1, maxLength: ID_MAX_CHARS, description: 'Entry id (ent_...) or slug.' }),
})
export const EntryListQuery = PageQuery('Entries', ENTRY_PAGE_MAX, ENTRY_PAGE_DEFAULT)
// The same path as getEntry/deleteEntry (OpenAPI allows one parameter name per path shape); for
// putEntry the segment is always the slug, since an entry is created or replaced by slug.
export const SlugParams = Type.Object({
  websiteId: WebsiteIdParam,
  collection: CollectionParam,
  entry: Type.String({ minLength: 1, maxLength: ID_MAX_CHARS, description: 'Entry slug (putEntry creates or replaces by slug).' }),
})

/** listEntries, upsertEntries, getEntry, putEntry, deleteEntry. Owners and editors alike. */
export function entriesRoutes(entries: EntriesService): FastifyPluginAsyncTypebox {
  // eslint-disable-next-line @typescript-eslint/require-await -- Fastify awaits an async plugin, so a throw while registering rejects register()
  return async (app) => {
    const base = '/websites/:websiteId/collections/:collection/entries'

    app.get(
      base,
      {
        preValidation: queryNumbers('limit'),
        schema: {
          operationId: 'listEntries',
          tags,
          security,
          summary: 'List entries, newest publishedAt first',
          description:
            'Pages with an opaque cursor in a stable order (publishedAt descending, ties by id), fast at any size. Scheduled entries (publishedAt in the future) are included with live false.',
          params: CollectionParams,
          querystring: EntryListQuery,
          response: { 200: success(EntryListSchema, 'One page of entries.'), ...errorResponses([...AUTH_ERRORS, 'NOT_FOUND', 'VALIDATION_FAILED']) },
        },
      },
      (request) => entries.list(principalOf(request), request.params.websiteId, request.params.collection, request.query),
    )

    app.post(
      `${base}/batch`,
      {
        schema: {
          operationId: 'upsertEntries',
          tags,
          security,
          summary: `Create or update up to ${MAX_BATCH} entries`,
          description: `Not all-or-nothing: always 200 with one result per item, in order. An existing slug is updated, a new one created, an identical one reported unchanged, so an import can be re-run without duplicates. A failed item (status failed) carries error {code, message, field, fields}: VALIDATION_FAILED, DUPLICATE_SLUG (the slug occurs more than once in the batch; none of those items is written), IMAGE_IMPORT_FAILED, RICH_TEXT_TOO_COSTLY (its rich text took too long or too much memory to render) or RICH_TEXT_BUDGET_EXCEEDED (the batch's rich text is over its total budget: send the rest in another batch). Only a malformed request as a whole (entries not an array, more than ${MAX_BATCH} items, bad baseUrl) is 422.`,
          params: CollectionParams,
          body: ref(EntryBatchRequestSchema),
          response: {
            200: success(EntryBatchResultSchema, 'One result per item, in order, with counts.'),
            ...errorResponses([...AUTH_ERRORS, ...BODY_ERRORS, 'NOT_FOUND']),
          },
        },
      },
      (request) => entries.upsert(principalOf(request), request.params.websiteId, request.params.collection, request.body),
    )

    app.get(
      `${base}/:entry`,
      {
        schema: {
          operationId: 'getEntry',
          tags,
          security,
          summary: 'Get an entry by id or slug',
          params: EntryParams,
          response: { 200: success(EntrySchema, 'The entry.'), ...errorResponses([...AUTH_ERRORS, 'NOT_FOUND']) },
        },
      },
      (request) => entries.get(principalOf(request), request.params.websiteId, request.params.collection, request.params.entry),
    )

    app.put(
      `${base}/:entry`,
      {
        schema: {
          operationId: 'putEntry',
          tags,
          security,
          summary: 'Create or replace the entry at a slug',
          description:
            'Idempotent: 201 when created, 200 when replaced or unchanged (header Entry-Status tells which). data replaces the stored values of the current fields; values of removed fields are kept.',
          params: SlugParams,
          body: ref(EntryPutSchema),
          response: {
            200: success(EntrySchema, 'The entry, replaced or unchanged (Entry-Status: updated or unchanged).'),
            201: success(EntrySchema, 'The entry, created (Entry-Status: created).'),
            ...errorResponses([...AUTH_ERRORS, ...BODY_ERRORS, 'NOT_FOUND', 'IMAGE_IMPORT_FAILED', 'RICH_TEXT_TOO_COSTLY']),
          },
        },
      },
      async (request, reply) => {
        const { status, entry } = await entries.put(
          principalOf(request),
          request.params.websiteId,
          request.params.collection,
          request.params.entry,
          request.body,
        )
        return reply
          .code(status === 'created' ? 201 : 200)
          .header('entry-status', status)
          .send(entry)
      },
    )

    app.delete(
      `${base}/:entry`,
      {
        schema: {
          operationId: 'deleteEntry',
          tags,
          security,
          summary: 'Delete an entry by id or slug',
          params: EntryParams,
          response: { 204: Type.Null({ description: 'Deleted.' }), ...errorResponses([...AUTH_ERRORS, 'NOT_FOUND']) },
        },
      },
      async (request, reply) => {
        await entries.delete(principalOf(request), request.params.websiteId, request.params.collection, request.params.entry)
        return reply.code(204).send(null)
      },
    )
  }
}
