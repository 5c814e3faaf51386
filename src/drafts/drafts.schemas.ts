/** Shapes of drafts and their files: the single source for validation, types and OpenAPI. */
import { type Static, Type } from 'typebox'
import { DATE_TIME_MAX_CHARS, DRAFTS_PER_SITE, ID_MAX_CHARS, MAX_PATH_CHARS, VERSION_MESSAGE_MAX_CHARS } from '../core/limits.ts'
import { Nullable, ref, Timestamp, WarningSchema } from '../core/schemas.ts'
import { TextEditsField } from '../editing/editing.schemas.ts'
import { PublishFileSchema, VendorField } from '../publishing/publishing.schemas.ts'
import { versionRef } from '../websites/websites.schemas.ts'

export const DraftIdParam = Type.String({ minLength: 1, maxLength: ID_MAX_CHARS, description: 'Draft id (drf_...).' })

/** An expiry a caller sets on a draft. */
const draftExpiry = Type.String({
  minLength: 1,
  maxLength: DATE_TIME_MAX_CHARS,
  description: 'Latest expiry (ISO-8601 with a time zone, within a year); writes never move it past this. null: none.',
})

export const CreateDraftRequestSchema = Type.Object(
  {
    baseVersion: Type.Optional(versionRef({ description: 'The version the draft starts from, by id (job_...) or number. Default: the live version.' })),
    expiresAt: Type.Optional(Nullable(draftExpiry)),
  },
  { $id: 'CreateDraftRequest', additionalProperties: false },
)

export const UpdateDraftRequestSchema = Type.Object({ expiresAt: Nullable(draftExpiry) }, { $id: 'UpdateDraftRequest', additionalProperties: false })

const FILE_CHANGES = ['unchanged', 'added', 'changed', 'moved'] as const

export const DraftFileSchema = Type.Object(
  {
    path: Type.String(),
    size: Type.Integer({ description: 'Bytes.' }),
    sha256: Type.String({ description: 'SHA-256 of the bytes, lowercase hex.' }),
    contentType: Type.String(),
    change: Type.Enum(FILE_CHANGES, {
      description:
        'How the file differs from the base version: `unchanged`, `added`, `changed` (other bytes at the same path) or `moved` (the bytes of a base file that is gone from its path).',
    }),
    previousPath: Type.Optional(Type.String({ description: 'For a moved file: its path in the base version.' })),
  },
  { $id: 'DraftFile' },
)

const draftProperties = {
  draftId: Type.String({ description: 'drf_...' }),
  websiteId: Type.String(),
  baseVersion: Type.Integer({ description: 'Number of the version the draft is based on: publishing it is refused while a newer version exists.' }),
  baseVersionId: Type.String({ description: 'Id (job_...) of that version.' }),
  previewUrl: Type.String({ format: 'uri', description: "Where the draft's files are served for review, as they are now." }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  expiresAt: Type.String({
    format: 'date-time',
    description: 'When the draft is discarded unless written to before (ISO-8601, UTC): every write moves it on.',
  }),
}

export const DraftSummarySchema = Type.Object(draftProperties, { $id: 'DraftSummary' })

export const DraftSchema = Type.Object(
  { ...draftProperties, files: Type.Array(ref(DraftFileSchema), { description: 'Every file of the draft, in path order.' }) },
  { $id: 'Draft' },
)

/**
 * A draft as an agent works on it (MCP): its files by path, size and change only, the hashes and
 * types left to reading a file. Not a REST shape, so it has no $id.
 */
export const DraftOutlineSchema = Type.Object({
  ...draftProperties,
  files: Type.Array(Type.Pick(DraftFileSchema, ['path', 'size', 'change', 'previousPath']), { description: 'Every file of the draft, in path order.' }),
})

export const DraftListSchema = Type.Object(
  { items: Type.Array(ref(DraftSummarySchema), { description: `The open drafts of the site (at most ${DRAFTS_PER_SITE}), oldest first.` }) },
  { $id: 'DraftList' },
)

export const DraftFileWriteSchema = Type.Omit(PublishFileSchema, ['path'], {
  $id: 'DraftFileWrite',
  additionalProperties: false,
  description:
    "A draft file's new bytes: exactly one of content (with contentEncoding for base64), sha256 (bytes you published or hold in a draft) and uploadId; contentType is inferred from the path when omitted.",
})

export const DraftFileWrittenSchema = Type.Object(
  {
    path: Type.String(),
    size: Type.Integer({ description: 'Bytes.' }),
    sha256: Type.String({ description: 'SHA-256 of the bytes, lowercase hex.' }),
    contentType: Type.String(),
    warnings: Type.Optional(
      Type.Array(ref(WarningSchema), {
        description:
          "What browsers will still block in this file although it breaks no rule (BLOCKED_BY_POLICY, MIXED_CONTENT); publish_draft's result has the whole site check. Absent when there is nothing to say.",
      }),
    ),
  },
  { $id: 'DraftFileWritten' },
)

export const DraftFileEditsSchema = Type.Object({ edits: TextEditsField }, { $id: 'DraftFileEdits', additionalProperties: false })

const draftPath = (description: string) => Type.String({ minLength: 1, maxLength: MAX_PATH_CHARS, description })

export const DraftFileMoveSchema = Type.Object(
  {
    from: draftPath('The path of a file of the draft.'),
    to: draftPath('Its new path, which no file of the draft may have.'),
  },
  { $id: 'DraftFileMove', additionalProperties: false },
)

export const PublishDraftRequestSchema = Type.Object(
  {
    message: Type.Optional(Type.String({ maxLength: VERSION_MESSAGE_MAX_CHARS, description: "Changelog entry; stored as the version's instruction." })),
    // No schema `default` (generated clients would then require the field): the service applies it.
    promote: Type.Optional(
      Type.Boolean({ description: 'Default true: the new version goes live at once. When false it is only stored, reviewable at its previewUrl.' }),
    ),
    overwrite: Type.Optional(
      Type.Boolean({
        description:
          'Default false: while a version newer than the base exists, publishing is refused with 409 VERSION_CONFLICT naming it. True publishes anyway, undoing what the newer versions changed.',
      }),
    ),
    vendor: VendorField,
  },
  { $id: 'PublishDraftRequest', additionalProperties: false },
)

/** The named schemas of drafts. */
export const DRAFT_SCHEMAS = [
  CreateDraftRequestSchema,
  UpdateDraftRequestSchema,
  DraftFileSchema,
  DraftSummarySchema,
  DraftSchema,
  DraftListSchema,
  DraftFileWriteSchema,
  DraftFileWrittenSchema,
  DraftFileEditsSchema,
  DraftFileMoveSchema,
  PublishDraftRequestSchema,
]

export type CreateDraftRequest = Static<typeof CreateDraftRequestSchema>
export type DraftFile = Static<typeof DraftFileSchema>
export type DraftSummary = Static<typeof DraftSummarySchema>
export type Draft = Static<typeof DraftSchema>
export type DraftList = Static<typeof DraftListSchema>
export type DraftOutline = Static<typeof DraftOutlineSchema>
export type DraftFileWrite = Static<typeof DraftFileWriteSchema>
export type DraftFileWritten = Static<typeof DraftFileWrittenSchema>
export type DraftFileMove = Static<typeof DraftFileMoveSchema>
export type PublishDraftRequest = Static<typeof PublishDraftRequestSchema>
