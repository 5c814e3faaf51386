import type { Kysely, Transaction } from 'kysely'
import { inLockOrder } from '../db/lock-order.ts'
import type { BlobsTable, Database } from '../db/types.ts'

/** Statements run again when a concurrent transaction's reference to a blob makes a delete fail. */
const DELETE_ATTEMPTS = 3

export class BlobsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async findExisting(hashes: string[]): Promise<Map<string, BlobsTable>> {
    if (hashes.length === 0) return new Map()
    const rows = await this.db.selectFrom('blobs').selectAll().where('hash', 'in', hashes).execute()
    return new Map(rows.map((r) => [r.hash, r]))
  }

  /** Blobs whose variants are still to be made, in hash order after `after`: their hash and the content type to make them for. */
  async pendingVariants(after: string, limit: number): Promise<Array<{ hash: string; contentType: string }>> {
    const rows = await this.db
      .selectFrom('blobs')
      .select(['hash', 'variants_type'])
      .where('variants_type', 'is not', null)
      .where('hash', '>', after)
      .orderBy('hash')
      .limit(limit)
      .execute()
    return rows.map((r) => ({ hash: r.hash, contentType: r.variants_type! }))
  }

  /** The blobs among these whose variants are still to be made: their hash and the content type to make them for. */
  async pendingAmong(hashes: string[]): Promise<Array<{ hash: string; contentType: string }>> {
    if (hashes.length === 0) return []
    const rows = await this.db
      .selectFrom('blobs')
      .select(['hash', 'variants_type'])
      .where('hash', 'in', hashes)
      .where('variants_type', 'is not', null)
      .execute()
    return rows.map((r) => ({ hash: r.hash, contentType: r.variants_type! }))
  }

  /** Records the variants made for a blob (null: none worth keeping) and that none are pending. */
  async settleVariants(hash: string, brSize: number | null, gzipSize: number | null): Promise<void> {
    await this.db.updateTable('blobs').set({ br_size: brSize, gzip_size: gzipSize, variants_type: null }).where('hash', '=', hash).execute()
  }

  /**
   * Records blobs whose bytes are already durable in the blob store; a known hash is left as is.
   * The rows go in in their hashes' order (db/lock-order.ts): publishes recording the same new
   * blobs at once never deadlock.
   */
  insertMissing(trx: Kysely<Database> | Transaction<Database>, rows: BlobsTable[]): Promise<unknown> {
    if (rows.length === 0) return Promise.resolve()
    return trx
      .insertInto('blobs')
      .values(inLockOrder(rows, (row) => row.hash))
      .onConflict((oc) => oc.column('hash').doNothing())
      .execute()
  }

  /**
   * Every row that keeps a blob: a version's file, a draft's file, a library image, a file sent with a form, an upload. The
   * one definition of a reference, shared by the sweep's check and every removal of blobs (a
   * deleted website's, those a draft no longer holds).
   */
  private references(hashes: string[]) {
    return [
      this.db.selectFrom('version_files').select('hash').where('hash', 'in', hashes),
      this.db.selectFrom('draft_files').select('hash').where('hash', 'in', hashes),
      this.db.selectFrom('assets').select('hash').where('hash', 'in', hashes),
      this.db.selectFrom('form_files').select('hash').where('hash', 'in', hashes),
      this.db.selectFrom('uploads').select('sha256 as hash').where('sha256', 'in', hashes).$narrowType<{ hash: string }>(),
    ] as const
  }

  /**
   * The hashes among `hashes` that anything refers to: a blob row, a version's or a draft's file,
   * a library image or an upload. Asked at the moment a sweep is about to delete, in one query.
   */
  async referencedHashes(hashes: string[]): Promise<Set<string>> {
    if (hashes.length === 0) return new Set()
    const rows = await this.references(hashes)
      .reduce((query, other) => query.union(other), this.db.selectFrom('blobs').select('hash').where('hash', 'in', hashes))
      .execute()
    return new Set(rows.map((r) => r.hash))
  }

  /** The same, for one blob stored outside a publish (an upload). */
  insertOneMissing(row: BlobsTable): Promise<unknown> {
    return this.insertMissing(this.db, [row])
  }

  /**
   * Deletes the rows of the blobs among `hashes` that no version or draft file, library image or
   * upload refers to, in one statement, and answers their hashes: their bytes may then be removed. A row
   * that something refers to cannot go (the foreign keys of those tables), so a delete that races
   * a transaction committing a new reference fails on PostgreSQL; it is run again, and then sees it.
   */
  async deleteUnreferenced(hashes: string[]): Promise<string[]> {
    if (hashes.length === 0) return []
    const [first, ...others] = this.references(hashes)
    const referenced = others.reduce((query, other) => query.union(other), first)
    for (let attempt = 1; ; attempt++) {
      try {
        const rows = await this.db.deleteFrom('blobs').where('hash', 'in', hashes).where('hash', 'not in', referenced).returning('hash').execute()
        return rows.map((r) => r.hash)
      } catch (error) {
        if (!isForeignKeyViolation(error) || attempt >= DELETE_ATTEMPTS) throw error
      }
    }
  }
}

/** True when the error is a foreign-key violation, in either dialect. */
function isForeignKeyViolation(error: unknown): boolean {
  const code = (error as { code?: string })?.code
  return code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY'
}
