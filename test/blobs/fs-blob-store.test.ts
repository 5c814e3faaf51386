/**
 * The filesystem store's layout: blobs one folder deep (`ab/{hash}`). A store written with two
 * levels (`ab/cd/{hash}`, as earlier versions did) is moved to one at start, so its blobs are
 * served and swept as before, and nothing is left below a second level.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Writable } from 'node:stream'
import { after, describe, test } from 'node:test'
import pino from 'pino'
import { sweepBlobs } from '../../src/blobs/blob-sweep.ts'
import type { BlobsRepository } from '../../src/blobs/blobs.repository.ts'
import { FsBlobStore } from '../../src/blobs/fs-blob-store.ts'
import { SPARE_FILES, SPARE_FOLDER } from '../../src/blobs/spare-files.ts'
import { startServer } from '../../src/server.ts'
import { createSite, sha256 } from '../helpers/factories.ts'
import { startTestServer, TestServer } from '../helpers/server.ts'

/**
 * Every folder below the store's first level: none once the store is laid out in one. The spare
 * files' folder is the store's own, made after any put.
 */
function secondLevelFolders(root: string): string[] {
  return readdirSync(root, { recursive: true })
    .map(String)
    .filter((name) => name.split(path.sep).length === 2 && name.split(path.sep)[0] !== SPARE_FOLDER && statSync(path.join(root, name)).isDirectory())
}

/** Writes a file where a store of two levels kept it: `ab/cd/{name}`. */
function leaveTwoLevel(root: string, hash: string, name: string, bytes: Buffer): void {
  const folder = path.join(root, hash.slice(0, 2), hash.slice(2, 4))
  mkdirSync(folder, { recursive: true })
  writeFileSync(path.join(folder, name), bytes)
}

describe('filesystem blob store layout', () => {
  const roots: string[] = []
  const newRoot = () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'plinth-fs-layout-'))
    roots.push(root)
    return root
  }
  after(() => roots.forEach((root) => rmSync(root, { recursive: true, force: true })))

  test('a blob and its variants are stored one folder deep, named by the first byte of the hash', async () => {
    const root = newRoot()
    const store = new FsBlobStore(root)
    const bytes = randomBytes(1000)
    const hash = sha256(bytes)
    await store.put(hash, bytes)
    await store.put(hash, Buffer.from('br bytes'), 'br')
    // Beside the spare files the store makes ahead for later puts (see the spare files' tests).
    assert.deepEqual(
      readdirSync(root).filter((name) => name !== 'spare'),
      [hash.slice(0, 2)],
    )
    assert.deepEqual(readdirSync(path.join(root, hash.slice(0, 2))).sort(), [hash, `${hash}.br`])
    const names: string[] = []
    for await (const file of store.list()) names.push(file.name)
    assert.deepEqual(names.sort(), [path.join(hash.slice(0, 2), hash), path.join(hash.slice(0, 2), `${hash}.br`)])
  })

  test('a store of two levels is moved to one: every file readable and listed, no second-level folder left', async () => {
    const root = newRoot()
    const blobs = Array.from({ length: 5 }, () => randomBytes(500 + Math.floor(Math.random() * 500)))
    for (const bytes of blobs) leaveTwoLevel(root, sha256(bytes), sha256(bytes), bytes)
    const first = sha256(blobs[0]!)
    leaveTwoLevel(root, first, `${first}.gz`, Buffer.from('gzip bytes'))
    leaveTwoLevel(root, first, `${first}.0123456789ab.tmp`, Buffer.from('half a file'))
    // Stored again in one level since: the moved copy (the same bytes) takes its place.
    const again = new FsBlobStore(root)
    await again.put(sha256(blobs[1]!), blobs[1]!)

    const store = new FsBlobStore(root)
    assert.equal(await store.moveTwoLevelBlobs(), 7)
    assert.deepEqual(secondLevelFolders(root), [])
    for (const bytes of blobs) assert.ok((await store.get(sha256(bytes))).equals(bytes))
    assert.equal((await store.get(first, 'gzip')).toString(), 'gzip bytes')
    const listed = new Map<string, string | null>()
    for await (const file of store.list()) listed.set(file.name, file.hash)
    assert.equal(listed.size, 7, 'five blobs, one variant, one temp file')
    assert.equal(listed.get(path.join(first.slice(0, 2), `${first}.0123456789ab.tmp`)), null, 'the temp file is listed as one, for the sweep')
    assert.equal(await store.moveTwoLevelBlobs(), 0, 'a second start has nothing to move')
  })

  test('a server started on a data dir of two levels moves it, says so, and serves the sites stored there', async () => {
    const first = await startTestServer('sqlite')
    const logo = randomBytes(3000)
    const files = [
      { path: 'index.html', content: '<!doctype html><title>Kept</title><link rel="stylesheet" href="style.css"><h1>Kept</h1>' },
      { path: 'style.css', content: 'h1 { color: rebeccapurple }' },
      { path: 'logo.png', content: logo.toString('base64'), contentEncoding: 'base64' },
    ]
    const site = await createSite(first, { name: 'Kept', files })
    await first.server.blobVariants.settled()
    await first.server.close()

    // Lay the data dir out as earlier versions did: ab/{hash} -> ab/cd/{hash}.
    const root = path.join(first.config.dataDir, 'blobs')
    let movedFiles = 0
    for (const folder of readdirSync(root)) {
      for (const name of readdirSync(path.join(root, folder))) {
        mkdirSync(path.join(root, folder, name.slice(2, 4)), { recursive: true })
        renameSync(path.join(root, folder, name), path.join(root, folder, name.slice(2, 4), name))
        movedFiles++
      }
    }
    assert.ok(movedFiles >= 3, 'the site left its blobs and their variants')

    const lines: string[] = []
    const log = pino({ level: 'info' }, new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) }))
    const second = new TestServer(await startServer(first.config, log), first.config, first.store)
    try {
      assert.deepEqual(secondLevelFolders(root), [])
      assert.ok(
        lines.some((line) => line.includes(`moved ${movedFiles} files from the earlier two-level folders`)),
        `the start says what it moved: ${lines.join('')}`,
      )
      const page = await second.site(site.slug, '/')
      assert.equal(page.status, 200)
      assert.match(page.body.toString(), /<h1>Kept<\/h1>/)
      const image = await second.site(site.slug, '/logo.png')
      assert.equal(image.status, 200)
      assert.ok(image.body.equals(logo))
      const styled = await second.site(site.slug, '/style.css', { headers: { 'accept-encoding': 'br' } })
      assert.equal(styled.status, 200)
    } finally {
      await second.close()
    }
  })
})

