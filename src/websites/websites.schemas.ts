import { Type, type Static } from 'typebox'
import { JobStatusSchema, Nullable, Timestamp, ref } from '../core/schemas.ts'

export const CATEGORIES = ['real_estate', 'restaurant', 'service', 'portfolio', 'event', 'resume', 'other'] as const

export const SLUG_PATTERN = '^[a-z][a-z0-9-]*$'
/** A MIME type with optional parameters, as accepted in a contentType override. */
export const CONTENT_TYPE_PATTERN = '^[A-Za-z0-9!#$&^_.+-]+/[A-Za-z0-9!#$&^_.+-]+(\\s*;.*)?$'
export const WebsiteIdParam = Type.String({ minLength: 1, maxLength: 100, description: 'Website id (web_...).' })
export const VersionIdParam = Type.String({ minLength: 1, maxLength: 100, description: 'Version id (job_...).' })
export const JobIdParam = Type.String({ minLength: 1, maxLength: 100, description: 'Job id (job_...), also the id of the version the job produced.' })
export const SlugSuggestValue = Type.String({ minLength: 1, maxLength: 120, description: 'A site name or draft slug.' })

export const PublishFileSchema = Type.Object(
  {
    path: Type.String({ minLength: 1, maxLength: 1024, description: 'Relative path within the bundle, e.g. `index.html`, `assets/site.css`, `images/logo.png`.' }),
    content: Type.Optional(Type.String({ description: 'UTF-8 text by default; base64 text when contentEncoding is `base64`.' })),
    // No schema default: it would be filled in on files given by uploadId or sha256 too.
    contentEncoding: Type.Optional(Type.Enum(['utf8', 'base64'], { description: 'How content is encoded: `utf8` (the default) or `base64` (for images and other binaries). Only with content.' })),
    contentType: Type.Optional(
      Type.String({ maxLength: 200, pattern: CONTENT_TYPE_PATTERN, description: 'MIME type override; inferred from the extension when omitted.' }),
    ),
    uploadId: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'The file is the bytes PUT to this upload (`upl_...`, from createUploads) instead of content. The upload must be yours, complete and unexpired.' })),
    sha256: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$', description: 'The file is the bytes with this SHA-256 (lowercase hex) that you have already published (in a version of a site you own or edit) or uploaded, instead of content. Unknown hashes are refused with PUBLISH_INVALID / UNKNOWN_HASH.' })),
  },
  {
    $id: 'PublishFile',
    additionalProperties: false,
    description: 'One bundle file. Give exactly one of content, uploadId and sha256 (contentEncoding only with content); otherwise the request is refused with VALIDATION_FAILED naming `files[i]`. Files given by uploadId or sha256 are checked against every limit and authoring rule exactly like inline ones.',
  },
)

const filesField = Type.Array(ref(PublishFileSchema), {
  minItems: 1,
  description: 'The complete site bundle: 1 to 40 files (more is rejected with PUBLISH_INVALID / TOO_MANY_FILES), at most 2 MiB each and 8 MiB in all once decoded, at most 15 HTML pages, `index.html` required.',
})

export const PublishWebsiteRequestSchema = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 120, description: 'Display name. Used to derive the slug when slug is omitted.' })),
    category: Type.Enum(CATEGORIES),
    description: Type.Optional(Type.String({ maxLength: 5000 })),
    slug: Type.Optional(
      Type.String({
        minLength: 3,
        maxLength: 50,
        pattern: SLUG_PATTERN,
        description: 'Preferred subdomain. When given and taken, the request fails with 409 SLUG_TAKEN (naming a free suggestion); when omitted, a slug is derived from name and suffixed until free.',
      }),
    ),
    files: filesField,
  },
  { $id: 'PublishWebsiteRequest', additionalProperties: false },
)

export const PublishWebsiteResultSchema = Type.Object(
  {
    websiteId: Type.String(),
    jobId: Type.String(),
    version: Type.Integer({ description: 'Always 1 for a new website.' }),
    slug: Type.String(),
    pageUrl: Type.String({ format: 'uri', description: 'The live URL; serving starts immediately.' }),
    bytesWritten: Type.Integer({ description: 'Total decoded bytes of the bundle.' }),
  },
  { $id: 'PublishWebsiteResult' },
)

