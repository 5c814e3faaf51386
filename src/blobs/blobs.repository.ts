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

  /** The same, for one blob stored outside a publish (an upload). */
  insertOneMissing(row: BlobsTable): Promise<unknown> {
    return this.insertMissing(this.db, [row])
  }
}
