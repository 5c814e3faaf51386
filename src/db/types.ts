/** Table types for Kysely. Timestamps are ISO-8601 UTC strings in both dialects (they sort as text). */
import type { Generated, Insertable, Selectable } from 'kysely'
import type { Category, JobStatus, MemberRole, TokenAccess, UploadStatus, VersionKind, WebsiteStatus } from '../core/enums.ts'
import type { FormDigestDaysTable, FormFilesTable, FormSubmissionsTable, VersionFormsTable } from './form-tables.ts'
import type { TrafficHoursTable, TrafficKeysTable, TrafficSaltsTable, TrafficVisitorsTable } from './traffic-tables.ts'
import type { WebhookDeliveriesTable, WebhookEventsTable, WebhooksTable } from './webhook-tables.ts'
import type { PromotionRequestsTable, SchedulesTable } from './promotion-tables.ts'

export type * from './form-tables.ts'
export type * from './webhook-tables.ts'
export type * from './promotion-tables.ts'
export type * from './traffic-tables.ts'

export interface UsersTable {
  id: string
  email: string
  name: string | null
  password_hash: string
  created_at: string
}

export interface TokensTable {
  id: string
  user_id: string
  name: string
  token_hash: string
  /** First characters of the token, shown in listings so a human can tell tokens apart. */
  token_hint: string
  access: TokenAccess
  created_at: string
  last_used_at: string | null
  expires_at: string | null
  revoked_at: string | null
  /** A JSON array of the capabilities it is limited to (core/capabilities.ts); null: all of them. */
  capabilities: string | null
  /** A JSON array of the website ids it is limited to; null: every site its person sees. */
  sites: string | null
}

export interface WebsitesTable {
  id: string
  owner_id: string
  name: string
  slug: string
  category: Category
  description: string | null
  status: WebsiteStatus
  current_version_id: string | null
  /** Highest version number handed out; bumped atomically to number new versions. */
  last_version_number: Generated<number>
  created_at: string
  updated_at: string
  /** The site password's scrypt hash; null when the site is open to everyone. */
  password_hash: string | null
  /** When the password was last set: unlock cookies are bound to it. */
  password_set_at: string | null
  /** JSON text of the addresses each form submission is e-mailed to; null: the owner's. */
  form_notify: string | null
  /** Days form submissions are kept; null: until deleted. */
  form_retention_days: number | null
  /** `each` (an e-mail per submission) or `daily` (one digest a day). */
  form_notify_mode: Generated<string>
}

export interface WebsiteMembersTable {
  website_id: string
  user_id: string
  role: MemberRole
  created_at: string
}

/** An editor invited by email, who becomes a member when an account with that email signs up or signs in. */
export interface WebsiteInvitationsTable {
  website_id: string
  /** Trimmed and lowercased, as accounts store theirs. */
  email: string
  invited_by: string
  created_at: string
}

/**
 * A version of a site and the job that produced it (their ids are the same). Publishes through
 * the API are synchronous, so rows are written already `ready`.
 */
export interface VersionsTable {
  id: string
  website_id: string
  number: number
  kind: VersionKind
  status: JobStatus
  instruction: string | null
  current_phase: string | null
  progress_message: string | null
  attempt: number
  bytes: number
  created_by: string
  created_at: string
  /** From when a version that is not live is no longer served at its preview host (migration 0023). */
  preview_expires_at: string | null
}

export interface VersionFilesTable {
  version_id: string
  path: string
  hash: string
  size: number
  content_type: string
}

/** One row per stored blob: which precompressed variants exist, so serving never probes the disk. */
export interface BlobsTable {
  hash: string
  size: number
  br_size: number | null
  gzip_size: number | null
  /** The content type its variants are being made for; null once they are settled (blob-variants.ts). */
  variants_type: string | null
  created_at: string
}

export interface CollectionsTable {
  id: string
  website_id: string
  name: string
  label: string
  /** JSON text of Field[]. */
  fields: string
  /** JSON text of Field[]: removed fields whose stored values are kept. */
  removed_fields: string
  created_at: string
  updated_at: string
}

export interface EntriesTable {
  id: string
  collection_id: string
  slug: string
  published_at: string
  created_at: string
  updated_at: string
  /** JSON text: the values as sent (image URLs absolute), plus kept values of removed fields. */
  data: string
  /** JSON text: display-ready values (sanitized HTML, image library URLs). */
  rendered: string
  /** SHA-256 of the effective input, to report a re-sent identical entry as unchanged. */
  content_hash: string
}

/** Server-wide secrets shared by every instance, generated on first use. */
export interface SecretsTable {
  name: string
  value: string
  created_at: string
}

/**
 * A file reserved by createUploads. `pending` until its bytes are PUT to the signed URL, then
 * `complete` with the SHA-256 of the stored blob. `expires_at` is the end of the signed URL while
 * pending and the end of the time it may be used once complete.
 */
export interface UploadsTable {
  id: string
  user_id: string
  filename: string | null
  content_type: string | null
  size: number
  status: UploadStatus
  sha256: string | null
  expires_at: string
  created_at: string
  completed_at: string | null
}

