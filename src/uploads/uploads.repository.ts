import type { Kysely } from 'kysely'
import { type SiteViewer, visibleWebsites } from '../db/access.ts'
import type { Database, UploadRow } from '../db/types.ts'

/** Queries over uploads and the stored bytes a user may reuse by hash (their sites' versions and drafts). */
export class UploadsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  insert(rows: UploadRow[]): Promise<unknown> {
    return this.db.insertInto('uploads').values(rows).execute()
  }

  find(uploadId: string): Promise<UploadRow | undefined> {
    return this.db.selectFrom('uploads').selectAll().where('id', '=', uploadId).executeTakeFirst()
  }

  findOwned(userId: string, uploadIds: string[]): Promise<UploadRow[]> {
    if (uploadIds.length === 0) return Promise.resolve([])
    return this.db.selectFrom('uploads').selectAll().where('user_id', '=', userId).where('id', 'in', uploadIds).execute()
  }

  /** Marks a pending upload complete; false when it was not pending (a concurrent PUT won). */
  async complete(uploadId: string, sha256: string, at: string, expiresAt: string): Promise<boolean> {
    const result = await this.db
      .updateTable('uploads')
      .set({ status: 'complete', sha256, completed_at: at, expires_at: expiresAt })
      .where('id', '=', uploadId)
      .where('status', '=', 'pending')
      .executeTakeFirst()
    return Number(result.numUpdatedRows) === 1
  }

  /** Deletes the user's expired uploads; the hashes of the bytes they held. */
  async deleteExpired(userId: string, now: string): Promise<string[]> {
    const rows = await this.db.deleteFrom('uploads').where('user_id', '=', userId).where('expires_at', '<=', now).returning('sha256').execute()
    return rows.flatMap((row) => (row.sha256 === null ? [] : [row.sha256]))
  }

  /** Deletes up to `limit` expired uploads of anyone; their ids and the hashes of the bytes they held. */
  async deleteSomeExpired(now: string, limit: number): Promise<{ count: number; hashes: string[] }> {
    const ids = this.db.selectFrom('uploads').select('id').where('expires_at', '<=', now).limit(limit)
    const rows = await this.db.deleteFrom('uploads').where('id', 'in', ids).returning('sha256').execute()
    return { count: rows.length, hashes: rows.flatMap((row) => (row.sha256 === null ? [] : [row.sha256])) }
  }

  /** Hashes among these in a version of a site the viewer sees. */
  async publishedHashes(viewer: SiteViewer, hashes: string[]): Promise<string[]> {
    if (hashes.length === 0) return []
    const rows = await visibleWebsites(this.db, viewer)
      .innerJoin('versions', 'versions.website_id', 'websites.id')
      .innerJoin('version_files', 'version_files.version_id', 'versions.id')
      .where('version_files.hash', 'in', hashes)
      .select('version_files.hash')
      .distinct()
      .execute()
    return rows.map((r) => r.hash)
  }

  /** Hashes among these in an open (unexpired) draft of a site the viewer sees. */
  async draftHashes(viewer: SiteViewer, hashes: string[], now: string): Promise<string[]> {
    if (hashes.length === 0) return []
    const rows = await visibleWebsites(this.db, viewer)
      .innerJoin('drafts', 'drafts.website_id', 'websites.id')
      .innerJoin('draft_files', 'draft_files.draft_id', 'drafts.id')
      .where('drafts.expires_at', '>', now)
      .where('draft_files.hash', 'in', hashes)
      .select('draft_files.hash')
      .distinct()
      .execute()
    return rows.map((r) => r.hash)
  }

  /** Hashes among these of the user's completed uploads that are still usable. */
  async uploadedHashes(userId: string, hashes: string[], now: string): Promise<string[]> {
    if (hashes.length === 0) return []
    const rows = await this.db
      .selectFrom('uploads')
      .select('sha256')
      .where('user_id', '=', userId)
      .where('status', '=', 'complete')
      .where('sha256', 'in', hashes)
      .where('expires_at', '>', now)
      .distinct()
      .execute()
    return rows.flatMap((r) => (r.sha256 === null ? [] : [r.sha256]))
  }
}