export const PublishVersionRequestSchema = Type.Object(
  {
    files: filesField,
    message: Type.Optional(Type.String({ maxLength: 2000, description: "Changelog entry; stored as the version's instruction." })),
    promote: Type.Optional(Type.Boolean({ default: true, description: 'When false, the live version stays live and the new one is only stored (reviewable at its previewUrl).' })),
  },
  { $id: 'PublishVersionRequest', additionalProperties: false },
)

export const PublishVersionResultSchema = Type.Object(
  {
    websiteId: Type.String(),
    jobId: Type.String({ description: 'Also the id of the created version.' }),
    version: Type.Integer(),
    isCurrent: Type.Boolean({ description: 'Whether this version is now the one served.' }),
    pageUrl: Type.String({ format: 'uri', description: "The site's live URL." }),
    previewUrl: Type.String({ format: 'uri', description: 'Where this very version is served, live or not.' }),
    bytesWritten: Type.Integer(),
  },
  { $id: 'PublishVersionResult' },
)

export const VersionFileSchema = Type.Object(
  {
    originalName: Type.String({ description: 'Path within the bundle.' }),
    contentType: Nullable(Type.String()),
    size: Type.Integer({ description: 'Bytes.' }),
    sha256: Type.String({ description: 'SHA-256 of the bytes, lowercase hex: give it as a bundle file\'s sha256 to republish the file unchanged without sending it.' }),
  },
  { $id: 'VersionFile' },
)

const versionProperties = {
  id: Type.String(),
  jobId: Type.String({ description: 'Same value as id.' }),
  version: Type.Integer(),
  kind: Type.Enum(['initial', 'refinement']),
  status: ref(JobStatusSchema),
  instruction: Type.Optional(Type.String({ description: 'The changelog message that produced the version.' })),
  files: Type.Array(ref(VersionFileSchema)),
  isCurrent: Type.Boolean({ description: 'Whether this version is the one served at the live URL.' }),
  previewUrl: Type.String({ format: 'uri', description: 'Where this version is served for review, live or not.' }),
  createdAt: Timestamp,
}

export const VersionSchema = Type.Object(versionProperties, { $id: 'Version' })

export const VersionListSchema = Type.Object({ versions: Type.Array(ref(VersionSchema), { description: 'Newest first.' }) }, { $id: 'VersionList' })

const SubscriptionSchema = Nullable(
  Type.Object({ status: Type.String(), renewsAt: Nullable(Type.String()), endsAt: Nullable(Type.String()) }),
)

const websiteStatus = Type.Enum(['active', 'draft', 'deleted'])
const role = Type.Enum(['owner', 'editor'], { description: "The caller's relationship to the site." })

export const WebsiteSummarySchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    slug: Nullable(Type.String()),
    pageUrl: Type.Optional(Type.String({ format: 'uri', description: 'Absent while the site has no ready version.' })),
    status: websiteStatus,
    currentVersionId: Type.Optional(Type.String()),
    latestJobStatus: Nullable(ref(JobStatusSchema)),
    paid: Type.Boolean(),
    role,
    ownerName: Type.Optional(Nullable(Type.String({ description: 'Present when the caller is a collaborator rather than the owner.' }))),
    subscription: SubscriptionSchema,
    updatedAt: Timestamp,
  },
  { $id: 'WebsiteSummary' },
)

export const WebsiteListSchema = Type.Object(
  {
    items: Type.Array(ref(WebsiteSummarySchema)),
    websites: Type.Array(ref(WebsiteSummarySchema), { deprecated: true, description: 'Deprecated alias of items.' }),
    websiteLimits: Type.Optional(
      Type.Object(
        { count: Type.Integer(), max: Type.Integer(), canCreate: Type.Boolean() },
        { additionalProperties: true, description: 'How many websites the account owns and whether it may create another.' },
      ),
    ),
  },
  { $id: 'WebsiteList' },
)

