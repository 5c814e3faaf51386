import { type Static, Type } from 'typebox'
import { CATEGORIES, FILE_SET_KINDS, ROLES, VERSION_KINDS, WEBSITE_STATUSES } from '../core/enums.ts'
import {
  type BundleLimits,
  DISPLAY_NAME_MAX_CHARS,
  formatSize,
  ID_MAX_CHARS,
  MAX_CHANGES,
  SITE_PASSWORD_MAX,
  SITE_PASSWORD_MIN,
  VERSION_MESSAGE_MAX_CHARS,
  VERSION_PAGE_DEFAULT,
  VERSION_PAGE_MAX,
  WEBSITE_DESCRIPTION_MAX_CHARS,
} from '../core/limits.ts'
import { JobStatusSchema, Nullable, PageQuery, ref, Timestamp, WarningSchema, withClientOnlyConstraints } from '../core/schemas.ts'
import { SLUG_MAX, SLUG_MIN, SLUG_PATTERN } from '../core/site-address.ts'
import { FileChangeSchema } from '../editing/editing.schemas.ts'
import { VersionChangeSchema } from './version-changes.schemas.ts'
import { PublishedFormsField, PublishFileSchema, VendoredField, VendoredFileSchema, VendorField } from '../publishing/publishing.schemas.ts'

export const WebsiteIdParam = Type.String({ minLength: 1, maxLength: ID_MAX_CHARS, description: 'Website id (web_...).' })
export const VersionIdParam = Type.String({ minLength: 1, maxLength: ID_MAX_CHARS, description: 'Version id (job_...) or version number (e.g. 2).' })
/** One side of a comparison in a path: a version, or a draft. */
export const FileSetRefParam = Type.String({
  minLength: 1,
  maxLength: ID_MAX_CHARS,
  description: 'A version id (job_...), a version number (e.g. 2) or a draft id (drf_...).',
})
/** A version as a body or a tool's arguments name it: its number (2, or "2") or its id (a draft id too, where a draft may stand in). */
export const versionRef = (options: { description: string; $id?: string }) =>
  Type.Union([Type.Integer({ minimum: 1 }), Type.String({ minLength: 1, maxLength: ID_MAX_CHARS })], options)
/** In a tool's arguments, where agents write numbers as numbers (services take a VersionRef, a path's text or a number alike). */
export const VersionRefArg = versionRef({ description: 'Version id (job_...) or number.' })
export const FileSetRefArg = versionRef({ description: 'Version id (job_...) or number, or draft id (drf_...).' })
export const JobIdParam = Type.String({ minLength: 1, maxLength: ID_MAX_CHARS, description: 'Job id (job_...), also the id of the version the job produced.' })
export const SlugSuggestValue = Type.String({ minLength: 1, maxLength: DISPLAY_NAME_MAX_CHARS, description: 'A site name or draft slug.' })

/** The path parameters of every operation on one website. */
export const WebsiteParams = Type.Object({ websiteId: WebsiteIdParam })

/**
 * The publish requests (createWebsite, createWebsiteVersion), whose files field states the bundle
 * limits an instance enforces (config.ts). More files than the limit still reach the authoring
 * rules, which report TOO_MANY_FILES with every other violation.
 */
