import { randomBytes } from 'node:crypto'
import { mkdir, open, readFile, rename, stat, unlink } from 'node:fs/promises'
import path from 'node:path'
import { type BlobEncoding, type BlobStore, SHA256_HEX } from './blob-store.ts'

const SUFFIX: Record<BlobEncoding, string> = { identity: '', br: '.br', gzip: '.gz' }

/** Blobs under {root}/ab/cd/abcd...; writes go to a temp file, are fsynced, renamed, and the folder fsynced. */
export class FsBlobStore implements BlobStore {
  constructor(private readonly root: string) {}

  private file(hash: string, encoding: BlobEncoding): string {
    if (!SHA256_HEX.test(hash)) throw new Error(`not a sha256 hex digest: ${hash}`)
    return path.join(this.root, hash.slice(0, 2), hash.slice(2, 4), hash + SUFFIX[encoding])
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
    if (await this.has(hash, encoding)) return
    await mkdir(path.dirname(target), { recursive: true })
    const temp = `${target}.${randomBytes(6).toString('hex')}.tmp`
    const handle = await open(temp, 'wx')
    try {
      await handle.writeFile(bytes)
      await handle.sync()
    } finally {
      await handle.close()
    }
    try {
      await rename(temp, target)
    } catch (error) {
      await unlink(temp).catch(() => {})
      throw error
    }
    // The rename itself must be durable before the metadata that points at the blob commits.
    const dir = await open(path.dirname(target), 'r')
    try {
      await dir.sync()
    } finally {
      await dir.close()
    }
  }

  get(hash: string, encoding: BlobEncoding = 'identity'): Promise<Buffer> {
    return readFile(this.file(hash, encoding))
  }

  async delete(hash: string): Promise<void> {
    // Identity first: readers take a blob whose identity bytes exist as complete.
    for (const encoding of ['identity', 'br', 'gzip'] as const) {
      await unlink(this.file(hash, encoding)).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error
      })
    }
  }
}