export const WebsiteSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    slug: Nullable(Type.String()),
    status: websiteStatus,
    role,
    ownerName: Type.Optional(Nullable(Type.String({ description: 'Present when the caller is a collaborator rather than the owner.' }))),
    category: Type.Enum(CATEGORIES),
    description: Nullable(Type.String()),
    pageUrl: Type.Optional(Type.String({ format: 'uri' })),
    currentVersionId: Type.Optional(Type.String()),
    currentVersion: Nullable(
      Type.Object(
        { ...versionProperties, websiteId: Type.String(), bytes: Type.Integer({ description: 'Decoded size of the bundle.' }) },
        { additionalProperties: true, description: 'Raw record of the served version: the Version fields and more.' },
      ),
    ),
    freeChangesUsed: Type.Integer({ description: 'Versions published after the first.' }),
    freeChangesLimit: Type.Integer(),
    passwordProtected: Type.Boolean(),
    versions: Type.Array(ref(VersionSchema), { description: 'Every version, newest first.' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Website' },
)

export const JobSchema = Type.Object(
  {
    jobId: Type.String(),
    websiteId: Type.String(),
    status: ref(JobStatusSchema),
    currentPhase: Nullable(Type.String()),
    progressMessage: Nullable(Type.String()),
    pageUrl: Type.Optional(Type.String({ format: 'uri', description: "Present once the job is ready: the site's live URL." })),
    previewUrl: Type.Optional(Type.String({ format: 'uri', description: 'Present once the job is ready: where the version it produced is served, live or not.' })),
    attempt: Type.Integer(),
    statusUrl: Type.String({ description: 'App-relative status page path.' }),
  },
  { $id: 'Job' },
)

export const SlugSuggestionSchema = Type.Object(
  {
    slug: Type.String({ description: 'The normalized input.' }),
    valid: Type.Boolean({ description: 'Whether the normalized input is a well-formed slug.' }),
    available: Type.Boolean({ description: 'Whether it is free to claim; false when invalid.' }),
    suggestion: Type.String({ description: 'An available slug derived from the input.' }),
    message: Type.Optional(Type.String({ description: 'Why the input is invalid or taken; absent when usable.' })),
    pageUrl: Type.String({ format: 'uri', description: 'URL at which the suggestion would be served.' }),
  },
  { $id: 'SlugSuggestion' },
)

export const ApiIndexSchema = Type.Object(
  {
    name: Type.String(),
    version: Type.String(),
    openapi: Type.String({ format: 'uri' }),
    mcp: Type.String({ format: 'uri' }),
    protectedResourceMetadata: Type.String({ format: 'uri' }),
    tokens: Type.String({ format: 'uri' }),
    documentation: Type.String({ format: 'uri' }),
    llms: Type.String({ format: 'uri' }),
  },
  { $id: 'ApiIndex' },
)

export const WEBSITE_SCHEMAS = [
  PublishFileSchema,
  PublishWebsiteRequestSchema,
  PublishWebsiteResultSchema,
  PublishVersionRequestSchema,
  PublishVersionResultSchema,
  VersionFileSchema,
  VersionSchema,
  VersionListSchema,
  WebsiteSummarySchema,
  WebsiteListSchema,
  WebsiteSchema,
  JobSchema,
  SlugSuggestionSchema,
  ApiIndexSchema,
]

export type PublishFile = Static<typeof PublishFileSchema>
export type PublishWebsiteRequest = Static<typeof PublishWebsiteRequestSchema>
export type PublishWebsiteResult = Static<typeof PublishWebsiteResultSchema>
export type PublishVersionRequest = Static<typeof PublishVersionRequestSchema>
export type PublishVersionResult = Static<typeof PublishVersionResultSchema>
export type Version = Static<typeof VersionSchema>
export type VersionList = Static<typeof VersionListSchema>
export type WebsiteSummary = Static<typeof WebsiteSummarySchema>
export type WebsiteList = Static<typeof WebsiteListSchema>
export type Website = Static<typeof WebsiteSchema>
export type Job = Static<typeof JobSchema>
export type SlugSuggestion = Static<typeof SlugSuggestionSchema>
export type ApiIndex = Static<typeof ApiIndexSchema>