describe('filesystem blob store spare files', () => {
  const roots: string[] = []
  const stores: FsBlobStore[] = []
  const newStore = (root = mkdtempSync(path.join(os.tmpdir(), 'plinth-fs-spare-'))) => {
    roots.push(root)
    const store = new FsBlobStore(root)
    stores.push(store)
    return { root, store }
  }
  after(async () => {
    await Promise.all(stores.map((store) => store.close()))
    roots.forEach((root) => rmSync(root, { recursive: true, force: true }))
  })
  /** The spare files under root, by folder: name -> [inode, size]. */
  const sparesUnder = (root: string): Map<string, Map<string, [number, number]>> => {
    const out = new Map<string, Map<string, [number, number]>>()
    const spareRoot = path.join(root, 'spare')
    for (const owner of readdirSync(spareRoot)) {
      const files = new Map<string, [number, number]>()
      for (const name of readdirSync(path.join(spareRoot, owner))) {
        const info = statSync(path.join(spareRoot, owner, name))
        files.set(name, [info.ino, info.size])
      }
      out.set(owner, files)
    }
    return out
  }
  /** The folder and spare files of the one process that made spare files under root. */
  const ownSpares = (root: string): [string, Map<string, [number, number]>] => {
    const [own, ...others] = sparesUnder(root)
    assert.ok(own !== undefined && others.length === 0, 'one process made spare files')
    return own
  }
  const blob = () => {
    const bytes = randomBytes(2000 + Math.floor(Math.random() * 2000))
    return { bytes, hash: sha256(bytes) }
  }

  test('after a put the store makes its spare files, empty, and later puts write into them', async () => {
    const { root, store } = newStore()
    const first = blob()
    await store.put(first.hash, first.bytes)
    await store.settled()
    const [, spares] = ownSpares(root)
    assert.equal(spares.size, SPARE_FILES)
    assert.ok([...spares.values()].every(([, size]) => size === 0))

    const inodes = new Set([...spares.values()].map(([ino]) => ino))
    const next = Array.from({ length: 10 }, blob)
    await Promise.all(next.map(({ hash, bytes }) => store.put(hash, bytes)))
    for (const { hash, bytes } of next) {
      assert.deepEqual(await store.get(hash), bytes)
      assert.ok(inodes.has(statSync(path.join(root, hash.slice(0, 2), hash)).ino), 'the blob is one of the spare files, renamed')
    }
    await store.settled()
    assert.equal(ownSpares(root)[1].size, SPARE_FILES, 'the ten taken are made again')
    // Spare files are not blobs: the listing (and so the sweep) does not see this store's own.
    const listed: string[] = []
    for await (const file of store.list()) listed.push(file.name)
    assert.equal(listed.length, 11)
    assert.ok(listed.every((name) => !name.startsWith('spare')))
  })

  test('more puts at once than spare files, and spare files removed under the store, all store their bytes', async () => {
    const { root, store } = newStore()
    const warm = blob()
    await store.put(warm.hash, warm.bytes)
    await store.settled()
    // Another process sweeping the same data dir removed some.
    const [owner, spares] = ownSpares(root)
    for (const name of [...spares.keys()].slice(0, 20)) unlinkSync(path.join(root, 'spare', owner, name))
    const many = Array.from({ length: SPARE_FILES + 30 }, blob)
    await Promise.all(many.map(({ hash, bytes }) => store.put(hash, bytes)))
    const inodes = new Set<number>()
    for (const { hash, bytes } of many) {
      assert.deepEqual(await store.get(hash), bytes)
      inodes.add(statSync(path.join(root, hash.slice(0, 2), hash)).ino)
    }
    assert.equal(inodes.size, many.length, 'no file was written by two puts')
  })

  test('a put marks its blob modified now, an empty one too, however long ago the spare files were made', async () => {
    const { root, store } = newStore()
    const warm = blob()
    await store.put(warm.hash, warm.bytes)
    await store.settled()
    const old = new Date(Date.now() - 2 * 60 * 60 * 1000)
    const [owner, spares] = ownSpares(root)
    for (const name of spares.keys()) utimesSync(path.join(root, 'spare', owner, name), old, old)
    const empty = Buffer.alloc(0)
    const started = Date.now() - 1000 // file times may be coarser than the clock
    for (const { hash, bytes } of [blob(), { hash: sha256(empty), bytes: empty }]) {
      await store.put(hash, bytes)
      assert.ok(statSync(path.join(root, hash.slice(0, 2), hash)).mtimeMs >= started, `a blob of ${bytes.length} bytes is new`)
      assert.deepEqual(await store.get(hash), bytes)
    }
  })

  test("the sweep removes a dead process's spare files and their folder, never a live one's; closing removes a store's own", async () => {
    const { root, store } = newStore()
    const other = new FsBlobStore(root) // another live store: a server beside `plinth blobs sweep`
    const bytes = randomBytes(100)
    await store.put(sha256(bytes), bytes)
    await other.put(sha256(bytes), bytes)
    await Promise.all([store.settled(), other.settled()])
    // A process that died with its spare files made: its id is free again once it has exited.
    const dead = spawnSync(process.execPath, ['-e', '']).pid
    const deadFolder = path.join(root, 'spare', `${dead}-0a1b2c3d4e5f`)
    mkdirSync(deadFolder)
    for (let i = 0; i < 3; i++) writeFileSync(path.join(deadFolder, `f${i}`), '')
    assert.equal(sparesUnder(root).size, 3)

    const rows = { referencedHashes: (hashes: string[]) => Promise.resolve(new Set(hashes)) } as unknown as BlobsRepository
    const result = await sweepBlobs(store, rows, { tempGraceMs: 0, now: () => Date.now() + 1000 })
    assert.equal(result.tempFiles, 3, "the dead process's spare files, as temp files")
    assert.equal(result.tempBytes, 0)
    const left = sparesUnder(root)
    assert.equal(left.size, 2, "the dead process's folder went with its last file")
    for (const files of left.values()) assert.equal(files.size, SPARE_FILES, "the live stores' spare files are all there")

    await store.close()
    await other.close()
    assert.deepEqual(readdirSync(path.join(root, 'spare')), [])
    assert.deepEqual(await store.get(sha256(bytes)), bytes, 'the blob stays')
  })
})
