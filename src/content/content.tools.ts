/**
 * Uploads and collection entries as MCP tools: the same service calls and the same schemas as
 * uploads.routes.ts and entries.routes.ts. Path and query parameters become arguments next to
 * the body's fields; unknown arguments are refused, as unknown body fields are over REST.
 */
import { type TProperties, Type } from 'typebox'
import {
  ENTRY_PAGE_DEFAULT,
  ENTRY_PAGE_MAX,
  formatSize,
  MAX_BATCH,
  MAX_UPLOAD_BYTES,
  MAX_UPLOADS_PER_REQUEST,
  UPLOAD_RETENTION_MS,
  UPLOAD_URL_LIFETIME_MS,
} from '../core/limits.ts'
import { ref } from '../core/schemas.ts'
import { type AnyMcpTool, defineTool, type ToolHints } from '../mcp/tool-definition.ts'
import { CreateUploadsRequestSchema, CreateUploadsResultSchema } from '../uploads/uploads.schemas.ts'
import type { UploadsService } from '../uploads/uploads.service.ts'
import { EntryBatchRequestSchema, EntryBatchResultSchema, EntryListSchema } from './content.schemas.ts'
import { CollectionParams, EntryListQuery, EntryParams } from './entries.routes.ts'
import type { EntriesService } from './entries.service.ts'

const args = <P extends TProperties>(properties: P) => Type.Object(properties, { additionalProperties: false })

const READ: ToolHints = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }
/** Entries are served on the live site as soon as they are written or deleted. */
const CHANGES_LIVE_SITE: ToolHints = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false }
const MINUTES = UPLOAD_URL_LIFETIME_MS / 60_000

const COLLECTIONS = `A collection (e.g. posts, products) is a typed list of entries of one website, created over REST (createCollection) with its fields; each entry is served on the live site at /{collection}-{slug}.`
const NOT_FOUND = `An unknown website or collection, or one you neither own nor edit, is NOT_FOUND.`

export function contentTools({ uploads, entries }: { uploads: UploadsService; entries: EntriesService }): AnyMcpTool[] {
  return [
    defineTool({
      name: 'create_upload',
      title: 'Reserve uploads for large files',
      description: `Reserve uploads for binary files too large to inline comfortably in a bundle (roughly above 100 KB of base64: images, fonts, PDFs). Up to ${MAX_UPLOADS_PER_REQUEST} files per call, each 1 to ${MAX_UPLOAD_BYTES} bytes (${formatSize(MAX_UPLOAD_BYTES)}); size is the exact byte count.
For each returned upload, within ${MINUTES} minutes: HTTP PUT exactly size raw bytes to uploadUrl, with the returned headers and WITHOUT an Authorization header (the signature in the URL is the credential). The PUT answers {uploadId, sha256, size}; an upload is written once.
Then, within ${UPLOAD_RETENTION_MS / 3_600_000} hours, publish the file by reference: a bundle file { path, uploadId } in publish_website or publish_version (every bundle rule applies to it as to inline files). An uploadId also works in importAsset over REST. Small text files are simpler to send inline with content.`,
      input: ref(CreateUploadsRequestSchema),
      output: ref(CreateUploadsResultSchema),
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      run: (principal, input) => uploads.create(principal, input),
    }),

    defineTool({
      name: 'list_entries',
      title: "List a collection's entries",
      description: `List the entries of one collection of a website, newest publishedAt first (ties by id): id, slug, path on the site, live (false while publishedAt is in the future), data as sent and rendered values. ${COLLECTIONS}
Pages of limit entries (1 to ${ENTRY_PAGE_MAX}, default ${ENTRY_PAGE_DEFAULT}): pass the nextCursor of a page as cursor for the next one; nextCursor is null on the last page. ${NOT_FOUND}`,
      input: args({ ...CollectionParams.properties, ...EntryListQuery.properties }),
      output: ref(EntryListSchema),
      hints: READ,
      run: (principal, { websiteId, collection, ...query }) => entries.list(principal, websiteId, collection, query),
    }),

    defineTool({
      name: 'upsert_entries',
      title: 'Create or update entries',
      description: `Create or update up to ${MAX_BATCH} entries of one collection at once; they are on the live site at once. ${COLLECTIONS}
Each entry is { slug, data, publishedAt?, createdAt? }: slug (1 to 80 lowercase letters, digits and single hyphens) is its identity, so an existing slug is updated, a new one created, and an identical one reported unchanged: re-running an import creates no duplicates. data holds the values by field name, checked against the collection's fields: richText as {html} or {markdown} (sanitized), image as a URL, absolute or relative to baseUrl (an absolute http(s) URL), imported into the collection's image library; dates are YYYY-MM-DD or ISO-8601. publishedAt in the future keeps the entry off the public site until then (live false); createdAt keeps an archive's dates.
The call is not all-or-nothing: the result lists one result per entry, in order, with status created, updated, unchanged or failed, and counts. A failed entry carries error {code, message, field, fields} (VALIDATION_FAILED, DUPLICATE_SLUG when a slug occurs twice in the call, IMAGE_IMPORT_FAILED): fix and resend just those. Only a malformed call as a whole (entries not a list, more than ${MAX_BATCH}, bad baseUrl) is a VALIDATION_FAILED error. ${NOT_FOUND}`,
      input: args({ ...CollectionParams.properties, ...EntryBatchRequestSchema.properties }),
      output: ref(EntryBatchResultSchema),
      hints: CHANGES_LIVE_SITE,
      run: (principal, { websiteId, collection, ...request }) => entries.upsert(principal, websiteId, collection, request),
    }),

    defineTool({
      name: 'delete_entry',
      title: 'Delete an entry',
      description: `Delete one entry of a collection, by its id (ent_...) or its slug; it leaves the live site at once. ${COLLECTIONS}
An unknown entry (or one already deleted) is NOT_FOUND, like an unknown website or collection.`,
      input: args({ ...EntryParams.properties }),
      output: args({ deleted: Type.Literal(true, { description: 'The entry is gone.' }) }),
      hints: CHANGES_LIVE_SITE,
      run: async (principal, { websiteId, collection, entry }) => {
        await entries.delete(principal, websiteId, collection, entry)
        return { deleted: true as const }
      },
    }),
  ]
}
