/**
 * The publish pipeline with files given by hash, on a real store: unchanged blobs write nothing,
 * and only the files the content rules scan, and have no result remembered for, are read back
 * from the blob store.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import type { BlobEncoding, BlobFile, BlobStore } from '../../src/blobs/blob-store.ts'
import { BlobsRepository } from '../../src/blobs/blobs.repository.ts'
import { FsBlobStore } from '../../src/blobs/fs-blob-store.ts'
import { CONTENT_SCAN_RESULTS_KEPT, ContentScanResults } from '../../src/publishing/content-scan-results.ts'
import { PublishPipeline } from '../../src/publishing/publish-pipeline.ts'
import { sha256 } from '../helpers/factories.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

/** The real filesystem store, counting what is read and written through it. */
class CountingBlobStore implements BlobStore {
  reads: string[] = []
  writes: string[] = []
  constructor(private readonly inner: BlobStore) {}
  has(hash: string, encoding?: BlobEncoding) {
    return this.inner.has(hash, encoding)
  }
  put(hash: string, bytes: Buffer, encoding?: BlobEncoding) {
    this.writes.push(hash)
    return this.inner.put(hash, bytes, encoding)
  }
  get(hash: string, encoding?: BlobEncoding) {
    this.reads.push(hash)
    return this.inner.get(hash, encoding)
  }
  delete(hash: string) {
    return this.inner.delete(hash)
  }
  list() {
    return this.inner.list()
  }
  removeIfOlder(file: BlobFile, beforeMs: number) {
    return this.inner.removeIfOlder(file, beforeMs)
  }
  check() {
    return this.inner.check()
  }
  settled() {
    return this.inner.settled()
  }
  close() {
    return this.inner.close()
  }
}

for (const store of STORES) {
  describe(`Publishing by hash (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    before(async () => {
      server = await startTestServer(store.name)
    })
    after(() => server?.close())

    test('an unchanged bundle sent by hash writes nothing and reads only the files the rules scan', async () => {
      const user = await server.user()
      const png = randomBytes(5000)
      const files = [
        { path: 'index.html', content: '<!doctype html><title>t</title><h1>hash</h1>' },
        { path: 'site.css', content: 'h1 { color: teal }' },
        { path: 'app.js', content: 'console.log("hash")' },
        { path: 'photo.png', content: png.toString('base64'), contentEncoding: 'base64' as const },
      ]
      const created = await server.api('POST', '/v1/websites', { token: user.token, body: { category: 'other', files } })
      assert.equal(created.status, 201, created.text)

      const blobs = new CountingBlobStore(new FsBlobStore(path.join(server.config.dataDir, 'blobs')))
      const pipeline = new PublishPipeline({
        blobs,
        blobRows: new BlobsRepository(server.server.db.kysely),
        variants: server.server.blobVariants,
        references: server.server.services.uploads,
        httpsSites: false,
        scans: null,
        scanResults: new ContentScanResults(CONTENT_SCAN_RESULTS_KEPT),
        limits: server.config.bundleLimits,
      })
      const byHash = files.map((f) => ({ path: f.path, sha256: sha256(Buffer.from(f.content, f.contentEncoding ?? 'utf8')) }))
      const bundle = await pipeline.store(byHash, { userId: user.id, collectionNames: [] })
      assert.deepEqual(bundle.newBlobs, [])
      assert.deepEqual(blobs.writes, [])
      assert.deepEqual(
        blobs.reads.sort(),
        byHash
          .filter((f) => f.path !== 'photo.png')
          .map((f) => f.sha256)
          .sort(),
        'the PNG is not read',
      )
      assert.deepEqual(
        bundle.files.map((f) => [f.path, f.size, f.contentType]),
        [
          ['index.html', Buffer.byteLength(files[0]!.content), 'text/html'],
          ['site.css', Buffer.byteLength(files[1]!.content), 'text/css'],
          ['app.js', Buffer.byteLength(files[2]!.content), 'text/javascript'],
          ['photo.png', png.length, 'image/png'],
        ],
      )
      assert.equal(bundle.totalBytes, created.body.bytesWritten)
    })

    test('a file given by hash is not read when the rules already checked its bytes for this user', async () => {
      const user = await server.user()
      const files = [
        { path: 'index.html', content: '<!doctype html><title>t</title><h1>known</h1>' },
        { path: 'site.css', content: 'h1 { color: olive }' },
      ]
      const created = await server.api('POST', '/v1/websites', { token: user.token, body: { category: 'other', files } })
      assert.equal(created.status, 201, created.text)
      const blobs = new CountingBlobStore(new FsBlobStore(path.join(server.config.dataDir, 'blobs')))
      const pipeline = new PublishPipeline({
        blobs,
        blobRows: new BlobsRepository(server.server.db.kysely),
        variants: server.server.blobVariants,
        references: server.server.services.uploads,
        httpsSites: false,
        scans: null,
        scanResults: new ContentScanResults(CONTENT_SCAN_RESULTS_KEPT),
        limits: server.config.bundleLimits,
      })
      const target = { userId: user.id, collectionNames: [] }
      const inline = await pipeline.store(files, target)
      const byHash = files.map((f) => ({ path: f.path, sha256: sha256(Buffer.from(f.content)) }))
      const stored = await pipeline.store(byHash, target)
      assert.deepEqual(blobs.reads, [], 'what the rules found in the inline texts is known by their blobs')
      assert.deepEqual(stored.files, inline.files)
    })

    test('a hash the caller never published or uploaded names nothing', async () => {
      const stranger = await server.user()
      const pipeline = new PublishPipeline({
        blobs: server.server.blobs,
        blobRows: new BlobsRepository(server.server.db.kysely),
        variants: server.server.blobVariants,
        references: server.server.services.uploads,
        httpsSites: false,
        scans: null,
        scanResults: new ContentScanResults(CONTENT_SCAN_RESULTS_KEPT),
        limits: server.config.bundleLimits,
      })
      await assert.rejects(
        pipeline.store([{ path: 'index.html', sha256: 'b'.repeat(64) }], { userId: stranger.id, collectionNames: [] }),
        (e: any) => e.code === 'PUBLISH_INVALID' && e.violations.length === 1 && e.violations[0].code === 'UNKNOWN_HASH',
      )
    })
  })
}
