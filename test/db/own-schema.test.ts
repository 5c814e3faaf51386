/**
 * On PostgreSQL, Plinth looks at its own schema alone: migrations find their tables there and
 * never read another schema's catalog, so a table renamed or dropped in another schema while
 * Plinth starts cannot fail its migrations.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { sql } from 'kysely'
import pg from 'pg'
import { type Db, migrate, openDb } from '../../src/db/connect.ts'
import { createStore, STORES, type TestStore } from '../helpers/stores.ts'

const postgres = STORES.find((store) => store.name === 'postgres')!

describe('a database shared with other schemas (postgres)', { skip: postgres.skip }, () => {
  let store: TestStore
  let other: TestStore
  let db: Db
  let admin: pg.Client

  before(async () => {
    store = await createStore('postgres')
    other = await createStore('postgres')
    admin = new pg.Client({ connectionString: other.databaseUrl! })
    await admin.connect()
    await admin.query('CREATE TABLE versions (id text PRIMARY KEY, note text)')
    await admin.query('CREATE TABLE other_app_table (id serial PRIMARY KEY)')
    db = openDb({ dataDir: store.dataDir, databaseUrl: store.databaseUrl })
  })
  after(async () => {
    await admin?.end()
    await db?.close()
    await store?.dispose()
    await other?.dispose()
  })

  test("introspection reads the current schema's tables alone, with their columns", async () => {
    await migrate(db)
    const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db.kysely)
    const own = rows[0]!.schema
    assert.deepEqual(await db.kysely.introspection.getSchemas(), [{ name: own }])
    const tables = await db.kysely.introspection.getTables()
    assert.ok(tables.length > 10, 'the migrated tables are listed')
    assert.ok(
      tables.every((table) => table.schema === own),
      'no table of another schema',
    )
    assert.ok(!tables.some((table) => table.name === 'other_app_table'))
    assert.ok(!tables.some((table) => table.name.startsWith('kysely_migration')), "Kysely's own tables only when asked for")
    const withInternal = await db.kysely.introspection.getTables({ withInternalKyselyTables: true })
    assert.deepEqual(
      withInternal.map((table) => table.name).filter((name) => name.startsWith('kysely_migration')),
      ['kysely_migration', 'kysely_migration_lock'],
    )
    const versions = tables.find((table) => table.name === 'versions')!
    assert.deepEqual(
      versions.columns.slice(0, 2).map((column) => [column.name, column.isNullable]),
      [
        ['id', false],
        ['website_id', false],
      ],
    )
    assert.ok(!versions.columns.some((column) => column.name === 'note'), "the other schema's versions table is not mixed in")
  })

  test('migrating again while another schema renames its tables over and over finds nothing to do and never fails', async () => {
    let renaming = true
    const renames = (async () => {
      for (let i = 0; renaming; i++) {
        await admin.query(i % 2 === 0 ? 'ALTER TABLE versions RENAME TO versions_gone' : 'ALTER TABLE versions_gone RENAME TO versions')
      }
    })()
    try {
      for (let i = 0; i < 20; i++) await migrate(db)
    } finally {
      renaming = false
      await renames
    }
  })
})
