/**
 * Drafts as MCP tools: the same service calls and the same schemas as drafts.routes.ts (and, for
 * a version's file, version-files.routes.ts). Path parameters become arguments next to the
 * body's fields: a file's path is `path`. Results are compact: a write answers the file's path,
 * size and sha256, never the content sent; a draft lists its files without hashes.
 */
import { Type } from 'typebox'
import { DRAFTS_PER_SITE, MAX_EDITS, READ_LINES_MAX } from '../core/limits.ts'
import { validationFailed } from '../core/errors.ts'
import { ref } from '../core/schemas.ts'
import { FileContentSchema, LineRangeQuery } from '../editing/editing.schemas.ts'
import { type AnyMcpTool, defineTool, READ_ONLY, toolArgs } from '../mcp/tool-definition.ts'
import { PublishFileSchema } from '../publishing/publishing.schemas.ts'
import type { VersionFiles } from '../websites/version-files.ts'
import { PublishVersionResultSchema, VersionRefArg, WebsiteIdParam } from '../websites/websites.schemas.ts'
import type { DraftFiles } from './draft-files.ts'
import type { DraftsService } from './drafts.service.ts'
import {
  CreateDraftRequestSchema,
  type Draft,
  DraftFileEditsSchema,
  DraftFileMoveSchema,
  DraftFileWriteSchema,
  DraftFileWrittenSchema,
  DraftIdParam,
  type DraftOutline,
  DraftOutlineSchema,
  PublishDraftRequestSchema,
} from './drafts.schemas.ts'

/** A draft's file, named as a bundle file is. */
const DraftFileArgs = { websiteId: WebsiteIdParam, draftId: DraftIdParam, path: PublishFileSchema.properties.path }

/** Changes a draft, never the live site; doing it again changes nothing more. */
const DRAFT_WRITE = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false }
/** Changes a draft, never the live site; doing it again does more (or fails). */
const DRAFT_CHANGE = { ...DRAFT_WRITE, idempotentHint: false }
/** Removes work from a draft (a file, or the whole draft) that nothing else holds; doing it again changes nothing more. */
const DRAFT_REMOVE = { ...DRAFT_WRITE, destructiveHint: true }

/** A draft with its files by path, size and change. */
const outline = ({ files, ...draft }: Draft): DraftOutline => ({
  ...draft,
  files: files.map(({ path, size, change, previousPath }) => ({ path, size, change, ...(previousPath === undefined ? {} : { previousPath }) })),
})

