/**
 * The stores a suite runs on: a temp SQLite database and data dir always, and real PostgreSQL
 * (a schema of its own, named plinth_test_*) when DATABASE_URL is set.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'

export type StoreName = 'sqlite' | 'postgres'

export interface TestStore {
  dataDir: string
  databaseUrl: string | null
  dispose: () => Promise<void>
}

export const STORES: Array<{ name: StoreName; skip: string | false }> = [
  { name: 'sqlite', skip: false },
  { name: 'postgres', skip: process.env.DATABASE_URL ? false : 'DATABASE_URL is not set: PostgreSQL run skipped' },
]

/**
 * Removes a test data dir. A store left open may still be making a spare blob file on an I/O
 * thread, which lands after the folder was read: the removal then retries (ENOTEMPTY).
 */
export function removeDataDir(dataDir: string): Promise<void> {
  rmSync(dataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 20 })
  return Promise.resolve()
}

export async function createStore(name: StoreName): Promise<TestStore> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'plinth-test-'))
  const removeDir = () => removeDataDir(dataDir)
  if (name === 'sqlite') return { dataDir, databaseUrl: null, dispose: removeDir }

  const adminUrl = process.env.DATABASE_URL as string
  // Named by the test run (scripts/run-tests.js), which drops its own schemas and those of runs that are gone.
  const schema = `plinth_test_${process.env.PLINTH_TEST_RUN ?? process.pid}_${Math.random().toString(36).slice(2, 10)}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`CREATE SCHEMA ${schema}`)
  await admin.end()
  const url = new URL(adminUrl)
  url.searchParams.set('options', `-c search_path=${schema}`)
  // The schema is not dropped here: dropping it while another test file's migrations introspect
  // the catalog makes their queries fail. scripts/run-tests.js drops them before and after the
  // whole run.
  return { dataDir, databaseUrl: url.toString(), dispose: removeDir }
}
