/** Table types for Kysely. Timestamps are ISO-8601 UTC strings in both dialects (they sort as text). */
import type { Generated, Insertable, Selectable } from 'kysely'

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
  access: 'rest' | 'mcp' | 'both'
  created_at: string
  last_used_at: string | null
  expires_at: string | null
  revoked_at: string | null
}

export interface WebsitesTable {
  id: string
  owner_id: string
  name: string
  slug: string
  category: string
  description: string | null
  status: 'active' | 'draft' | 'deleted'
  current_version_id: string | null
  /** Highest version number handed out; bumped atomically to number new versions. */
  last_version_number: Generated<number>
  created_at: string
  updated_at: string
}

export interface WebsiteMembersTable {
  website_id: string
  user_id: string
  role: 'editor'
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
  kind: 'initial' | 'refinement'
  status: 'pending' | 'claimed' | 'generating' | 'ready' | 'retry' | 'dead'
  instruction: string | null
  current_phase: string | null
  progress_message: string | null
  attempt: number
  bytes: number
  created_by: string
  created_at: string
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
  created_at: string
}

export interface Database {
  users: UsersTable
  tokens: TokensTable
  websites: WebsitesTable
  website_members: WebsiteMembersTable
  versions: VersionsTable
  version_files: VersionFilesTable
  blobs: BlobsTable
}

export type UserRow = Selectable<UsersTable>
export type TokenRow = Selectable<TokensTable>
export type WebsiteRow = Selectable<WebsitesTable>
export type VersionRow = Selectable<VersionsTable>
export type VersionFileRow = Selectable<VersionFilesTable>
export type NewVersion = Insertable<VersionsTable>
