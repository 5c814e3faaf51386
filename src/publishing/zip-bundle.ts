/**
 * A `.zip` of a built site, unpacked into bundle files, bounded against hostile archives before
 * any byte is inflated: at most MAX_FOLDER_ENTRIES entries (read from the central directory), no
 * path that leaves the folder (absolute, `..`, backslashes: yauzl refuses them), no symbolic
 * link, no encrypted entry, and at most the bundle's byte limit inflated in all. The sizes an
 * archive declares are checked while inflating (yauzl's validateEntrySizes), so a zip bomb that
 * lies about them is stopped at its first extra byte. What a deploy skips (core/folder-skips.js:
 * dotfiles, node_modules, the archive's own .plinthignore) is left out unread, and a zip of one
 * folder (`dist/index.html`, ...) is read from inside it. The files that remain then go through
 * the authoring rules like any bundle.
 */
import type { Readable } from 'node:stream'
import ignore from 'ignore'
import yauzl, { type Entry, type ZipFile } from 'yauzl'
import { IGNORE_FILE, MAX_FOLDER_ENTRIES, type IgnoreRules, skipsPath } from '../core/folder-skips.js'
import { AppError } from '../core/errors.ts'
import { formatSize } from '../core/limits.ts'
import { quoted } from '../core/text.ts'

export interface ZipFileEntry {
  path: string
  bytes: Buffer
}

export interface ZipBundle {
  files: ZipFileEntry[]
  /** Paths left out by the skip rules. */
  skipped: string[]
}

/** The `.plinthignore` of an archive is read up to this size; a longer one is no list of patterns. */
const IGNORE_FILE_MAX_BYTES = 64 * 1024

const S_IFMT = 0o170000
const S_IFLNK = 0o120000

const refused = (why: string) => new AppError('ARCHIVE_INVALID', `The .zip cannot be published: ${why}`)

/** `maxBytes`: the most its kept files may hold in all once inflated (the bundle's byte limit). */
export async function readZipBundle(archive: Buffer, maxBytes: number): Promise<ZipBundle> {
  let zip: ZipFile
  try {
    zip = await yauzl.fromBufferPromise(archive, { lazyEntries: true, autoClose: false, decodeStrings: true, validateEntrySizes: true, strictFileNames: true })
  } catch {
    throw refused('it is not a zip archive (or it is damaged). Make one with your system’s “Compress” command or `zip -r site.zip dist`.')
  }
  try {
    if (zip.entryCount > MAX_FOLDER_ENTRIES) {
      throw refused(
        `it holds ${zip.entryCount} entries, more than ${MAX_FOLDER_ENTRIES}: zip the folder your build writes (dist/, public/, _site/), not the project.`,
      )
    }
    const entries = await listEntries(zip)
    const root = commonFolder(entries)
    const inside = entries.filter((entry) => !entry.fileName.endsWith('/')).map((entry) => ({ entry, path: entry.fileName.slice(root.length) }))
    const ignoreEntry = inside.find((file) => file.path === IGNORE_FILE)
    const rules: IgnoreRules = ignore().add(ignoreEntry ? (await inflate(zip, ignoreEntry.entry, IGNORE_FILE_MAX_BYTES)).toString('utf8') : '')

    const kept = inside.filter((file) => !skipsPath(file.path, rules))
    const declared = kept.reduce((sum, file) => sum + file.entry.uncompressedSize, 0)
    if (declared > maxBytes) {
      throw refused(`its files unpack to ${formatSize(declared)}, more than the ${formatSize(maxBytes)} a site may hold.`)
    }
    const files: ZipFileEntry[] = []
    let budget = maxBytes
    for (const file of kept) {
      const bytes = await inflate(zip, file.entry, budget)
      budget -= bytes.length
      files.push({ path: file.path, bytes })
    }
    return { files, skipped: inside.filter((file) => skipsPath(file.path, rules)).map((file) => file.path) }
  } finally {
    zip.close()
  }
}

/** Every entry of the central directory, refusing symbolic links and encrypted entries. */
function listEntries(zip: ZipFile): Promise<Entry[]> {
  return new Promise((resolve, reject) => {
    const entries: Entry[] = []
    zip.on('entry', (entry: Entry) => {
      if (((entry.externalFileAttributes >>> 16) & S_IFMT) === S_IFLNK) {
        reject(refused(`${quoted(entry.fileName)} is a symbolic link; a zip of a site holds files and folders only.`))
      } else if (entry.isEncrypted()) {
        reject(refused(`${quoted(entry.fileName)} is encrypted; zip the site without a password.`))
      } else {
        entries.push(entry)
        zip.readEntry()
      }
    })
    zip.on('end', () => resolve(entries))
    zip.on('error', (error: Error) => reject(refused(entryProblem(error.message))))
    zip.readEntry()
  })
}

/** yauzl's word for an entry it refuses, said for a person. */
function entryProblem(message: string): string {
  const [kind, name = ''] = message.split(/: (.*)/s)
  if (kind === 'invalid relative path' || kind === 'absolute path') return `the entry ${quoted(name)} points outside the folder (“..” or an absolute path).`
  if (kind === 'invalid characters in fileName') return `the entry ${quoted(name)} has a backslash in its path.`
  return `it is damaged (${message}).`
}

/** The one folder every entry is in (`dist/`), or '' when files sit at the archive's root or in several folders. */
function commonFolder(entries: Entry[]): string {
  const files = entries.filter((entry) => !entry.fileName.endsWith('/'))
  const first = files[0]?.fileName ?? ''
  const slash = first.indexOf('/')
  if (slash < 0) return ''
  const folder = first.slice(0, slash + 1)
  return files.every((entry) => entry.fileName.startsWith(folder)) ? folder : ''
}

/** An entry's bytes, refusing it as soon as it inflates past `budget`. */
async function inflate(zip: ZipFile, entry: Entry, budget: number): Promise<Buffer> {
  let stream: Readable
  try {
    stream = await zip.openReadStreamPromise(entry)
  } catch (error) {
    throw refused(`${quoted(entry.fileName)} cannot be read (${(error as Error).message}).`)
  }
  const parts: Buffer[] = []
  let size = 0
  try {
    for await (const chunk of stream) {
      const part = chunk as Buffer
      size += part.length
      if (size > budget) {
        stream.destroy()
        throw refused(`${quoted(entry.fileName)} unpacks to more bytes than a site may hold.`)
      }
      parts.push(part)
    }
  } catch (error) {
    if (error instanceof AppError) throw error
    throw refused(`${quoted(entry.fileName)} is damaged (${(error as Error).message}).`)
  }
  return Buffer.concat(parts, size)
}
