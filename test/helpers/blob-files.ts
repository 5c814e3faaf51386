/**
 * The files of a filesystem blob store on disk: blobs, variants and temp files, each by its path
 * relative to the store with its size, but not the empty spare files the store keeps ready for its
 * next puts (src/blobs/spare-files.ts), which come and go after every publish. None when the
 * store has no folder yet.
 */
import { type Dirent, readdirSync, statSync } from 'node:fs'
import path from 'node:path'
import { SPARE_FOLDER } from '../../src/blobs/spare-files.ts'

export function blobStoreFiles(root: string): Map<string, number> {
  const out = new Map<string, number>()
  let entries: Dirent[]
  try {
    entries = readdirSync(root, { recursive: true, withFileTypes: true })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return out
    throw error
  }
  for (const entry of entries) {
    if (!entry.isFile()) continue
    const name = path.relative(root, path.join(entry.parentPath ?? (entry as unknown as { path: string }).path, entry.name))
    if (name.split(path.sep)[0] === SPARE_FOLDER) continue
    out.set(name, statSync(path.join(root, name)).size)
  }
  return out
}
