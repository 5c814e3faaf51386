#!/usr/bin/env node
// Compiles src/ to dist/, the JavaScript that `npm start` and the `plinth` command run.
//
// TypeScript's own compiler emits it (tsconfig.build.json) without checking types: `npm run
// typecheck` does that, and the sources are written to compile one file at a time
// (isolatedModules, verbatimModuleSyntax). Every file of src/ that is not TypeScript (views,
// assets, home.md, the worker threads' entry) is copied beside the compiled modules, so dist/
// mirrors src/ and a module finds its files at the same relative place in both.
//
// dist/build.json records a hash of everything the build is made from (src/, the two tsconfig
// files and this script). A build is current when the hash still matches: `npm start` and
// bin/plinth.js check that (a few milliseconds) and build first when it does not match. Builds
// take a lock (dist.lock/), compile into a folder of their own and swap it in whole, so processes
// started at once build once and never see half a dist/.
//
//   node scripts/build.js          builds when dist/ is missing or out of date (npm install's prepare)
//   node scripts/build.js --force  builds in any case
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { cpSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { bundleVendored } from './vendor-bundle.js'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const SRC = path.join(ROOT, 'src')
const DIST = path.join(ROOT, 'dist')
const STAMP = path.join(DIST, 'build.json')
const LOCK = path.join(ROOT, 'dist.lock')
/** Files besides src/ whose change changes the build. */
const BUILD_INPUTS = ['tsconfig.json', 'tsconfig.build.json', 'scripts/build.js', 'scripts/vendor-bundle.js', 'package-lock.json']
/** A lock older than this is taken to be left by a build that died (a build takes well under a minute). */
const LOCK_STALE_MS = 5 * 60_000

/** Hash of every input's path and bytes. */
function sourcesHash() {
  const hash = createHash('sha256')
  const files = readdirSync(SRC, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(ROOT, path.join(entry.parentPath ?? entry.path, entry.name)))
  for (const file of [...files.sort(), ...BUILD_INPUTS]) {
    hash.update(`${file}\0`)
    hash.update(readFileSync(path.join(ROOT, file)))
    hash.update('\0')
  }
  return hash.digest('hex')
}

function builtHash() {
  try {
    return JSON.parse(readFileSync(STAMP, 'utf8')).sources
  } catch {
    return null
  }
}

/** Whether dist/ was built from the sources as they are now. */
export function isBuildCurrent() {
  return builtHash() === sourcesHash()
}

/** Whether the lock's holder is gone: its process ended, or it has held the lock past LOCK_STALE_MS. */
function lockIsAbandoned() {
  try {
    const holder = Number(readFileSync(path.join(LOCK, 'pid'), 'utf8'))
    process.kill(holder, 0)
  } catch (error) {
    if (error.code === 'ESRCH') return true
    // No pid written yet (the lock was just taken), or the holder runs as another user.
  }
  try {
    return Date.now() - statSync(LOCK).mtimeMs > LOCK_STALE_MS
  } catch {
    return false // released meanwhile
  }
}

/**
 * Takes the build lock, waiting for another process's build to end; false (and no lock) when
 * `orCurrent` and that build made dist/ current meanwhile.
 */
async function lock(orCurrent) {
  for (;;) {
    try {
      mkdirSync(LOCK)
      return true
    } catch (error) {
      if (error.code !== 'EEXIST') throw error
    }
    if (lockIsAbandoned()) rmSync(LOCK, { recursive: true, force: true })
    else await new Promise((resolve) => setTimeout(resolve, 200))
    if (orCurrent && isBuildCurrent()) return false
  }
}

async function compile(log) {
  const hash = sourcesHash()
  const out = path.join(ROOT, `dist.building-${process.pid}`)
  rmSync(out, { recursive: true, force: true })
  let tsc
  try {
    tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
  } catch {
    throw new Error('dist/ is missing or out of date, and TypeScript (a development dependency) is not installed to build it: run `npm install`.')
  }
  log('Compiling src/ to dist/ (after each change of the sources)...')
  try {
    execFileSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.build.json'), '--noCheck', '--outDir', out], { cwd: ROOT, stdio: 'inherit' })
    cpSync(SRC, out, { recursive: true, filter: (from) => !from.endsWith('.ts') })
    await bundleVendored(ROOT, out)
    writeFileSync(path.join(out, 'build.json'), `${JSON.stringify({ sources: hash })}\n`)
    const old = path.join(ROOT, `dist.old-${process.pid}`)
    rmSync(old, { recursive: true, force: true })
    try {
      renameSync(DIST, old)
    } catch (error) {
      if (error.code !== 'ENOENT') throw error
    }
    renameSync(out, DIST)
    rmSync(old, { recursive: true, force: true })
  } finally {
    rmSync(out, { recursive: true, force: true })
  }
}

/**
 * Builds dist/ unless it is current. `log` receives the one line said when a build starts.
 * Resolves once dist/ is current; rejects when the build failed.
 */
export async function ensureBuilt({ force = false, log = (line) => process.stderr.write(`${line}\n`) } = {}) {
  if (!force && isBuildCurrent()) return
  if (!(await lock(!force))) return
  try {
    writeFileSync(path.join(LOCK, 'pid'), String(process.pid))
    if (force || !isBuildCurrent()) await compile(log)
  } finally {
    rmSync(LOCK, { recursive: true, force: true })
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const force = process.argv.includes('--force')
  // Quiet when dist/ is current, and for service managers: a line is said only in a terminal.
  const log = process.stderr.isTTY ? undefined : () => {}
  ensureBuilt({ force, log }).catch((error) => {
    console.error(error.message ?? error)
    process.exit(1)
  })
}
