/**
 * Empty files a filesystem blob store makes ahead for its puts to write into. Creating a file is
 * most of what a publish's writes cost the kernel (finding a free inode: ext4 walks the group's
 * bitmap, past every inode freed in the last minute), so a put writes into a file made beforehand
 * and a publish's writes do no creating (the gain: docs/benchmarks.md). The work is the same, done
 * in the quiet after a publish, as its compressed variants are.
 *
 * Each store keeps its own in `{store}/spare/{pid}-{random}/`, made again 100 ms after its last
 * put (so after a publish and its variants, not during them), and no other store takes from it.
 * Spare files hold no bytes. A store removes its folder when it is closed; the folder of a process
 * that died is swept as temp files are (leftBehind), never that of a live one (`plinth blobs sweep`
 * runs beside the server).
 */
import { randomBytes } from 'node:crypto'
import { type FileHandle, mkdir, open, readdir, rm, rmdir, stat } from 'node:fs/promises'
import path from 'node:path'
import type { BlobFile } from './blob-store.ts'

/** The folder of every store's spare files, beside the fan-out folders. */
export const SPARE_FOLDER = 'spare'
/** Spare files a store keeps ready: a maximal publish's 40 blobs and the variants of its texts, with room. */
export const SPARE_FILES = 128
/** The quiet after the last put before the spare files are made again. */
const REFILL_DELAY_MS = 100

export class SpareFiles {
  private readonly folder: string
  private readonly ready: string[] = []
  private refillTimer: NodeJS.Timeout | null = null
  private refilling: Promise<void> | null = null
  private closed = false

  constructor(storeRoot: string) {
    this.folder = path.join(storeRoot, SPARE_FOLDER, `${process.pid}-${randomBytes(6).toString('hex')}`)
  }

  /**
   * A spare file opened for writing, to be renamed once written, or null when none is ready (a
   * burst of puts took them all); either way, more are made once the puts are over.
   */
  async open(): Promise<{ handle: FileHandle; file: string } | null> {
    this.scheduleRefill()
    for (let file = this.ready.pop(); file !== undefined; file = this.ready.pop()) {
      try {
        return { handle: await open(file, 'r+'), file }
      } catch (error) {
        // Removed under the store (a sweep of another process that took this one for dead): take another.
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      }
    }
    return null
  }

  /** Resolves once the spare files taken so far are made again. */
  async settled(): Promise<void> {
    if (this.refillTimer) {
      clearTimeout(this.refillTimer)
      this.startRefill()
    }
    await this.refilling
  }

  /**
   * Stops making spare files and removes this store's, once the file being made (if any) is made:
   * removing the folder under it would race that file's creation.
   */
  async close(): Promise<void> {
    this.closed = true
    if (this.refillTimer) clearTimeout(this.refillTimer)
    this.refillTimer = null
    this.ready.length = 0
    await this.refilling
    await rm(this.folder, { recursive: true, force: true })
  }

  /**
   * The spare files of processes that died, named relative to the store, as temp files (no hash):
   * the sweep removes them once older than its grace for temp files.
   */
  static async *leftBehind(storeRoot: string): AsyncIterable<BlobFile> {
    const spareRoot = path.join(storeRoot, SPARE_FOLDER)
    for (const owner of await namesIn(spareRoot)) {
      if (processIsAlive(Number(/^(\d+)-/.exec(owner)?.[1]))) continue
      for (const name of await namesIn(path.join(spareRoot, owner))) {
        // A file removed since the folder was read (by another sweep) is skipped.
        const info = await stat(path.join(spareRoot, owner, name)).catch(() => null)
        if (info?.isFile()) yield { name: path.join(SPARE_FOLDER, owner, name), hash: null, encoding: null, bytes: 0, modifiedMs: info.mtimeMs }
      }
    }
  }

  /** After the sweep removed `file` (a path in the store): the last spare file of a dead process takes its folder with it. */
  static async removedFrom(storeRoot: string, file: string): Promise<void> {
    // rmdir fails while the folder still holds spare files, or once another sweep removed it: both leave nothing to do.
    if (file.split(path.sep)[0] === SPARE_FOLDER) await rmdir(path.join(storeRoot, path.dirname(file))).catch(() => {})
  }

  private scheduleRefill(): void {
    if (this.closed) return
    if (this.refillTimer) clearTimeout(this.refillTimer)
    this.refillTimer = setTimeout(() => this.startRefill(), REFILL_DELAY_MS)
    this.refillTimer.unref()
  }

  private startRefill(): void {
    this.refillTimer = null
    this.refilling ??= this.refill().finally(() => (this.refilling = null))
  }

  /**
   * Makes spare files one at a time, up to SPARE_FILES, leaving the I/O threads to the requests
   * meanwhile. A failure (a full disk, the data dir removed) stops it quietly: puts then create
   * their temp files as they go, and the next put tries again. The files need no fsync: a spare
   * file lost in a crash is never looked for.
   */
  private async refill(): Promise<void> {
    try {
      await mkdir(this.folder, { recursive: true })
      while (!this.closed && this.ready.length < SPARE_FILES) {
        const file = path.join(this.folder, randomBytes(8).toString('hex'))
        await (await open(file, 'wx')).close()
        this.ready.push(file)
      }
    } catch {
      // See above: the store works without spare files.
    }
  }
}

/** Whether a process of this id runs on this machine (a folder named by no process id: no). */
function processIsAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

async function namesIn(dir: string): Promise<string[]> {
  try {
    return await readdir(dir)
  } catch (error) {
    if (['ENOENT', 'ENOTDIR'].includes((error as NodeJS.ErrnoException).code ?? '')) return []
    throw error
  }
}