export function publishRequestSchemas(limits: BundleLimits) {
  const filesField = withClientOnlyConstraints(
    Type.Array(ref(PublishFileSchema), {
      minItems: 1,
      description: `The complete site bundle: 1 to ${limits.maxFiles} files (more is rejected with PUBLISH_INVALID / TOO_MANY_FILES), at most ${formatSize(limits.maxFileBytes)} each and ${formatSize(limits.maxBundleBytes)} in all once decoded, at most ${limits.maxHtmlPages} HTML pages, \`index.html\` required.`,
    }),
    { maxItems: limits.maxFiles },
  )

  const PublishWebsiteRequestSchema = Type.Object(
    {
      name: Type.Optional(
        Type.String({ minLength: 1, maxLength: DISPLAY_NAME_MAX_CHARS, description: 'Display name. Used to derive the slug when slug is omitted.' }),
      ),
      category: Type.Enum(CATEGORIES),
      description: Type.Optional(Type.String({ maxLength: WEBSITE_DESCRIPTION_MAX_CHARS })),
      slug: Type.Optional(
        Type.String({
          minLength: SLUG_MIN,
          maxLength: SLUG_MAX,
          pattern: SLUG_PATTERN,
          description:
            'Preferred subdomain. When given and taken, the request fails with 409 SLUG_TAKEN (naming a free suggestion); when omitted, a slug is derived from name and suffixed until free.',
        }),
      ),
      files: filesField,
      vendor: VendorField,
    },
    { $id: 'PublishWebsiteRequest', additionalProperties: false },
  )

  const PublishVersionRequestSchema = Type.Object(
    {
      files: Type.Optional(filesField),
      baseVersion: Type.Optional(ref(VersionRefSchema)),
      changes: Type.Optional(
        Type.Array(ref(VersionChangeSchema), {
          minItems: 1,
          maxItems: MAX_CHANGES,
          description: `Instead of files: up to ${MAX_CHANGES} changes to the files of baseVersion, applied in order; the first that does not apply refuses them all, naming it.`,
        }),
      ),
      overwrite: Type.Optional(
        Type.Boolean({
          description:
            'Only with baseVersion. Default false: a version newer than baseVersion refuses the publish (VERSION_CONFLICT); true publishes anyway, undoing its changes.',
        }),
      ),
      message: Type.Optional(Type.String({ maxLength: VERSION_MESSAGE_MAX_CHARS, description: "Changelog entry; stored as the version's instruction." })),
      // No schema `default` (generated clients would then require the field): the service applies it.
      promote: Type.Optional(
        Type.Boolean({
          description:
            'Default true: the new version goes live at once. When false, the live version stays live and the new one is only stored (reviewable at its previewUrl).',
        }),
      ),
      expiresAt: Type.Optional(
        Type.String({
          description: 'Only with promote false: from this time on (ISO 8601, within a year) previewUrl answers 404; the version stays.',
        }),
      ),
      vendor: VendorField,
    },
    {
      $id: 'PublishVersionRequest',
      additionalProperties: false,
      description:
        'Either files (the complete bundle) or baseVersion with changes (a patch), not both. baseVersion may also come with files: the publish is then refused with VERSION_CONFLICT if a newer version exists.',
    },
  )

  return { PublishWebsiteRequestSchema, PublishVersionRequestSchema }
}

export type PublishRequestSchemas = ReturnType<typeof publishRequestSchemas>

export const VersionRefSchema = versionRef({ $id: 'VersionRef', description: 'A version of the website: its number (2, or "2") or its id (job_...).' })

/** What the site check found in a version: its publish result and the version carry it. */
const warningsField = Type.Array(ref(WarningSchema), {
  description:
    'What the site check found, in bundle order: broken links and anchors, what the served Content-Security-Policy blocks, pages without title, lang or viewport, images without alt, heavy pages, oversized images, duplicate ids, unused files (docs/guide/site-check.md). Empty when clean; never refuses a publish.',
})

export const PublishWebsiteResultSchema = Type.Object(
  {
    websiteId: Type.String(),
    jobId: Type.String(),
    version: Type.Integer({ description: 'Always 1 for a new website.' }),
    slug: Type.String(),
    pageUrl: Type.String({ format: 'uri', description: 'The live URL; serving starts immediately.' }),
    bytesWritten: Type.Integer({ description: 'Total decoded bytes of the bundle.' }),
    warnings: warningsField,
    vendored: VendoredField,
    forms: PublishedFormsField,
  },
  { $id: 'PublishWebsiteResult' },
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
    warnings: warningsField,
    vendored: VendoredField,
    forms: PublishedFormsField,
  },
  { $id: 'PublishVersionResult' },
)

const VersionFileSchema = Type.Object(
  {
    originalName: Type.String({ description: 'Path within the bundle.' }),
    contentType: Nullable(Type.String()),
    size: Type.Integer({ description: 'Bytes.' }),
    sha256: Type.String({
      description: "SHA-256 of the bytes, lowercase hex: give it as a bundle file's sha256 to republish the file unchanged without sending it.",
    }),
  },
  { $id: 'VersionFile' },
)

