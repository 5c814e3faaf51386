#!/usr/bin/env node
// Runs every test file under test/ with Node's test runner (TypeScript through tsx). API suites
// run on SQLite and, when DATABASE_URL is set, on PostgreSQL too (see test/helpers/stores.ts).
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import path from 'node:path'

const root = path.resolve(import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname), '..')
const filter = process.argv.slice(2)
const files = readdirSync(path.join(root, 'test'), { recursive: true })
  .map(String)
  .filter((f) => f.endsWith('.test.ts'))
  .filter((f) => filter.length === 0 || filter.some((word) => f.includes(word)))
  .sort()
  .map((f) => path.join('test', f))

if (files.length === 0) {
  console.error('No test files matched.')
  process.exit(1)
}
if (!process.env.DATABASE_URL) {
  console.log('PostgreSQL: DATABASE_URL is not set, so the PostgreSQL runs of the API suites are skipped (SQLite runs in full).')
}
/** Drops the schemas PostgreSQL test runs create (test/helpers/stores.ts), left by this or an earlier run. */
async function dropTestSchemas() {
  if (!process.env.DATABASE_URL) return
  const { default: pg } = await import('pg')
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL })
  await client.connect()
  try {
    const { rows } = await client.query(`select nspname from pg_namespace where nspname like 'plinth\\_test\\_%'`)
    for (const { nspname } of rows) await client.query(`DROP SCHEMA IF EXISTS "${nspname}" CASCADE`)
  } finally {
    await client.end()
  }
}

await dropTestSchemas()
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=3', ...files], { cwd: root, stdio: 'inherit' })
await dropTestSchemas()
process.exit(result.status ?? 1)
