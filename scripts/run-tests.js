#!/usr/bin/env node
// Runs every test file under test/ with Node's test runner. API suites run on SQLite and, when
// DATABASE_URL is set, on PostgreSQL too (see test/helpers/stores.ts).
//
// The test processes load no TypeScript loader: src/ and test/ are compiled to JavaScript first
// (scripts/compile-tests.js, only the files changed since the last run), and the runner runs the
// compiled test files, with source maps, so stack traces name the TypeScript lines.
//
// Two tiers, told apart by name: end-to-end files (`*.e2e.test.ts`) start real processes
// (`npm start`, the CLI), Chromium, Caddy, an S3 server or several instances; every other file
// is fast (rules, services and routes in this process). `--tier fast` or `--tier e2e` runs one;
// other arguments keep the files whose path contains one of them.
//
// Each end-to-end file runs in a process of its own. The fast files share BATCHES processes, one
// file after another: a process spends seconds of CPU loading Plinth and its libraries before
// its first test, more than most fast files spend on their tests. In a shared process the
// modules, and what they keep, are shared too; a file's top-level `before` hooks start when it is
// loaded, its top-level `after` hooks run when the whole batch is done, and a crash ends the
// files after it. `--isolate` runs every file in a process of its own.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { ensureBuilt } from './build.js'
import { compileTests } from './compile-tests.js'

const root = path.resolve(import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname), '..')
const isEndToEnd = (file) => file.endsWith('.e2e.test.ts')
const TIERS = ['fast', 'e2e']
/** Test processes running at once. */
const CONCURRENCY = 3
/** Processes the fast files share: see batches(). */
const BATCHES = 3
/**
 * How long one test process (an end-to-end file, or a batch of fast files) may run before it is
 * stopped and failed as timed out: a hung test ends the run with its file named, not at CI's
 * limit. Several times what the longest takes on a quiet 2-core machine (docs/testing.md).
 */
const PROCESS_TIMEOUT_MS = 10 * 60_000
// Not strict: an unknown option is ignored; every other word is a filter.
const { values, positionals: filter } = parseArgs({
  options: { tier: { type: 'string' }, isolate: { type: 'boolean' } },
  allowPositionals: true,
  strict: false,
})
const tier = values.tier ?? null
if (tier !== null && !TIERS.includes(tier)) {
  console.error(`--tier takes ${TIERS.join(' or ')}, not ${typeof tier === 'string' ? tier : 'nothing'}.`)
  process.exit(2)
}
const files = readdirSync(path.join(root, 'test'), { recursive: true })
  .map(String)
  .filter((f) => f.endsWith('.test.ts'))
  .filter((f) => tier === null || isEndToEnd(f) === (tier === 'e2e'))
  .filter((f) => filter.length === 0 || filter.some((word) => f.includes(word) || `test/${f}`.includes(word)))
  .sort()
  .map((f) => path.join('test', f))

if (files.length === 0) {
  console.error('No test files matched.')
  process.exit(1)
}
if (!process.env.DATABASE_URL) {
  console.log('PostgreSQL: DATABASE_URL is not set, so the PostgreSQL runs of the API suites are skipped (SQLite runs in full).')
}
/** Drops the schemas of this run's test processes (test/helpers/stores.ts) and those of runs that are gone. */
async function dropTestSchemas() {
  if (!process.env.DATABASE_URL) return
  const { default: pg } = await import('pg')
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL })
  await client.connect()
  try {
    const { rows } = await client.query(`select nspname from pg_namespace where nspname like 'plinth\\_test\\_%'`)
    for (const { nspname } of rows) {
      // Another run on the same database, still going, keeps its schemas.
      const run = Number(/^plinth_test_(\d+)_/.exec(nspname)?.[1])
      if (run !== process.pid && isAlive(run)) continue
      await client.query(`DROP SCHEMA IF EXISTS "${nspname}" CASCADE`)
    }
  } finally {
    await client.end()
  }
}

/** Whether a process of this id runs on this machine. */
function isAlive(pid) {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return error.code === 'EPERM'
  }
}

