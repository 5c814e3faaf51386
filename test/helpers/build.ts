/**
 * The compiled Plinth (dist/, made by scripts/build.js): what `npm start` and `plinth` run, for
 * the tests that start it as people do, and what the worker threads of a test run through tsx
 * load when it is current.
 */
import { execFile } from 'node:child_process'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { loadThreadModulesFrom } from '../../src/core/worker-pool.ts'

export const ROOT = path.resolve(import.meta.dirname, '../..')
/** What `npm start` runs once dist/ is current. */
export const COMPILED_MAIN = path.join(ROOT, 'dist/main.js')

/** Builds dist/ when it is missing or older than the sources (at once when it is current). */
export async function ensureBuilt(): Promise<void> {
  await promisify(execFile)(process.execPath, [path.join(ROOT, 'scripts/build.js')], { cwd: ROOT })
}

/**
 * Has the worker threads of this process, when it runs the sources through tsx (a test file run
 * alone with `node --import tsx --test`), load the compiled twins of src/ modules from dist/, when
 * dist/ is built from the sources as they are: a thread that registers tsx to load the sources
 * takes about twice as long to start. With dist/ missing or out of date, the threads load the
 * sources. The compiled test files scripts/run-tests.js runs have their threads load the compiled
 * modules beside them in any case.
 */
export async function useCompiledThreadModules(): Promise<void> {
  const build = (await import(pathToFileURL(path.join(ROOT, 'scripts/build.js')).href)) as { isBuildCurrent(): boolean }
  if (build.isBuildCurrent()) loadThreadModulesFrom(pathToFileURL(path.join(ROOT, 'dist/')))
}
