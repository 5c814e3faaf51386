import { randomBytes } from 'node:crypto'
import { constants } from 'node:fs'
import { access, type FileHandle, mkdir, open, readdir, readFile, rename, rmdir, stat, unlink } from 'node:fs/promises'
import path from 'node:path'
import { BLOB_ENCODINGS, type BlobEncoding, type BlobFile, type BlobStore, blobFileName, ENCODING_OF_SUFFIX } from './blob-store.ts'
import { SpareFiles } from './spare-files.ts'

const BLOB_NAME = /^([0-9a-f]{64})(\.br|\.gz)?$/
const FAN_OUT = /^[0-9a-f]{2}$/

/**
 * Blobs under {root}/ab/{hash}: one folder for each first byte of the hash, 256 in all. Writes go
 * to a temp file, are fsynced, renamed, and the folder fsynced, variants alike.
 *
 * One level of folders, not two (`ab/cd/`, as the bucket's keys are): with 65,536 folders nearly
 * every blob of a young store needs a folder of its own, and making folders while a publish's
 * fsyncs commit is the costliest part of its writes (docs/benchmarks.md). A store laid out in two
 * levels is moved to one at start (moveTwoLevelBlobs).
 *
 * The temp file of a put is, when one is ready, a spare file: an empty file the store made ahead
 * (spare-files.ts), so that creating it is not part of the put.
 */
export class FsBlobStore implements BlobStore {
  private readonly spares: SpareFiles

  constructor(private readonly root: string) {
    this.spares = new SpareFiles(root)
  }

  private file(hash: string, encoding: BlobEncoding): string {
    return path.join(this.root, hash.slice(0, 2), blobFileName(hash, encoding))
  }

  /**
   * Moves every file of the two-level layout (`ab/cd/{name}`) to `ab/{name}` and removes
   * the emptied folders; the number of files moved. Run at start, before the store is used: a blob
   * left below `ab/cd/` would be neither served nor swept. A name taken in `ab/` already holds the
   * same bytes (a blob is named by them), so the moved file replaces it. Each move is a rename, so
   * a crash midway leaves every file whole in one of the two places, and the next start goes on.
   */
  async moveTwoLevelBlobs(): Promise<number> {
    let moved = 0
    for (const first of await dirNames(this.root)) {
      if (!FAN_OUT.test(first)) continue
      const folder = path.join(this.root, first)
      // A folder's link count is 2 plus its subfolders where the filesystem keeps it (ext4, XFS;
      // btrfs says 1): 2 means nothing to move, known without listing the folder's blobs, which
      // would cost every start time in proportion to the store.
      if ((await stat(folder)).nlink === 2) continue
      const before = moved
      for (const second of await dirNames(folder)) {
        // Blob and temp file names are 64 characters or more: a two-character name is a folder.
        if (!FAN_OUT.test(second)) continue
        const old = path.join(folder, second)
        for (const name of await dirNames(old)) {
          await rename(path.join(old, name), path.join(folder, name))
          moved++
        }
        await rmdir(old)
      }
      if (moved > before) await syncFolder(folder)
    }
    return moved
  }

  async has(hash: string, encoding: BlobEncoding = 'identity'): Promise<boolean> {
    try {
      await stat(this.file(hash, encoding))
      return true
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
      throw error
    }
  }

  async put(hash: string, bytes: Buffer, encoding: BlobEncoding = 'identity'): Promise<void> {
    const target = this.file(hash, encoding)
    const folder = path.dirname(target)
    const { handle, temp } = await this.openTemp(target, folder, bytes.length === 0)
    try {
      await handle.writeFile(bytes)
      await handle.sync()
    } finally {
      await handle.close()
    }
    // Replaces a file of the same bytes if there is one: the blob is then newly modified, so a
    // sweep running now does not take a blob being stored again for an orphan.
    try {
      // A spare file lives elsewhere, so the rename may be the first entry of the blob's folder.
      await inFolder(folder, () => rename(temp, target))
    } catch (error) {
      // The temp file may be gone with the failure; the rename's error is the one to report.
      await unlink(temp).catch(() => {})
      throw error
    }
    // The rename itself must be durable before any metadata that points at the blob commits.
    await syncFolder(folder)
  }

  /** Resolves once the spare files used by earlier puts are made again (for tests and benchmarks). */
  settled(): Promise<void> {
    return this.spares.settled()
  }

  /**
   * A file to write a put's bytes into before it is renamed to `target`: a spare one when one is
   * ready, else a new temp file beside the target. Empty bytes take a new one: writing nothing
   * would leave a spare file's older time on the blob, and a put must mark the blob modified now.
   */
  private async openTemp(target: string, folder: string, empty: boolean): Promise<{ handle: FileHandle; temp: string }> {
    const spare = empty ? null : await this.spares.open()
    if (spare) return { handle: spare.handle, temp: spare.file }
    const temp = `${target}.${randomBytes(6).toString('hex')}.tmp`
    return { handle: await inFolder(folder, () => open(temp, 'wx')), temp }
  }

  get(hash: string, encoding: BlobEncoding = 'identity'): Promise<Buffer> {
    return readFile(this.file(hash, encoding))
  }

  async *list(): AsyncIterable<BlobFile> {
    for (const first of await dirNames(this.root)) {
      if (!FAN_OUT.test(first)) continue
      const dir = path.join(this.root, first)
      for (const name of await dirNames(dir)) {
        // A file removed since the folder was read (a put's temp file renamed, a sweep) is skipped.
        const info = await stat(path.join(dir, name)).catch(() => null)
        if (!info?.isFile()) continue
        const match = BLOB_NAME.exec(name)
        const blob = match && match[1]!.startsWith(first) ? match : null
        // Anything else in a fan-out folder is a temp file of a put (`{hash}{suffix}.{random}.tmp`).
        if (!blob && !name.endsWith('.tmp')) continue
        yield {
          name: path.join(first, name),
          hash: blob ? blob[1]! : null,
          encoding: blob ? ENCODING_OF_SUFFIX[blob[2] ?? '']! : null,
          bytes: info.size,
          modifiedMs: info.mtimeMs,
        }
      }
    }
    // The spare files of a process that died are temp files too.
    yield* SpareFiles.leftBehind(this.root)
  }

  async removeIfOlder(file: BlobFile, beforeMs: number): Promise<boolean> {
    const full = path.join(this.root, file.name)
    // Gone already (another sweep, a put's rename): nothing to remove.
    const info = await stat(full).catch(() => null)
    if (!info || info.mtimeMs >= beforeMs) return false
    try {
      await unlink(full)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
      throw error
    }
    await SpareFiles.removedFrom(this.root, file.name)
    return true
  }

  async check(): Promise<void> {
    await mkdir(this.root, { recursive: true })
    await access(this.root, constants.R_OK | constants.W_OK)
  }

  /** Stops making spare files and removes this store's. */
  async close(): Promise<void> {
    await this.spares.close()
  }

  async delete(hash: string): Promise<void> {
    for (const encoding of BLOB_ENCODINGS) {
      await unlink(this.file(hash, encoding)).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error
      })
    }
  }
}

/**
 * Runs `entry`, which adds an entry to `folder`, making the folder first when it is missing: a
 * blob's fan-out folder is made by the first file that goes in it, so the usual case is one call.
 */
async function inFolder<T>(folder: string, entry: () => Promise<T>): Promise<T> {
  try {
    return await entry()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  await mkdir(folder, { recursive: true })
  return entry()
}

/** Makes the entries just added to or removed from a folder durable. */
async function syncFolder(folder: string): Promise<void> {
  const handle = await open(folder, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

async function dirNames(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
}