/** An image of a site's library (per collection, or site-wide when collection_id is null). */
export interface AssetsTable {
  id: string
  website_id: string
  collection_id: string | null
  /** The URL it was fetched from; null for bytes that came without one (uploads, data: URLs). */
  source_url: string | null
  hash: string
  content_type: string
  size: number
  width: number | null
  height: number | null
  created_at: string
}

/** A web site session; `id` is the SHA-256 of the secret in the session cookie. */
export interface SessionsTable {
  id: string
  user_id: string
  created_at: string
  last_seen_at: string
  expires_at: string
  user_agent: string | null
}

/** One failed sign-in, counted against `subject` (`email:...` or `address:...`). */
export interface SignInFailuresTable {
  subject: string
  at: string
}

/** One instance of an oidc-provider model (client, grant, code, token, interaction, session). */
export interface OAuthModelsTable {
  model: string
  id: string
  /** JSON text of the model's payload. */
  payload: string
  grant_id: string | null
  user_code: string | null
  uid: string | null
  expires_at: string | null
  consumed_at: string | null
}

/** An app a person connected over OAuth, with the grant that holds its tokens. */
export interface OAuthConnectionsTable {
  user_id: string
  client_id: string
  grant_id: string
  client_name: string
  redirect_host: string
  first_used_at: string
  last_used_at: string
  /** What the person let the app do, as tokens store it: a JSON array of capabilities; null: all. */
  capabilities: string | null
  /** The website ids the person let the app reach (JSON array); null: every site they see. */
  sites: string | null
}

/** A domain of a site's own (lowercase ASCII, no trailing dot), served once its TXT challenge is seen. */
export interface CustomDomainsTable {
  domain: string
  website_id: string
  /** The value the TXT record `_plinth-challenge.{domain}` must hold. */
  challenge: string
  created_by: string
  created_at: string
  /** Null until the challenge was seen; only verified domains are served. */
  verified_at: string | null
  last_checked_at: string | null
  /** Why the last check failed, as shown to the owner; null after a success or before any check. */
  last_error: string | null
}

/**
 * A working copy of a site's files, started from one of its versions (the base) and published as a
 * new version of it. Seen and kept only until `expires_at`, which every write moves on.
 */
export interface DraftsTable {
  /** `drf_` and lowercase letters and digits: the part after the prefix names its preview host. */
  id: string
  website_id: string
  base_version_id: string
  created_by: string
  created_at: string
  updated_at: string
  expires_at: string
  /** An expiry the caller set: writes move expires_at on, never past it; null: no such cap (migration 0023). */
  expires_by: string | null
}

/** One file of a draft, as a version's file: path -> blob. */
export interface DraftFilesTable {
  draft_id: string
  path: string
  hash: string
  size: number
  content_type: string
}

/** What the site check found in a version (migration 0018). */
export interface VersionWarningsTable {
  version_id: string
  /** JSON text of Warning[] (core/schemas.ts). */
  warnings: string
}

export interface Database {
  users: UsersTable
  tokens: TokensTable
  websites: WebsitesTable
  website_members: WebsiteMembersTable
  website_invitations: WebsiteInvitationsTable
  versions: VersionsTable
  version_files: VersionFilesTable
  blobs: BlobsTable
  secrets: SecretsTable
  uploads: UploadsTable
  collections: CollectionsTable
  entries: EntriesTable
  assets: AssetsTable
  sessions: SessionsTable
  sign_in_failures: SignInFailuresTable
  oauth_models: OAuthModelsTable
  oauth_connections: OAuthConnectionsTable
  custom_domains: CustomDomainsTable
  drafts: DraftsTable
  draft_files: DraftFilesTable
  version_forms: VersionFormsTable
  version_warnings: VersionWarningsTable
  form_submissions: FormSubmissionsTable
  form_files: FormFilesTable
  form_digest_days: FormDigestDaysTable
  webhooks: WebhooksTable
  webhook_events: WebhookEventsTable
  webhook_deliveries: WebhookDeliveriesTable
  promotion_requests: PromotionRequestsTable
  schedules: SchedulesTable
  traffic_salts: TrafficSaltsTable
  traffic_hours: TrafficHoursTable
  traffic_keys: TrafficKeysTable
  traffic_visitors: TrafficVisitorsTable
}

export type UserRow = Selectable<UsersTable>
export type TokenRow = Selectable<TokensTable>
export type WebsiteRow = Selectable<WebsitesTable>
export type VersionRow = Selectable<VersionsTable>
export type VersionFileRow = Selectable<VersionFilesTable>
export type NewVersion = Insertable<VersionsTable>
export type CollectionRow = Selectable<CollectionsTable>
export type EntryRow = Selectable<EntriesTable>
export type UploadRow = Selectable<UploadsTable>
export type AssetRow = Selectable<AssetsTable>
export type SessionRow = Selectable<SessionsTable>
export type OAuthConnectionRow = Selectable<OAuthConnectionsTable>
export type CustomDomainRow = Selectable<CustomDomainsTable>
export type DraftRow = Selectable<DraftsTable>
export type DraftFileRow = Selectable<DraftFilesTable>
