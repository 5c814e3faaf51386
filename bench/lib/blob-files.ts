/**
 * The blob files of a filesystem blob store, as the benchmark counts what a publish adds: every
 * file under the store's directory by its path there, with its size. The store's empty spare
 * files (its `SPARE_FOLDER`) are not blobs and are left out.
 */
import type { Dirent } from 'node:fs'
import { readdir, stat } from 'node:fs/promises'
import path from 'node:path'
import { SPARE_FOLDER } from '../../src/blobs/spare-files.ts'

/** Each blob file under `dir` (its path relative to `dir`) with its size; empty when `dir` does not exist. */
export async function blobFiles(dir: string): Promise<Map<string, number>> {
  const files = new Map<string, number>()
  let entries: Dirent[]
  try {
    entries = await readdir(dir, { withFileTypes: true, recursive: true })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return files
    throw error
  }
  for (const entry of entries) {
    const folder = entry.parentPath ?? (entry as { path?: string }).path ?? dir
    const relative = path.relative(dir, path.join(folder, entry.name))
    if (!entry.isFile() || relative.split(path.sep)[0] === SPARE_FOLDER) continue
    files.set(relative, (await stat(path.join(folder, entry.name))).size)
  }
  return files
}

/** Total size and count of the blob files under `dir`. */
export async function treeSize(dir: string): Promise<{ bytes: number; files: number }> {
  const files = await blobFiles(dir)
  let bytes = 0
  for (const size of files.values()) bytes += size
  return { bytes, files: files.size }
}
