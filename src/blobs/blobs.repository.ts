import type { Kysely, Transaction } from 'kysely'
import type { BlobsTable, Database } from '../db/types.ts'

export class BlobsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async findExisting(hashes: string[]): Promise<Map<string, BlobsTable>> {
    if (hashes.length === 0) return new Map()
    const rows = await this.db.selectFrom('blobs').selectAll().where('hash', 'in', hashes).execute()
    return new Map(rows.map((r) => [r.hash, r]))
  }

  /** Records blobs whose bytes are already durable in the blob store; a known hash is left as is. */
  insertMissing(trx: Kysely<Database> | Transaction<Database>, rows: BlobsTable[]): Promise<unknown> {
    if (rows.length === 0) return Promise.resolve()
    return trx
      .insertInto('blobs')
      .values(rows)
      .onConflict((oc) => oc.column('hash').doNothing())
      .execute()
  }

  /**
   * The hashes among `hashes` that anything refers to: a blob row, a version's file, a library
   * image or an upload. Asked at the moment a sweep is about to delete, in one query.
   */
  async referencedHashes(hashes: string[]): Promise<Set<string>> {
    if (hashes.length === 0) return new Set()
    const rows = await this.db
      .selectFrom('blobs')
      .select('hash')
      .where('hash', 'in', hashes)
      .union(this.db.selectFrom('version_files').select('hash').where('hash', 'in', hashes))
      .union(this.db.selectFrom('assets').select('hash').where('hash', 'in', hashes))
      .union(this.db.selectFrom('uploads').select('sha256 as hash').where('sha256', 'in', hashes).$narrowType<{ hash: string }>())
      .execute()
    return new Set(rows.map((r) => r.hash))
  }

  /** The same, for one blob stored outside a publish (an upload). */
  insertOneMissing(row: BlobsTable): Promise<unknown> {
    return this.insertMissing(this.db, [row])
  }
}
