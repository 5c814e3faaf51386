/**
 * Uploads, collections and entries as MCP tools: the same service calls and the same schemas as
 * uploads.routes.ts, collections.routes.ts and entries.routes.ts. Path and query parameters
 * become arguments next to the body's fields; unknown arguments are refused, as unknown body
 * fields are over REST.
 */
import { Type } from 'typebox'
import { type BundleLimits, MAX_BATCH, UPLOAD_RETENTION_MS, UPLOAD_URL_LIFETIME_MS } from '../core/limits.ts'
import { ref } from '../core/schemas.ts'
import { type AnyMcpTool, defineTool, READ_ONLY, type ToolHints, toolArgs } from '../mcp/tool-definition.ts'
import { createUploadsRequestSchema, CreateUploadsResultSchema } from '../uploads/uploads.schemas.ts'
import type { UploadsService } from '../uploads/uploads.service.ts'
import { WebsiteIdParam } from '../websites/websites.schemas.ts'
import type { CollectionsService } from './collections.service.ts'
import {
  CollectionCreateSchema,
  CollectionListSchema,
  CollectionSchema,
  CollectionUpdateSchema,
  EntryBatchRequestSchema,
  EntryBatchResultSchema,
  EntryListSchema,
  EntryPutSchema,
  EntrySchema,
} from './content.schemas.ts'
import { CollectionParams, EntryListQuery, EntryParams, SlugParams } from './entries.routes.ts'
import type { EntriesService } from './entries.service.ts'
import { IMAGE_FORMS } from './image-references.ts'

/** Entries, and collections' fields and labels, change what the live site serves as soon as they are written. */
const CHANGES_LIVE_SITE: ToolHints = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false }
const MINUTES = UPLOAD_URL_LIFETIME_MS / 60_000

/** putEntry answers the entry and tells created from replaced in a header; a tool says it in the result. */
const PutEntryResultSchema = Type.Object({ status: Type.Enum(['created', 'updated', 'unchanged']), entry: ref(EntrySchema) }, { additionalProperties: false })

/** Said once, in upsert_entries; put_entry writes data the same way. */
const ENTRY_DATA = `data is checked against the collection's fields (see get_collection): richText as {html} or {markdown} (sanitized), date as YYYY-MM-DD or ISO-8601, image (also <img src> and ![](…) in richText) as ${IMAGE_FORMS}.`

