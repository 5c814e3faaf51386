import type { Kysely, Transaction } from 'kysely'
import type { Executor } from '../db/access.ts'
import type { Database, DraftFileRow, DraftRow } from '../db/types.ts'
import { HTML_CONTENT_TYPE } from '../publishing/content-rules.ts'

/** A draft with the number of the version it is based on. */
export interface DraftWithBase extends DraftRow {
  base_number: number
}

/** What a draft's files add up to, against the bundle limits. */
export interface DraftTotals {
  files: number
  bytes: number
  /** Files served as text/html (TOO_MANY_PAGES counts them). */
  pages: number
}

/**
 * Queries over drafts and their files. Only open drafts (`expires_at` after `now`) are found:
 * an expired draft is gone for every caller at once, whether or not the sweep has removed it yet.
 */
export class DraftsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  transaction<T>(work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(work)
  }

  insertDraft(trx: Executor, draft: DraftRow): Promise<unknown> {
    return trx.insertInto('drafts').values(draft).execute()
  }

  /** The files of a version, as the draft's own. */
  copyVersionFiles(trx: Executor, draftId: string, versionId: string): Promise<unknown> {
    return trx
      .insertInto('draft_files')
      .columns(['draft_id', 'path', 'hash', 'size', 'content_type'])
      .expression((eb) =>
        eb
          .selectFrom('version_files')
          .select((select) => [select.cast<string>(select.val(draftId), 'text').as('draft_id'), 'path', 'hash', 'size', 'content_type'])
          .where('version_id', '=', versionId),
      )
      .execute()
  }

  private withBase(db: Executor) {
    return db.selectFrom('drafts').innerJoin('versions', 'versions.id', 'drafts.base_version_id').selectAll('drafts').select('versions.number as base_number')
  }

  /** A site's open drafts, oldest first. */
  listOpen(websiteId: string, now: string, db: Executor = this.db): Promise<DraftWithBase[]> {
    return this.withBase(db)
      .where('drafts.website_id', '=', websiteId)
      .where('drafts.expires_at', '>', now)
      .orderBy('drafts.created_at')
      .orderBy('drafts.id')
      .execute()
  }

  findOpen(websiteId: string, draftId: string, now: string, db: Executor = this.db): Promise<DraftWithBase | undefined> {
    return this.withBase(db).where('drafts.id', '=', draftId).where('drafts.website_id', '=', websiteId).where('drafts.expires_at', '>', now).executeTakeFirst()
  }

  /**
   * Marks an open draft written (its expiry moved on) and, on PostgreSQL, locks its row until the
   * transaction ends, so that writes to one draft are recorded one at a time. False when the draft
   * is gone (discarded, published, expired).
   */
  async touch(trx: Executor, draftId: string, now: string, expiresAt: string): Promise<boolean> {
    const result = await trx
      .updateTable('drafts')
      // Never past an expiry the caller set (expires_by): ISO times in UTC compare as text.
      .set((eb) => ({
        updated_at: now,
        expires_at: eb
          .case()
          .when(eb.and([eb('expires_by', 'is not', null), eb('expires_by', '<', expiresAt)]))
          .then(eb.ref('expires_by').$castTo<string>())
          .else(expiresAt)
          .end(),
      }))
      .where('id', '=', draftId)
      .where('expires_at', '>', now)
      .executeTakeFirst()
    return Number(result.numUpdatedRows) === 1
  }

  /** Sets an open draft's expiry and its cap (null: none). False when the draft is gone. */
  async setExpiry(trx: Executor, draftId: string, now: string, expiresAt: string, expiresBy: string | null): Promise<boolean> {
    const result = await trx
      .updateTable('drafts')
      .set({ expires_at: expiresAt, expires_by: expiresBy })
      .where('id', '=', draftId)
      .where('expires_at', '>', now)
      .executeTakeFirst()
    return Number(result.numUpdatedRows) === 1
  }

  /** Locks a draft's row until the transaction ends, changing nothing (see touch); false when it is gone. */
  async lock(trx: Executor, draftId: string): Promise<boolean> {
    const result = await trx
      .updateTable('drafts')
      .set((eb) => ({ updated_at: eb.ref('updated_at') }))
      .where('id', '=', draftId)
      .executeTakeFirst()
    return Number(result.numUpdatedRows) === 1
  }

  /** A draft's files, in path order. */
  filesOf(draftId: string, db: Executor = this.db): Promise<DraftFileRow[]> {
    return db.selectFrom('draft_files').selectAll().where('draft_id', '=', draftId).orderBy('path').execute()
  }

  findFile(draftId: string, path: string, db: Executor = this.db): Promise<DraftFileRow | undefined> {
    return db.selectFrom('draft_files').selectAll().where('draft_id', '=', draftId).where('path', '=', path).executeTakeFirst()
  }

  /** Writes a file of a draft, replacing the one at its path. */
  putFile(trx: Executor, file: DraftFileRow): Promise<unknown> {
    return trx
      .insertInto('draft_files')
      .values(file)
      .onConflict((oc) => oc.columns(['draft_id', 'path']).doUpdateSet({ hash: file.hash, size: file.size, content_type: file.content_type }))
      .execute()
  }

  /** Removes a file of a draft; false when it has none at that path. */
  async deleteFile(trx: Executor, draftId: string, path: string): Promise<boolean> {
    const result = await trx.deleteFrom('draft_files').where('draft_id', '=', draftId).where('path', '=', path).executeTakeFirst()
    return Number(result.numDeletedRows) === 1
  }

  async totals(trx: Executor, draftId: string): Promise<DraftTotals> {
    const row = await trx
      .selectFrom('draft_files')
      .select((eb) => [
        eb.fn.countAll<number>().as('files'),
        eb.fn.sum<number>('size').as('bytes'),
        eb.fn.sum<number>(eb.case().when('content_type', '=', HTML_CONTENT_TYPE).then(1).else(0).end()).as('pages'),
      ])
      .where('draft_id', '=', draftId)
      .executeTakeFirstOrThrow()
    // PostgreSQL sums a bigint column as numeric, which its driver returns as text; none is null.
    return { files: Number(row.files), bytes: Number(row.bytes ?? 0), pages: Number(row.pages ?? 0) }
  }

  /** Bases a draft on another version (one just published from it). */
  setBase(trx: Executor, draftId: string, versionId: string): Promise<unknown> {
    return trx.updateTable('drafts').set({ base_version_id: versionId }).where('id', '=', draftId).execute()
  }

  /** Deletes drafts and their files; answers the hashes their files held. */
  async deleteDrafts(trx: Executor, draftIds: string[]): Promise<string[]> {
    if (draftIds.length === 0) return []
    const held = await trx.selectFrom('draft_files').select('hash').distinct().where('draft_id', 'in', draftIds).execute()
    await this.removeDrafts(trx, draftIds)
    return held.map((r) => r.hash)
  }

  /** Deletes drafts and their files, for a caller that knows which blobs they held. */
  removeDrafts(trx: Executor, draftIds: string[]): Promise<unknown> {
    return trx.deleteFrom('drafts').where('id', 'in', draftIds).execute()
  }

  /** Up to `limit` expired drafts, each with its site's slug. */
  expired(trx: Executor, now: string, limit: number): Promise<Array<{ id: string; slug: string }>> {
    return trx
      .selectFrom('drafts')
      .innerJoin('websites', 'websites.id', 'drafts.website_id')
      .select(['drafts.id', 'websites.slug'])
      .where('drafts.expires_at', '<=', now)
      .orderBy('drafts.expires_at')
      .limit(limit)
      .execute()
  }
}
