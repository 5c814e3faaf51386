/**
 * What Kysely's migrator learns of a PostgreSQL database (whether its own tables exist), read
 * from the connection's current schema alone: Plinth's tables live there, and nothing else is
 * its business. Kysely's own introspector reads every column of every table of every schema,
 * with a function call per column, so in a database shared with other schemas (a second
 * install, another application) its cost grows with all of them, and a table that another
 * schema's owner renames or drops while it runs makes it fail, and Plinth's start with it.
 */
import {
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type DatabaseMetadataOptions,
  DEFAULT_MIGRATION_LOCK_TABLE,
  DEFAULT_MIGRATION_TABLE,
  type Kysely,
  PostgresDialect,
  type SchemaMetadata,
  sql,
  type TableMetadata,
} from 'kysely'

interface ColumnRow {
  table: string
  table_kind: string
  schema: string
  column: string
  type: string
  type_schema: string
  not_null: boolean
  has_default: boolean
  auto_incrementing: string | null
  description: string | null
}

/** The connection's current schema on PostgreSQL: the first of its search_path that exists (null: none does). */
export async function currentSchema<DB>(db: Kysely<DB>): Promise<string | null> {
  const { rows } = await sql<{ name: string | null }>`select current_schema() as name`.execute(db)
  return rows[0]?.name ?? null
}

export class OwnSchemaIntrospector implements DatabaseIntrospector {
  // Kysely's introspectors take the database untyped: they read the catalog, not its tables.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  constructor(private readonly db: Kysely<any>) {}

  /** The current schema, the one schema looked at. */
  async getSchemas(): Promise<SchemaMetadata[]> {
    const name = await currentSchema(this.db)
    return name === null ? [] : [{ name }]
  }

  /** The tables and views of the current schema, with their columns in order. */
  async getTables(options: DatabaseMetadataOptions = { withInternalKyselyTables: false }): Promise<TableMetadata[]> {
    const { rows } = await sql<ColumnRow>`
      select c.relname as table, c.relkind as table_kind, ns.nspname as schema, a.attname as column,
        typ.typname as type, tns.nspname as type_schema, a.attnotnull as not_null, a.atthasdef as has_default,
        pg_get_serial_sequence(quote_ident(ns.nspname) || '.' || quote_ident(c.relname), a.attname) as auto_incrementing,
        col_description(a.attrelid, a.attnum) as description
      from pg_catalog.pg_attribute a
        join pg_catalog.pg_class c on c.oid = a.attrelid
        join pg_catalog.pg_namespace ns on ns.oid = c.relnamespace
        join pg_catalog.pg_type typ on typ.oid = a.atttypid
        join pg_catalog.pg_namespace tns on tns.oid = typ.typnamespace
      where ns.nspname = current_schema() and c.relkind in ('r', 'v', 'p') and a.attnum > 0 and not a.attisdropped
      order by c.relname, a.attnum`.execute(this.db)
    const internal = new Set([DEFAULT_MIGRATION_TABLE, DEFAULT_MIGRATION_LOCK_TABLE])
    const tables = new Map<string, TableMetadata & { columns: TableMetadata['columns'][number][] }>()
    for (const row of rows) {
      if (!options.withInternalKyselyTables && internal.has(row.table)) continue
      let table = tables.get(row.table)
      if (!table) tables.set(row.table, (table = { name: row.table, schema: row.schema, isView: row.table_kind === 'v', columns: [] }))
      table.columns.push({
        name: row.column,
        dataType: row.type,
        dataTypeSchema: row.type_schema,
        isNullable: !row.not_null,
        hasDefaultValue: row.has_default,
        isAutoIncrementing: row.auto_incrementing !== null,
        comment: row.description ?? undefined,
      })
    }
    return [...tables.values()]
  }

  async getMetadata(options?: DatabaseMetadataOptions): Promise<DatabaseMetadata> {
    return { tables: await this.getTables(options) }
  }
}

/** PostgreSQL as Kysely drives it, introspected through OwnSchemaIntrospector. */
export class OwnSchemaPostgresDialect extends PostgresDialect {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new OwnSchemaIntrospector(db)
  }
}