/** How many suites were skipped for want of PostgreSQL, from a TAP copy of the run's report. */
function skippedPostgresSuites(tap) {
  return tap.split('\n').filter((line) => /^\s*ok \d+ - .*\(postgres\) # SKIP/.test(line)).length
}

/**
 * The fast files split into BATCHES groups of about equal size in bytes (largest file first, each
 * to the lightest group), each group's files in their usual order.
 */
function batches(fast) {
  const groups = Array.from({ length: Math.min(BATCHES, fast.length) }, () => ({ files: [], bytes: 0 }))
  const sized = fast.map((file) => ({ file, bytes: statSync(path.join(root, file)).size })).sort((a, b) => b.bytes - a.bytes)
  for (const { file, bytes } of sized) {
    const lightest = groups.reduce((a, b) => (b.bytes < a.bytes ? b : a))
    lightest.files.push(file)
    lightest.bytes += bytes
  }
  return groups.map((group) => group.files.sort())
}

/**
 * A test file that imports the compiled files of `batch` one after another, in one process: their
 * suites run in that order. A file that fails to load is reported as a failed test, and the
 * others still run.
 */
function batchEntry(batch, index) {
  const entry = path.join(reportDir, `fast-batch-${index + 1}.test.js`)
  const files = batch.map((file) => [file, pathToFileURL(compiledFile(file)).href])
  writeFileSync(
    entry,
    [
      "import { test } from 'node:test'",
      `for (const [file, url] of ${JSON.stringify(files)}) {`,
      '  try {',
      '    await import(url)',
      '  } catch (error) {',
      '    test(`${file} loads`, () => { throw error })',
      '  }',
      '}',
      '',
    ].join('\n'),
  )
  return entry
}

// The PostgreSQL schemas the test processes make are named by this run (test/helpers/stores.ts).
process.env.PLINTH_TEST_RUN = String(process.pid)
await dropTestSchemas()
// dist/ made current first: the end-to-end tests run it.
await ensureBuilt()
// The usual report on stdout (spec in a terminal, TAP otherwise) and a TAP copy to count skips in.
const reportDir = mkdtempSync(path.join(os.tmpdir(), 'plinth-test-report-'))
const tapCopy = path.join(reportDir, 'report.tap')
const reporters = ['--test-reporter', process.stdout.isTTY ? 'spec' : 'tap', '--test-reporter-destination', 'stdout']
reporters.push('--test-reporter', 'tap', '--test-reporter-destination', tapCopy)
// And the failed tests alone, printed again at the very end, where a long run's output is read.
const failuresFile = path.join(reportDir, 'failures.txt')
reporters.push('--test-reporter', pathToFileURL(path.join(root, 'scripts', 'failures-reporter.js')).href, '--test-reporter-destination', failuresFile)
const compiled = await compileTests()
const compiledFile = (file) => path.join(compiled, `${file.slice(0, -'.ts'.length)}.js`)
const shared = values.isolate === true ? [] : files.filter((file) => !isEndToEnd(file))
// The end-to-end files run largest first: the largest take the longest, and one started last
// would run on alone at the end while the other processes have finished.
const entries = [
  ...batches(shared).map((batch, index) => (batch.length === 1 ? compiledFile(batch[0]) : batchEntry(batch, index))),
  ...files
    .filter((file) => !shared.includes(file))
    .sort((a, b) => statSync(path.join(root, b)).size - statSync(path.join(root, a)).size)
    .map(compiledFile),
]
const result = spawnSync(
  process.execPath,
  ['--enable-source-maps', '--test', `--test-concurrency=${CONCURRENCY}`, `--test-timeout=${PROCESS_TIMEOUT_MS}`, ...reporters, ...entries],
  {
    cwd: root,
    stdio: 'inherit',
  },
)
await dropTestSchemas()
const skipped = skippedPostgresSuites(readFileSync(tapCopy, 'utf8'))
const failures = existsSync(failuresFile) ? readFileSync(failuresFile, 'utf8') : ''
rmSync(reportDir, { recursive: true, force: true })
if (skipped > 0) console.log(`PostgreSQL: ${skipped} suite${skipped === 1 ? '' : 's'} skipped because DATABASE_URL is not set (set it to run them).`)
if (failures !== '') console.log(failures)
process.exit(result.status ?? 1)