/** `limits`: the bundle limits uploads follow. */
export function contentTools({
  uploads,
  collections,
  entries,
  limits,
}: {
  uploads: UploadsService
  collections: CollectionsService
  entries: EntriesService
  limits: BundleLimits
}): AnyMcpTool[] {
  return [
    defineTool({
      name: 'create_upload',
      toolset: 'publishing',
      title: 'Reserve uploads for large files',
      description: `Reserve uploads for binaries too large to inline (over ~100 KB of base64), up to ${limits.maxFiles} per call.
Within ${MINUTES} minutes, HTTP PUT exactly size raw bytes to each uploadUrl with the returned headers and NO Authorization header (the signed URL is the credential); it answers {uploadId, sha256, size}. An upload is written once.
Within ${UPLOAD_RETENTION_MS / 3_600_000} hours, use it as a bundle file { path, uploadId } of publish_website or publish_version, in write_file, in import_asset, or as an entry image: upload:{uploadId}.`,
      input: ref(createUploadsRequestSchema(limits)),
      output: ref(CreateUploadsResultSchema),
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      run: (principal, input) => uploads.create(principal, input),
    }),

    defineTool({
      name: 'list_collections',
      toolset: 'content',
      title: "List a website's collections",
      description: `List a website's collections (typed lists of entries such as posts or products) by name, each with its fields, entryPath, reservedPaths and entryCount.`,
      input: toolArgs({ websiteId: WebsiteIdParam }),
      output: ref(CollectionListSchema),
      hints: READ_ONLY,
      run: (principal, { websiteId }) => collections.list(principal, websiteId),
    }),

    defineTool({
      name: 'get_collection',
      toolset: 'content',
      title: 'Get a collection with its fields',
      description: `Get one collection. Its fields say what entry data holds: read them before writing entries. removedFields still hold their stored values.`,
      input: toolArgs({ ...CollectionParams.properties }),
      output: ref(CollectionSchema),
      hints: READ_ONLY,
      run: (principal, { websiteId, collection }) => collections.get(principal, websiteId, collection),
    }),

    defineTool({
      name: 'create_collection',
      toolset: 'content',
      title: 'Create a collection',
      description: `Create a collection (a typed list of entries, e.g. posts or products) with its fields. Entries of posts are served at /posts-{slug}, a listing at /posts, feeds at /posts.json and /posts.xml: these root paths are reserved: a name clashing with live files is COLLECTION_CONFLICT, and later publishes may not add such files. A name in use is COLLECTION_EXISTS.`,
      input: toolArgs({ websiteId: WebsiteIdParam, ...CollectionCreateSchema.properties }),
      output: ref(CollectionSchema),
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      run: (principal, { websiteId, ...input }) => collections.create(principal, websiteId, input),
    }),

    defineTool({
      name: 'update_collection',
      toolset: 'content',
      title: "Change a collection's label or fields",
      description: `Change the label or the fields (the complete new list) of a collection. No stored value is lost. A field cannot change type while entries hold values for it (FIELD_IN_USE): add a new field instead. Entries meet the new fields at their next write.`,
      input: toolArgs({ ...CollectionParams.properties, ...CollectionUpdateSchema.properties }),
      output: ref(CollectionSchema),
      hints: CHANGES_LIVE_SITE,
      run: (principal, { websiteId, collection, ...input }) => collections.update(principal, websiteId, collection, input),
    }),

    defineTool({
      name: 'list_entries',
      toolset: 'content',
      title: "List a collection's entries",
      description: `List the entries of a collection, newest publishedAt first (ties by id): id, slug, path on the site, live (false while publishedAt is in the future), data as sent and rendered values. Paged: pass nextCursor as cursor (null on the last page).`,
      input: toolArgs({ ...CollectionParams.properties, ...EntryListQuery.properties }),
      output: ref(EntryListSchema),
      hints: READ_ONLY,
      run: (principal, { websiteId, collection, ...query }) => entries.list(principal, websiteId, collection, query),
    }),

    defineTool({
      name: 'get_entry',
      toolset: 'content',
      title: 'Get an entry',
      description: `Get one entry of a collection by its id (ent_...) or its slug: data as sent, rendered values, path and live.`,
      input: toolArgs({ ...EntryParams.properties }),
      output: ref(EntrySchema),
      hints: READ_ONLY,
      run: (principal, { websiteId, collection, entry }) => entries.get(principal, websiteId, collection, entry),
    }),

    defineTool({
      name: 'upsert_entries',
      toolset: 'content',
      title: 'Create or update entries',
      description: `Create or update up to ${MAX_BATCH} entries of a collection; they are on the live site at once. The slug is an entry's identity: an existing slug is updated, a new one created, an identical one reported unchanged, so re-running an import makes no duplicates. ${ENTRY_DATA}
Not all-or-nothing: one result per entry, in order, with its status, and counts. A failed entry has an error code (VALIDATION_FAILED, DUPLICATE_SLUG, IMAGE_IMPORT_FAILED, RICH_TEXT_TOO_COSTLY, RICH_TEXT_BUDGET_EXCEEDED: resend later); fix and resend just those. Only a malformed call (not a list, over ${MAX_BATCH}, bad baseUrl) is an error result.`,
      input: toolArgs({ ...CollectionParams.properties, ...EntryBatchRequestSchema.properties }),
      output: ref(EntryBatchResultSchema),
      hints: CHANGES_LIVE_SITE,
      run: (principal, { websiteId, collection, ...request }) => entries.upsert(principal, websiteId, collection, request),
    }),

    defineTool({
      name: 'put_entry',
      toolset: 'content',
      title: 'Create or replace one entry',
      description: `Create or replace the entry at one slug (entry) of a collection, live at once. data replaces the stored values of the current fields (removed fields keep theirs), written as by upsert_entries. A bad entry is a VALIDATION_FAILED error result.`,
      input: toolArgs({ ...SlugParams.properties, ...EntryPutSchema.properties }),
      output: PutEntryResultSchema,
      hints: CHANGES_LIVE_SITE,
      run: (principal, { websiteId, collection, entry, ...input }) => entries.put(principal, websiteId, collection, entry, input),
    }),

    defineTool({
      name: 'delete_entry',
      toolset: 'content',
      title: 'Delete an entry',
      description: `Delete one entry of a collection by its id (ent_...) or its slug; it leaves the live site at once. An entry already deleted is NOT_FOUND.`,
      input: toolArgs({ ...EntryParams.properties }),
      output: toolArgs({ deleted: Type.Literal(true, { description: 'The entry is gone.' }) }),
      hints: CHANGES_LIVE_SITE,
      run: async (principal, { websiteId, collection, entry }) => {
        await entries.delete(principal, websiteId, collection, entry)
        return { deleted: true as const }
      },
    }),
  ]
}
