import { randomBytes } from 'node:crypto'
import { constants } from 'node:fs'
import { access, type FileHandle, mkdir, open, readdir, readFile, rename, stat, unlink } from 'node:fs/promises'
import path from 'node:path'
import { BLOB_ENCODINGS, type BlobEncoding, type BlobFile, type BlobStore, blobPath, ENCODING_OF_SUFFIX } from './blob-store.ts'

const BLOB_NAME = /^([0-9a-f]{64})(\.br|\.gz)?$/
const FAN_OUT = /^[0-9a-f]{2}$/

/** Blobs under {root}/ab/cd/abcd...; writes go to a temp file, are fsynced, renamed, and the folder fsynced, variants alike. */
export class FsBlobStore implements BlobStore {
  constructor(private readonly root: string) {}

  private file(hash: string, encoding: BlobEncoding): string {
    return path.join(this.root, blobPath(hash, encoding))
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
    const temp = `${target}.${randomBytes(6).toString('hex')}.tmp`
    const handle = await openNew(temp, folder)
    try {
      await handle.writeFile(bytes)
      await handle.sync()
    } finally {
      await handle.close()
    }
    // Replaces a file of the same bytes if there is one: the blob is then newly modified, so a
    // sweep running now does not take a blob being stored again for an orphan.
    try {
      await rename(temp, target)
    } catch (error) {
      await unlink(temp).catch(() => {})
      throw error
    }
    // The rename itself must be durable before any metadata that points at the blob commits.
    const dir = await open(folder, 'r')
    try {
      await dir.sync()
    } finally {
      await dir.close()
    }
  }

  get(hash: string, encoding: BlobEncoding = 'identity'): Promise<Buffer> {
    return readFile(this.file(hash, encoding))
  }

  async *list(): AsyncIterable<BlobFile> {
    for (const first of await dirNames(this.root)) {
      if (!FAN_OUT.test(first)) continue
      for (const second of await dirNames(path.join(this.root, first))) {
        if (!FAN_OUT.test(second)) continue
        const dir = path.join(this.root, first, second)
        for (const name of await dirNames(dir)) {
          const info = await stat(path.join(dir, name)).catch(() => null)
          if (!info?.isFile()) continue
          const match = BLOB_NAME.exec(name)
          const blob = match && match[1]!.startsWith(first + second) ? match : null
          // Anything else in a fan-out folder is a temp file of a put (`{hash}{suffix}.{random}.tmp`).
          if (!blob && !name.endsWith('.tmp')) continue
          yield {
            name: path.join(first, second, name),
            hash: blob ? blob[1]! : null,
            encoding: blob ? ENCODING_OF_SUFFIX[blob[2] ?? '']! : null,
            bytes: info.size,
            modifiedMs: info.mtimeMs,
          }
        }
      }
    }
  }

  async removeIfOlder(file: BlobFile, beforeMs: number): Promise<boolean> {
    const full = path.join(this.root, file.name)
    const info = await stat(full).catch(() => null)
    if (!info || info.mtimeMs >= beforeMs) return false
    try {
      await unlink(full)
      return true
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
      throw error
    }
  }

  async check(): Promise<void> {
    await mkdir(this.root, { recursive: true })
    await access(this.root, constants.R_OK | constants.W_OK)
  }

  close(): void {}

  async delete(hash: string): Promise<void> {
    for (const encoding of BLOB_ENCODINGS) {
      await unlink(this.file(hash, encoding)).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error
      })
    }
  }
}

/** Creates a file that must not exist yet, and its folder when that is missing (the usual case is one call). */
async function openNew(file: string, folder: string): Promise<FileHandle> {
  try {
    return await open(file, 'wx')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  await mkdir(folder, { recursive: true })
  return open(file, 'wx')
}

async function dirNames(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
}