/** `ttlDays`: how long a draft nobody writes to lasts. */
export function draftsTools(
  { drafts, draftFiles, versionFiles }: { drafts: DraftsService; draftFiles: DraftFiles; versionFiles: VersionFiles },
  ttlDays: number,
): AnyMcpTool[] {
  return [
    defineTool({
      name: 'start_draft',
      toolset: 'drafts',
      title: 'Start a draft of a website',
      description: `Start a draft: a working copy of a version's files (baseVersion, a number or id; default the live version), changed one file per call and published as the next version. The way to change a few files of a site, or to build a site too big for one call: publish_website a placeholder index.html, then fill a draft.
Workflow: start_draft -> write_file / edit_file / move_file / delete_file (each checked at once: PUBLISH_INVALID lists every violation and nothing is written) -> list_files, read_file, diff_versions to check -> open previewUrl, the draft as it is now -> publish_draft, or discard_draft.
Answers draftId, previewUrl, expiresAt (${ttlDays} days after the last write) and files (path, size, change). At most ${DRAFTS_PER_SITE} open drafts a site (DRAFT_LIMIT_REACHED).`,
      // No expiresAt over MCP: an agent's drafts live by the TTL; a person or a REST caller caps them.
      input: toolArgs({ websiteId: WebsiteIdParam, baseVersion: CreateDraftRequestSchema.properties.baseVersion }),
      output: DraftOutlineSchema,
      hints: DRAFT_CHANGE,
      run: async (principal, { websiteId, ...input }) => outline(await drafts.create(principal, websiteId, input)),
    }),

    defineTool({
      name: 'list_files',
      toolset: 'drafts',
      title: "List a draft's files",
      description: `The files of a draft in path order, each with its size and change from the base version (unchanged, added, changed, or moved with previousPath); no content (read_file reads a file). Also previewUrl and expiresAt.`,
      input: toolArgs({ websiteId: WebsiteIdParam, draftId: DraftIdParam }),
      output: DraftOutlineSchema,
      hints: READ_ONLY,
      run: async (principal, { websiteId, draftId }) => outline(await drafts.get(principal, websiteId, draftId)),
    }),

    defineTool({
      name: 'read_file',
      toolset: 'drafts',
      title: 'Read a file of a draft or a version',
      description: `Read one file of a draft (draftId) or a version (versionId): give exactly one. Text comes as text, whole or limit lines (at most ${READ_LINES_MAX}) from line offset (counted from 1), with lines {from, to, total}: read a long file in ranges. Anything else comes whole as base64. Its sha256 lets write_file or a publish reuse the bytes without sending them.`,
      input: toolArgs({
        websiteId: WebsiteIdParam,
        draftId: Type.Optional(DraftIdParam),
        versionId: Type.Optional(VersionRefArg),
        path: PublishFileSchema.properties.path,
        ...LineRangeQuery.properties,
      }),
      output: ref(FileContentSchema),
      hints: READ_ONLY,
      run: (principal, { websiteId, draftId, versionId, path, ...range }) => {
        if (draftId !== undefined && versionId === undefined) return draftFiles.read(principal, websiteId, draftId, path, range)
        if (versionId !== undefined && draftId === undefined) return versionFiles.read(principal, websiteId, versionId, path, range)
        const problem = draftId === undefined ? 'is required unless versionId is given' : 'cannot be given with versionId: read one file at a time'
        throw validationFailed({ draftId: problem })
      },
    }),

    defineTool({
      name: 'write_file',
      toolset: 'drafts',
      title: 'Write a file of a draft',
      description: `Create or replace one file of a draft with exactly one of: content (text, or base64 with contentEncoding base64 for binaries), sha256 (bytes already published or in a draft: no need to send them again), or uploadId (create_upload, for binaries too large to send inline). contentType is inferred from the path. Checked at once against publish_website's rules for a file and the site's limits; index.html may be missing until publish_draft. Answers path, size, sha256 (and warnings).`,
      input: toolArgs({ ...DraftFileArgs, ...DraftFileWriteSchema.properties }),
      output: ref(DraftFileWrittenSchema),
      hints: DRAFT_WRITE,
      run: async (principal, { websiteId, draftId, path, ...input }) => (await draftFiles.write(principal, websiteId, draftId, path, input)).file,
    }),

    defineTool({
      name: 'edit_file',
      toolset: 'drafts',
      title: 'Edit a text file of a draft',
      description: `Change a text file of a draft by exact-text edits (1 to ${MAX_EDITS}), applied in order, without sending the whole file. Each oldText must occur exactly once in the text the edits before it left, spaces and line breaks included: quote enough around it to be unique. None: EDIT_NO_MATCH naming the closest line; several: EDIT_AMBIGUOUS with the count. All or nothing, then checked like write_file. Answers path, size, sha256.`,
      input: toolArgs({ ...DraftFileArgs, ...DraftFileEditsSchema.properties }),
      output: ref(DraftFileWrittenSchema),
      hints: DRAFT_CHANGE,
      run: (principal, { websiteId, draftId, path, edits }) => draftFiles.edit(principal, websiteId, draftId, path, edits),
    }),

    defineTool({
      name: 'delete_file',
      toolset: 'drafts',
      title: 'Delete a file of a draft',
      description: `Remove one file from a draft. Published versions keep theirs; the site changes only when the draft is published.`,
      input: toolArgs(DraftFileArgs),
      output: toolArgs({ deleted: Type.Literal(true), path: Type.String() }),
      hints: DRAFT_REMOVE,
      run: async (principal, { websiteId, draftId, path }) => {
        await draftFiles.delete(principal, websiteId, draftId, path)
        return { deleted: true as const, path }
      },
    }),

    defineTool({
      name: 'move_file',
      toolset: 'drafts',
      title: 'Rename a file of a draft',
      description: `Move a file of a draft from one path to another, which must be free (else VALIDATION_FAILED: delete or write it instead). Its bytes stay and are checked at the new path; update links to it with edit_file. Answers path, size, sha256.`,
      input: toolArgs({ websiteId: WebsiteIdParam, draftId: DraftIdParam, ...DraftFileMoveSchema.properties }),
      output: ref(DraftFileWrittenSchema),
      hints: DRAFT_CHANGE,
      run: (principal, { websiteId, draftId, from, to }) => draftFiles.move(principal, websiteId, draftId, { from, to }),
    }),

    defineTool({
      name: 'publish_draft',
      toolset: 'drafts',
      title: 'Publish a draft as the next version',
      description: `Publish a draft's files as the site's next version, checked as a whole bundle (publish_website's rules; PUBLISH_INVALID leaves the draft as it is); the draft is then gone. promote false stores the version for review at its previewUrl (promote_version makes it live). If a version newer than the draft's base exists: VERSION_CONFLICT naming it; start a new draft from it, or overwrite true to publish anyway, undoing its changes. Counts toward the publish rate limit.`,
      input: toolArgs({ websiteId: WebsiteIdParam, draftId: DraftIdParam, ...PublishDraftRequestSchema.properties }),
      output: ref(PublishVersionResultSchema),
      hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
      run: async (principal, { websiteId, draftId, ...input }) => (await drafts.publish(principal, websiteId, draftId, input)).result,
    }),

    defineTool({
      name: 'discard_draft',
      toolset: 'drafts',
      title: 'Discard a draft',
      description: `Discard a draft and every change in it, for good; the site and its versions are untouched and its previewUrl stops.`,
      input: toolArgs({ websiteId: WebsiteIdParam, draftId: DraftIdParam }),
      output: toolArgs({ discarded: Type.Literal(true), draftId: Type.String() }),
      hints: DRAFT_REMOVE,
      run: async (principal, { websiteId, draftId }) => {
        await drafts.discard(principal, websiteId, draftId)
        return { discarded: true as const, draftId }
      },
    }),
  ]
}
