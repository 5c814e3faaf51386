/**
 * Whether a blob may go is asked by hash of every column that refers to blobs (BlobsRepository),
 * after every draft write that replaces a file and in every sweep, and a blob row's delete makes
 * the database check the same columns for its foreign keys. Each of those lookups is served by an
 * index, on both stores: none reads a whole table, however many sites, images and uploads it holds.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type Kysely, sql } from 'kysely'
import { type Db, migrate, openDb } from '../../src/db/connect.ts'
import type { Database } from '../../src/db/types.ts'
import { createStore, STORES, type TestStore } from '../helpers/stores.ts'

/** Every column that holds a blob's hash, by table: what `BlobsRepository.references` asks. */
const BLOB_REFERENCES = [
  { table: 'version_files', column: 'hash' },
  { table: 'draft_files', column: 'hash' },
  { table: 'assets', column: 'hash' },
  { table: 'form_files', column: 'hash' },
  { table: 'uploads', column: 'sha256' },
] as const

const HASHES = ['a'.repeat(64), 'b'.repeat(64)]

/** PostgreSQL: the indexes of a table of the current schema whose first column is this one. */
async function leadingIndexes(db: Db, table: string, column: string): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select i.relname as name from pg_index x
    join pg_class i on i.oid = x.indexrelid
    join pg_class t on t.oid = x.indrelid
    join pg_attribute a on a.attrelid = t.oid and a.attnum = x.indkey[0]
    where t.relname = ${table} and a.attname = ${column} and t.relnamespace = current_schema()::regnamespace`.execute(db.kysely)
  return rows.map((row) => row.name)
}

/** The plan of a lookup by hash, as one text: SQLite's EXPLAIN QUERY PLAN details, PostgreSQL's EXPLAIN lines. */
async function planOf(db: Db, table: string, column: string): Promise<string> {
  const lookup = sql`select ${sql.ref(column)} from ${sql.table(table)} where ${sql.ref(column)} in (${sql.join(HASHES)})`
  if (db.dialect === 'sqlite') {
    const { rows } = await sql<{ detail: string }>`explain query plan ${lookup}`.execute(db.kysely)
    return rows.map((row) => row.detail).join('\n')
  }
  // An empty table is read whole whatever its indexes: the planner is asked for its plan when it may not.
  return db.kysely.connection().execute(async (connection: Kysely<Database>) => {
    await sql`set enable_seqscan = off`.execute(connection)
    try {
      const { rows } = await sql<{ 'QUERY PLAN': string }>`explain ${lookup}`.execute(connection)
      return rows.map((row) => row['QUERY PLAN']).join('\n')
    } finally {
      await sql`reset enable_seqscan`.execute(connection)
    }
  })
}

for (const { name, skip } of STORES) {
  describe(`the columns that refer to blobs (${name})`, { skip }, () => {
    let store: TestStore
    let db: Db

    before(async () => {
      store = await createStore(name)
      db = openDb({ dataDir: store.dataDir, databaseUrl: store.databaseUrl })
      await migrate(db)
    })
    after(async () => {
      await db?.close()
      await store?.dispose()
    })

    for (const { table, column } of BLOB_REFERENCES) {
      test(`${table}.${column} is looked up by hash through an index`, async () => {
        const plan = await planOf(db, table, column)
        if (name === 'sqlite') assert.match(plan, new RegExp(`^SEARCH ${table} USING (COVERING )?INDEX \\S+ \\(${column}=\\?\\)$`), plan)
        else {
          // An index led by another column would be read whole: the one used must begin with this column.
          const leading = await leadingIndexes(db, table, column)
          assert.ok(
            leading.some((index) => new RegExp(`(Index (Only )?Scan using|Bitmap Index Scan on) ${index} `).test(plan)),
            `an index led by ${column} (${leading.join(', ') || 'none'}) serves the lookup:\n${plan}`,
          )
        }
        assert.doesNotMatch(plan, /^SCAN |Seq Scan/m, plan)
      })
    }
  })
}
