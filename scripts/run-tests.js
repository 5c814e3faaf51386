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
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=3', ...files], { cwd: root, stdio: 'inherit' })
process.exit(result.status ?? 1)
