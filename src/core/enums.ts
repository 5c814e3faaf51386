/**
 * Every closed set of values Plinth stores or exchanges, declared once: the TypeBox schemas, the
 * database table types and the services all derive theirs from these lists.
 */

export const CATEGORIES = ['real_estate', 'restaurant', 'service', 'portfolio', 'event', 'resume', 'other'] as const
export type Category = (typeof CATEGORIES)[number]

export const WEBSITE_STATUSES = ['active', 'draft', 'deleted'] as const
export type WebsiteStatus = (typeof WEBSITE_STATUSES)[number]

/** The caller's relationship to a website. */
export const ROLES = ['owner', 'editor'] as const
export type Role = (typeof ROLES)[number]

/** Roles a website can be shared with (the owner is not a member). */
export type MemberRole = Exclude<Role, 'owner'>

/**
 * What a caller asks to do to a website (requireSite in db/access.ts): `see` it, `edit` it
 * (publish, promote, change its content and password) or `own` it (delete it, manage its editors,
 * invitations and domains). Owners hold all three; editors hold `see` and `edit`.
 */
export type SitePermission = 'see' | 'edit' | 'own'

/** Version 1 is `initial`; every later version is a `refinement`. */
export const VERSION_KINDS = ['initial', 'refinement'] as const
export type VersionKind = (typeof VERSION_KINDS)[number]

export const JOB_STATUSES = ['pending', 'claimed', 'generating', 'ready', 'retry', 'dead'] as const
export type JobStatus = (typeof JOB_STATUSES)[number]

/** What a personal access token reaches: the REST API, the MCP server, or both. */
export const TOKEN_ACCESS = ['rest', 'mcp', 'both'] as const
export type TokenAccess = (typeof TOKEN_ACCESS)[number]
export type Surface = Exclude<TokenAccess, 'both'>
/** What a token reaches when its creator does not say. */
export const DEFAULT_TOKEN_ACCESS: TokenAccess = 'both'

/** The scope that stands for every capability (RFC 9728 metadata, WWW-Authenticate, the OpenAPI document). */
export const TOKEN_SCOPE = 'mcp'

/**
 * What a token may be limited to (core/capabilities.ts says which operation needs which):
 * `read` looks, `preview` publishes what does not go live (drafts, previews), `promote` changes
 * what is live, `content` writes collections and entries, `forms` reads and handles form
 * submissions, `manage` changes a site's settings (password, webhooks, deletion). A token with
 * none listed has them all.
 */
export const CAPABILITIES = ['read', 'preview', 'promote', 'content', 'forms', 'manage'] as const
export type Capability = (typeof CAPABILITIES)[number]

export const UPLOAD_STATUSES = ['pending', 'complete'] as const
export type UploadStatus = (typeof UPLOAD_STATUSES)[number]

/** What one side of a comparison of a site's files is: a published version, or a draft being edited. */
export const FILE_SET_KINDS = ['version', 'draft'] as const
export type FileSetKind = (typeof FILE_SET_KINDS)[number]

/** How a file differs between two sets of a site's files (editing/file-changes.ts). */
export const FILE_CHANGE_STATUSES = ['added', 'removed', 'changed', 'moved'] as const
export type FileChangeStatus = (typeof FILE_CHANGE_STATUSES)[number]

/** The window a page is loaded in for a screenshot or a browser report: a desktop's or a phone's (browser/viewports.ts). */
export const VIEWPORTS = ['desktop', 'mobile'] as const
export type Viewport = (typeof VIEWPORTS)[number]

/** What a webhook may be told of (webhooks/webhook-events.ts says what each carries). */
export const WEBHOOK_EVENT_TYPES = [
  'version.published',
  'version.promoted',
  'site.deleted',
  'entry.changed',
  'form.submitted',
  'promotion.requested',
  'promotion.decided',
] as const
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number]

/** The step of a traffic series: an hour or a day (traffic/traffic-range.ts). */
export const TRAFFIC_GRANULARITIES = ['hour', 'day'] as const
export type Granularity = (typeof TRAFFIC_GRANULARITIES)[number]

/** Where one delivery of an event to a webhook stands. */
export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number]

/** How a site's form submissions are e-mailed: one message each, or one digest a day. */
export const FORM_NOTIFY_MODES = ['each', 'daily'] as const
export type FormNotifyMode = (typeof FORM_NOTIFY_MODES)[number]

/** Where a request that a person make a version live stands (approvals/promotion-requests.ts). */
export const PROMOTION_REQUEST_STATUSES = ['pending', 'approved', 'declined', 'cancelled'] as const
export type PromotionRequestStatus = (typeof PROMOTION_REQUEST_STATUSES)[number]

/** What a schedule does at its time: make a version live. */
export const SCHEDULE_KINDS = ['promote'] as const
export type ScheduleKind = (typeof SCHEDULE_KINDS)[number]

/** Where a schedule stands: waiting, being run by an instance, run, failed (its `error` says why), or cancelled. */
export const SCHEDULE_STATUSES = ['pending', 'running', 'done', 'failed', 'cancelled'] as const
export type ScheduleStatus = (typeof SCHEDULE_STATUSES)[number]