const versionProperties = {
  id: Type.String(),
  jobId: Type.String({ description: 'Same value as id.' }),
  version: Type.Integer(),
  kind: Type.Enum(VERSION_KINDS),
  status: ref(JobStatusSchema),
  instruction: Type.Optional(Type.String({ description: 'The changelog message that produced the version.' })),
  files: Type.Array(ref(VersionFileSchema)),
  isCurrent: Type.Boolean({ description: 'Whether this version is the one served at the live URL.' }),
  previewUrl: Type.String({ format: 'uri', description: 'Where this version is served for review, live or not.' }),
  warnings: warningsField,
  createdAt: Timestamp,
}

export const VersionSchema = Type.Object(versionProperties, { $id: 'Version' })

export const VersionListSchema = Type.Object({ versions: Type.Array(ref(VersionSchema), { description: 'Newest first.' }) }, { $id: 'VersionList' })

/** One page of a website's versions (the MCP tools; REST lists every version). */
export const VersionPageQuery = PageQuery('Versions', VERSION_PAGE_MAX, VERSION_PAGE_DEFAULT)

export const VersionPageSchema = Type.Object({
  versions: Type.Array(ref(VersionSchema), { description: 'Newest first.' }),
  nextCursor: Nullable(Type.String({ description: 'Pass as cursor for the next, older page; null on the last page.' })),
})

const SubscriptionSchema = Nullable(Type.Object({ status: Type.String(), renewsAt: Nullable(Type.String()), endsAt: Nullable(Type.String()) }))

const websiteStatus = Type.Enum(WEBSITE_STATUSES)
const role = Type.Enum(ROLES, { description: "The caller's relationship to the site." })

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
    passwordProtected: Type.Boolean(),
    updatedAt: Timestamp,
  },
  { $id: 'WebsiteSummary' },
)

/** listWebsites' query: the site with one slug, to find it among more than one page of sites. */
export const WebsiteListQuery = Type.Object(
  {
    slug: Type.Optional(
      Type.String({
        minLength: SLUG_MIN,
        maxLength: SLUG_MAX,
        pattern: SLUG_PATTERN,
        description: 'Only the site with this slug, when you own or edit it (an empty list otherwise).',
      }),
    ),
  },
  { additionalProperties: false },
)
export type WebsiteListQuery = Static<typeof WebsiteListQuery>

