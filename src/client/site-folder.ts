/**
 * A built site on disk, read as a deploy sends it: every file under the folder with its bundle
 * path (forward slashes), bytes and sha256, minus what a deploy skips (core/folder-skips.js, the
 * rules the dashboard's drop area runs too). Symbolic links are followed to files, never to
 * folders (a link to a parent would loop).
 */
import { createHash } from 'node:crypto'
import { readdir, readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import ignore, { type Ignore } from 'ignore'
import { IGNORE_FILE, MAX_FOLDER_ENTRIES, skipsName } from '../core/folder-skips.js'

export interface LocalFile {
  /** Path inside the bundle, with forward slashes. */
  path: string
  bytes: Buffer
  sha256: string
}

export interface SiteFolder {
  files: LocalFile[]
  /** Paths left out by the skip rules (folders once, with a trailing slash). */
  skipped: string[]
}

/** Why a folder cannot be deployed: missing, not a folder, or far too large. */
export class SiteFolderError extends Error {}

export async function readSiteFolder(root: string): Promise<SiteFolder> {
  const info = await stat(root).catch(() => null)
  if (info === null) throw new SiteFolderError(`${root}: no such folder`)
  if (!info.isDirectory()) throw new SiteFolderError(`${root} is not a folder`)
  const rules = ignore().add(await readFile(path.join(root, IGNORE_FILE), 'utf8').catch(() => ''))
  const folder: SiteFolder = { files: [], skipped: [] }
  await walk(root, '', rules, folder, { entries: 0 })
  folder.files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  return folder
}

async function walk(root: string, prefix: string, rules: Ignore, folder: SiteFolder, seen: { entries: number }): Promise<void> {
  const entries = await readdir(path.join(root, prefix), { withFileTypes: true })
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  for (const entry of entries) {
    if (++seen.entries > MAX_FOLDER_ENTRIES) {
      throw new SiteFolderError(
        `${root} holds more than ${MAX_FOLDER_ENTRIES} entries: deploy the folder your build writes (dist/, public/, _site/), not the project`,
      )
    }
    const relative = prefix === '' ? entry.name : `${prefix}/${entry.name}`
    const full = path.join(root, relative)
    const kind = entry.isSymbolicLink()
      ? await stat(full).then(
          (s) => (s.isFile() ? 'file' : 'other'),
          () => 'other',
        )
      : entry.isDirectory()
        ? 'folder'
        : entry.isFile()
          ? 'file'
          : 'other'
    if (kind === 'folder') {
      if (skipsName(entry.name) || rules.ignores(`${relative}/`)) folder.skipped.push(`${relative}/`)
      else await walk(root, relative, rules, folder, seen)
    } else if (kind === 'file') {
      if (skipsName(entry.name) || rules.ignores(relative)) folder.skipped.push(relative)
      else {
        const bytes = await readFile(full)
        folder.files.push({ path: relative, bytes, sha256: createHash('sha256').update(bytes).digest('hex') })
      }
    } else {
      folder.skipped.push(relative)
    }
  }
}
