/**
 * The compiled Plinth that `npm start` and `plinth` run (dist/, made by scripts/build.js), for the
 * tests that start it as people do.
 */
import { execFile } from 'node:child_process'
import path from 'node:path'
import { promisify } from 'node:util'

export const ROOT = path.resolve(import.meta.dirname, '../..')
/** What `npm start` runs once dist/ is current. */
export const COMPILED_MAIN = path.join(ROOT, 'dist/main.js')

/** Builds dist/ when it is missing or older than the sources (at once when it is current). */
export async function ensureBuilt(): Promise<void> {
  await promisify(execFile)(process.execPath, [path.join(ROOT, 'scripts/build.js')], { cwd: ROOT })
}
