import { mkdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import type SQLite from 'better-sqlite3'
import { Kysely, type Migration, type MigrationProvider, Migrator, SqliteDialect } from 'kysely'
import type pg from 'pg'
import type { Config } from '../config.ts'
import * as initial from './migrations/0001_initial.ts'
import * as content from './migrations/0002_content.ts'
import * as assets from './migrations/0003_assets.ts'
import * as uploads from './migrations/0004_uploads.ts'
import * as sessions from './migrations/0005_sessions.ts'
import * as oauth from './migrations/0006_oauth.ts'
import * as blobVariants from './migrations/0007_blob_variants.ts'
import * as sitePasswords from './migrations/0008_site_passwords.ts'
import * as customDomains from './migrations/0009_custom_domains.ts'
import * as websiteInvitations from './migrations/0010_website_invitations.ts'
import * as drafts from './migrations/0011_drafts.ts'
import * as forms from './migrations/0013_forms.ts'
import * as webhooks from './migrations/0017_webhooks.ts'
import * as versionWarnings from './migrations/0018_version_warnings.ts'
import * as formDigests from './migrations/0020_form_digests.ts'
import * as traffic from './migrations/0021_traffic.ts'
import * as tokenScopes from './migrations/0022_token_scopes.ts'
import * as promotions from './migrations/0023_promotions.ts'
import * as blobReferenceIndexes from './migrations/0024_blob_reference_indexes.ts'
import { currentSchema, OwnSchemaPostgresDialect } from './own-schema-introspector.ts'
import type { Database } from './types.ts'

export type Dialect = 'sqlite' | 'postgres'

export interface Db {
  kysely: Kysely<Database>
  dialect: Dialect
  /** The connection pool's use now, for the metrics (PostgreSQL; SQLite has one connection and no pool). */
  poolUse?: () => PoolUse
  close(): Promise<void>
}

export interface PoolUse {
  /** Open connections, busy and idle. */
  total: number
  idle: number
  /** Queries waiting for a connection. */
  waiting: number
  max: number
}

/** Connections one instance opens to PostgreSQL at most. */
const POOL_MAX = 10

/** Migrations are listed explicitly: a reader finds them here, and no directory scan is needed. */
const MIGRATIONS: Record<string, Migration> = {
  '0001_initial': initial,
  '0002_content': content,
  '0003_assets': assets,
  '0004_uploads': uploads,
  '0005_sessions': sessions,
  '0006_oauth': oauth,
  '0007_blob_variants': blobVariants,
  '0008_site_passwords': sitePasswords,
  '0009_custom_domains': customDomains,
  '0010_website_invitations': websiteInvitations,
  '0011_drafts': drafts,
  '0013_forms': forms,
  '0017_webhooks': webhooks,
  '0018_version_warnings': versionWarnings,
  '0020_form_digests': formDigests,
  '0021_traffic': traffic,
  '0022_token_scopes': tokenScopes,
  '0023_promotions': promotions,
  '0024_blob_reference_indexes': blobReferenceIndexes,
}

const provider: MigrationProvider = { getMigrations: () => Promise.resolve(MIGRATIONS) }

const require = createRequire(import.meta.url)

/**
 * The SQLite driver: better-sqlite3 13 where Node offers Node-API 10 (Node 22.14 and later), 12
 * before it (Node 20, where 13 does not load). On Node 24, 12's native objects abort the process
 * (SIGABRT, `Assertion failed: (env) != nullptr`) when one is collected outside a JavaScript
 * context, as at exit: they remove an environment cleanup hook that Node 24 asserts on. 13 is
 * built on Node-API and ships prebuilt for the common platforms; the same node_modules serves
 * every Node version.
 */
function sqliteDriver(): typeof SQLite {
  return require(Number(process.versions.napi) >= 10 ? 'better-sqlite3-napi' : 'better-sqlite3') as typeof SQLite
}

let loadedPg: typeof pg | undefined

/**
 * The PostgreSQL driver, loaded on first use: an instance on SQLite (and every admin command run
 * against it) does without it. PostgreSQL returns bigint (int8) as strings by default; every
 * bigint here is a byte count well below 2^53, so they are parsed as numbers.
 */
export function pgDriver(): typeof pg {
  if (!loadedPg) {
    loadedPg = require('pg') as typeof pg
    loadedPg.types.setTypeParser(20, (value) => Number(value))
  }
  return loadedPg
}

export function openDb(config: Pick<Config, 'databaseUrl' | 'dataDir'>): Db {
  if (config.databaseUrl) {
    const pg = pgDriver()
    const pool = new pg.Pool({ connectionString: config.databaseUrl, max: POOL_MAX })
    const kysely = new Kysely<Database>({ dialect: new OwnSchemaPostgresDialect({ pool }) })
    const poolUse = (): PoolUse => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: POOL_MAX })
    return { kysely, dialect: 'postgres', poolUse, close: () => kysely.destroy() }
  }
  mkdirSync(config.dataDir, { recursive: true })
  const Driver = sqliteDriver()
  const sqlite = new Driver(path.join(config.dataDir, 'plinth.sqlite'))
  sqlite.pragma('journal_mode = WAL')
  sqlite.pragma('synchronous = NORMAL')
  sqlite.pragma('foreign_keys = ON')
  sqlite.pragma('busy_timeout = 5000')
  const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) })
  return { kysely, dialect: 'sqlite', close: () => kysely.destroy() }
}

/** Prepared statements kept per SQL text, the most recently used first. */
const STATEMENT_CACHE_SIZE = 200

/**
 * The database as Kysely's SQLite driver sees it, with each prepared statement kept for the next
 * query of the same SQL text (the driver prepares every query anew otherwise). The driver runs one
 * query at a time on the connection and never iterates, so a kept statement is never in use when
 * it is taken again; SQLite prepares it again by itself after a schema change.
 */
function withStatementCache(sqlite: SQLite.Database): Pick<SQLite.Database, 'prepare' | 'close'> {
  const statements = new Map<string, SQLite.Statement>()
  return {
    prepare(text: string) {
      let statement = statements.get(text)
      if (statement) statements.delete(text)
      else {
        statement = sqlite.prepare(text)
        if (statements.size >= STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value!)
      }
      statements.set(text, statement)
      return statement
    },
    close() {
      statements.clear()
      return sqlite.close()
    },
  } as Pick<SQLite.Database, 'prepare' | 'close'>
}

/** Applies every pending migration; throws with the failing migration's error. */
export async function migrate(db: Db): Promise<void> {
  // On PostgreSQL, name the schema of the migration tables: without it Kysely looks for them in
  // every schema, so another schema's kysely_migration_lock (a second install, or another app
  // sharing the database) makes it skip creating its own and then fail on it.
  const migrationTableSchema = db.dialect === 'postgres' ? await currentSchema(db.kysely) : null
  const migrator = new Migrator({ db: db.kysely, provider, ...(migrationTableSchema ? { migrationTableSchema } : {}) })
  const { error, results } = await migrator.migrateToLatest()
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')
    throw new Error(`Migration ${failed?.migrationName ?? ''} failed: ${(error as Error).message ?? error}`, { cause: error })
  }
}

/** True when the error is a unique-constraint violation, in either dialect. */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string }
  return e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
}