export const WebsiteListSchema = Type.Object(
  {
    items: Type.Array(ref(WebsiteSummarySchema)),
    websites: Type.Array(ref(WebsiteSummarySchema), { deprecated: true, description: 'Deprecated alias of items.' }),
    websiteLimits: Type.Optional(
      Type.Object(
        {
          count: Type.Integer(),
          max: Type.Integer(),
          canCreate: Type.Boolean(),
          formSubmissions: Type.Optional(
            Type.Integer({ description: 'Form submissions stored for every website the account owns (spam included; deleted ones no longer count).' }),
          ),
        },
        {
          additionalProperties: true,
          description:
            'How many websites the account owns, whether this token may create another, and the form submissions its websites hold; absent for a token limited to some websites.',
        },
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
    usage: Type.Object(
      {
        formSubmissions: Type.Integer({ description: 'Form submissions the site stores now (spam included; deleted and expired ones no longer count).' }),
        formSubmissionsLast30Days: Type.Integer({ description: 'Of those, the ones received in the last 30 days.' }),
      },
      { description: "What the site holds that counts in its owner's usage." },
    ),
    versions: Type.Array(ref(VersionSchema), { description: 'Every version, newest first.' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Website' },
)

/** A website with one page of its versions instead of every version. */
export const WebsiteWithVersionPageSchema = Type.Object({ ...WebsiteSchema.properties, ...VersionPageSchema.properties })

export const JobSchema = Type.Object(
  {
    jobId: Type.String(),
    websiteId: Type.String(),
    status: ref(JobStatusSchema),
    currentPhase: Nullable(Type.String()),
    progressMessage: Nullable(Type.String()),
    pageUrl: Type.Optional(Type.String({ format: 'uri', description: "Present once the job is ready: the site's live URL." })),
    previewUrl: Type.Optional(
      Type.String({ format: 'uri', description: 'Present once the job is ready: where the version it produced is served, live or not.' }),
    ),
    attempt: Type.Integer(),
    statusUrl: Type.String({ description: 'App-relative status page path.' }),
  },
  { $id: 'Job' },
)

export const SlugSuggestionSchema = Type.Object(
  {
    slug: Type.String({ description: 'The input normalized toward a slug (`My Café!` gives `my-cafe`); empty when nothing is left.' }),
    valid: Type.Boolean({ description: 'Whether the input itself is a well-formed slug (`My Café!` is not).' }),
    available: Type.Boolean({ description: 'Whether the input slug is free to claim; false when invalid, taken or reserved.' }),
    suggestion: Type.String({ description: 'An available slug derived from the input; use it when available is false.' }),
    message: Type.Optional(Type.String({ description: 'Why the input is invalid or taken; absent when usable.' })),
    pageUrl: Type.String({ format: 'uri', description: 'URL at which the suggestion would be served.' }),
  },
  { $id: 'SlugSuggestion' },
)

const FileSetLabelSchema = Type.Object(
  {
    kind: Type.Enum(FILE_SET_KINDS, { description: '`version`, or `draft` for a draft being edited.' }),
    id: Type.String({ description: 'The version id (job_...) or the draft id (drf_...).' }),
    version: Type.Integer({ description: "The version's number; for a draft, the number of the version it is based on." }),
  },
  { $id: 'FileSetLabel', description: 'One side of a comparison, as its ref resolved.' },
)

export const VersionDiffSchema = Type.Object(
  {
    from: ref(FileSetLabelSchema),
    to: ref(FileSetLabelSchema),
    files: Type.Array(ref(FileChangeSchema), { description: 'Every file that differs, by path; unchanged files are left out.' }),
  },
  { $id: 'VersionDiff' },
)

/** A site password as REST and MCP take it (the web form checks the same limits). */
export const SitePasswordValue = Type.String({ minLength: SITE_PASSWORD_MIN, maxLength: SITE_PASSWORD_MAX })

export const SitePasswordSchema = Type.Object(
  { password: SitePasswordValue },
  {
    $id: 'SitePassword',
    additionalProperties: false,
    description: `The password visitors must enter, ${SITE_PASSWORD_MIN} to ${SITE_PASSWORD_MAX} characters. Stored hashed; never shown again.`,
  },
)
/** The named schemas of websites, with these publish requests. */
export const websiteSchemas = (publish: PublishRequestSchemas) => [
  PublishFileSchema,
  VendoredFileSchema,
  publish.PublishWebsiteRequestSchema,
  PublishWebsiteResultSchema,
  VersionRefSchema,
  VersionChangeSchema,
  publish.PublishVersionRequestSchema,
  PublishVersionResultSchema,
  VersionFileSchema,
  VersionSchema,
  VersionListSchema,
  WebsiteSummarySchema,
  WebsiteListSchema,
  WebsiteSchema,
  JobSchema,
  SlugSuggestionSchema,
  SitePasswordSchema,
  FileSetLabelSchema,
  VersionDiffSchema,
]

export type PublishWebsiteRequest = Static<PublishRequestSchemas['PublishWebsiteRequestSchema']>
export type PublishWebsiteResult = Static<typeof PublishWebsiteResultSchema>
export type PublishVersionRequest = Static<PublishRequestSchemas['PublishVersionRequestSchema']>
export type PublishVersionResult = Static<typeof PublishVersionResultSchema>
export type Version = Static<typeof VersionSchema>
export type VersionList = Static<typeof VersionListSchema>
export type VersionPageQuery = Static<typeof VersionPageQuery>
export type VersionPage = Static<typeof VersionPageSchema>
export type WebsiteWithVersionPage = Static<typeof WebsiteWithVersionPageSchema>
export type WebsiteSummary = Static<typeof WebsiteSummarySchema>
export type WebsiteList = Static<typeof WebsiteListSchema>
export type Website = Static<typeof WebsiteSchema>
export type Job = Static<typeof JobSchema>
export type SlugSuggestion = Static<typeof SlugSuggestionSchema>
export type VersionDiff = Static<typeof VersionDiffSchema>
