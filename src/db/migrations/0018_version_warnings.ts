import type { Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  // What the site check found in a version as it was published (at most a few hundred warnings):
  // `warnings` is JSON text of [{code, path, line?, message}], '[]' when it found nothing. A
  // version published before the check has no row, and is shown with no warnings.
  await db.schema
    .createTable('version_warnings')
    .addColumn('version_id', 'text', (c) => c.primaryKey().references('versions.id').onDelete('cascade'))
    .addColumn('warnings', 'text', (c) => c.notNull())
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('version_warnings').execute()
}
