/** The publish pipeline on a real store: a failed publish leaves no bytes, a concurrent one keeps its own. */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { after, before, describe, test } from 'node:test'
import type { BlobEncoding } from '../../src/blobs/blob-store.ts'
import { BlobVariants, VARIANT_WORK } from '../../src/blobs/blob-variants.ts'
import { BlobsRepository } from '../../src/blobs/blobs.repository.ts'
import { FsBlobStore } from '../../src/blobs/fs-blob-store.ts'
import { type Db, migrate, openDb } from '../../src/db/connect.ts'
import { ServerSecrets } from '../../src/db/server-secrets.ts'
import { BUNDLE_LIMITS } from '../../src/core/limits.ts'
import { CONTENT_SCAN_RESULTS_KEPT, ContentScanResults } from '../../src/publishing/content-scan-results.ts'
import { PublishPipeline } from '../../src/publishing/publish-pipeline.ts'
import { UploadsRepository } from '../../src/uploads/uploads.repository.ts'
import { UploadsService } from '../../src/uploads/uploads.service.ts'
import { createStore, STORES, type TestStore } from '../helpers/stores.ts'

/** Inline files only: the publishing user and their collections play no part. */
const target = { userId: 'usr_pipelinetest', collectionNames: [] }

const files = (tag: string) => [
  { path: 'index.html', content: `<h1>${tag}</h1>${'<p>text that compresses well.</p>'.repeat(40)}` },
  { path: 'app.js', content: `console.log(${JSON.stringify(tag)})` },
]

/** index.html and four images of random bytes. */
const photoFiles = () => [
  { path: 'index.html', content: '<h1>Photos</h1>' },
  ...['a', 'b', 'c', 'd'].map((name) => ({ path: `img/${name}.png`, content: randomBytes(1024).toString('base64'), contentEncoding: 'base64' as const })),
]

/** The real filesystem store, running `before` ahead of each put (to hold or fail it) and noting the hashes it stored. */
class WatchedBlobStore extends FsBlobStore {
  readonly stored: string[] = []

  constructor(
    root: string,
    private readonly before: (hash: string) => void | Promise<void>,
  ) {
    super(root)
  }

  override async put(hash: string, bytes: Buffer, encoding?: BlobEncoding): Promise<void> {
    await this.before(hash)
    await super.put(hash, bytes, encoding)
    this.stored.push(hash)
  }
}

for (const store of STORES) {
  describe(`publish pipeline (${store.name})`, { skip: store.skip }, () => {
    let testStore: TestStore
    let db: Db
    let blobs: FsBlobStore
    let rows: BlobsRepository
    let pipeline: PublishPipeline
    let variants: BlobVariants
    const pipelineOn = (blobs: FsBlobStore, rows: BlobsRepository, variants: BlobVariants) =>
      new PublishPipeline({
        blobs,
        blobRows: rows,
        variants,
        references: new UploadsService({
          baseUrl: 'http://localhost',
          repo: new UploadsRepository(db.kysely),
          blobs,
          blobRows: rows,
          blobVariants: variants,
          secrets: new ServerSecrets(db.kysely),
          log: { error() {} },
        }),
        httpsSites: false,
        scans: null,
        scanResults: new ContentScanResults(CONTENT_SCAN_RESULTS_KEPT),
        limits: BUNDLE_LIMITS,
      })
    before(async () => {
      testStore = await createStore(store.name)
      db = openDb({ dataDir: testStore.dataDir, databaseUrl: testStore.databaseUrl })
      await migrate(db)
      blobs = new FsBlobStore(path.join(testStore.dataDir, 'blobs'))
      rows = new BlobsRepository(db.kysely)
      variants = new BlobVariants({ blobs, rows, log: { warn() {}, info() {} }, ...VARIANT_WORK })
      pipeline = pipelineOn(blobs, rows, variants)
    })
    after(async () => {
      await db?.close()
      await testStore?.dispose()
    })

    test('a publish whose metadata transaction fails removes the blobs it wrote', async () => {
      const bundle = await pipeline.store(files('failed'), target)
      const hashes = bundle.newBlobs.map((b) => b.hash)
      assert.equal(hashes.length, 2)
      for (const hash of hashes) assert.equal(await blobs.has(hash), true)
      const html = bundle.newBlobs.find((b) => b.variants_type === 'text/html')
      assert.ok(html, 'the HTML is recorded with its variants pending')
      assert.equal(html.br_size, null, 'no variant is made before the publish commits')

      // The metadata transaction failed.
      await pipeline.abandon(bundle)
      await variants.settled()
      for (const hash of hashes) {
        assert.equal(await blobs.has(hash), false)
        assert.equal(await blobs.has(hash, 'br'), false)
        assert.equal(await blobs.has(hash, 'gzip'), false)
      }
    })

    test('a committed publish gets its variants after it answers, and a restart resumes those left pending', async () => {
      const bundle = await pipeline.store(files('variants'), target)
      await rows.insertMissing(db.kysely, bundle.newBlobs)
      let told = 0
      await pipeline.confirm(bundle, { whenVariantsReady: () => told++ })
      await variants.settled()
      assert.equal(told, 1, 'the caller is told once every variant is made')
      const html = bundle.newBlobs.find((b) => b.variants_type === 'text/html')!
      const row = (await rows.findExisting([html.hash])).get(html.hash)!
      assert.equal(row.variants_type, null, 'the row is settled')
      assert.ok(row.br_size !== null && row.gzip_size !== null, 'both variants were worth keeping')
      assert.deepEqual(brotliDecompressSync(await blobs.get(html.hash, 'br')), await blobs.get(html.hash))
      assert.deepEqual(gunzipSync(await blobs.get(html.hash, 'gzip')), await blobs.get(html.hash))
      const script = bundle.newBlobs.find((b) => b.hash !== html.hash)!
      assert.equal(script.variants_type, null, 'a script of a few bytes gains nothing from compression')

      // A process that stopped before making them leaves the row pending; the next one makes them.
      const left = await pipeline.store(files('left pending'), target)
      await rows.insertMissing(db.kysely, left.newBlobs)
      const pendingHtml = left.newBlobs.find((b) => b.variants_type === 'text/html')!
      const restarted = new BlobVariants({ blobs, rows, log: { warn() {}, info() {} }, ...VARIANT_WORK })
      assert.ok((await restarted.resumePending()) >= 1)
      assert.equal((await rows.findExisting([pendingHtml.hash])).get(pendingHtml.hash)!.variants_type, null)
      assert.equal(await blobs.has(pendingHtml.hash, 'br'), true)
    })

    test('variants left for later (a draft file) stay pending until asked for, then are made once', async () => {
      const bundle = await pipeline.store(files('later'), target)
      await rows.insertMissing(db.kysely, bundle.newBlobs)
      await pipeline.confirm(bundle, { variantsLater: true })
      await variants.settled()
      const html = bundle.newBlobs.find((b) => b.variants_type === 'text/html')!
      assert.equal((await rows.findExisting([html.hash])).get(html.hash)!.variants_type, 'text/html', 'still pending')
      assert.equal(await blobs.has(html.hash, 'br'), false)
      let told = 0
      pipeline.makePendingVariants([...bundle.newBlobs.map((b) => b.hash), html.hash], () => told++)
      await variants.settled()
      assert.equal(told, 1)
      assert.equal((await rows.findExisting([html.hash])).get(html.hash)!.variants_type, null)
      assert.deepEqual(brotliDecompressSync(await blobs.get(html.hash, 'br')), await blobs.get(html.hash))
      // Nothing pending among them: nobody is told.
      pipeline.makePendingVariants([html.hash], () => told++)
      await variants.settled()
      assert.equal(told, 1)
    })

    test('a failing publish keeps blobs that a concurrent publish recorded meanwhile', async () => {
      const bundle = await pipeline.store(files('shared'), target)
      // The concurrent publish of the same bytes commits its rows while ours fails.
      await rows.insertMissing(db.kysely, bundle.newBlobs)
      await pipeline.abandon(bundle)
      for (const { hash } of bundle.newBlobs) assert.equal(await blobs.has(hash), true)
    })

    test('a succeeding publish rewrites a new blob that a failing one deleted under it', async () => {
      const bundle = await pipeline.store(files('repaired'), target)
      const [victim] = bundle.newBlobs
      assert.ok(victim, 'the bundle stored a new blob')
      await rows.insertMissing(db.kysely, bundle.newBlobs)
      // The failing publish of the same bytes cleaned up before our rows were visible to it.
      await blobs.delete(victim.hash)
      await pipeline.confirm(bundle)
      await variants.settled()
      assert.equal(await blobs.has(victim.hash), true)
      if (victim.variants_type !== null) assert.equal(await blobs.has(victim.hash, 'br'), true)
    })

    test('an unchanged bundle writes nothing: its blobs are known by their rows', async () => {
      const first = await pipeline.store(files('known'), target)
      await rows.insertMissing(db.kysely, first.newBlobs)
      await pipeline.confirm(first)
      const again = await pipeline.store(files('known'), target)
      assert.equal(again.newBlobs.length, 0)
      assert.equal(again.newBlobBytes, 0)
      assert.equal(again.totalBytes, first.totalBytes)
    })

    test('a page stored alone (a draft write) has its forms remembered: the publish of its draft reads none of it back', async () => {
      const reads: string[] = []
      const counted = new (class extends FsBlobStore {
        override get(hash: string, encoding?: BlobEncoding): Promise<Buffer> {
          reads.push(hash)
          return super.get(hash, encoding)
        }
      })(path.join(testStore.dataDir, 'blobs'))
      const drafting = pipelineOn(counted, rows, variants)
      const page = `<h1>Book</h1><form method="post" action="/_forms/booking"><input name="guests" type="number"></form>${Math.random()}`
      const written = await drafting.storeFile({ path: 'index.html', content: page }, target)
      await rows.insertMissing(db.kysely, written.newBlobs)
      await drafting.confirm(written)
      assert.deepEqual(written.forms, [], 'a file stored alone declares no forms of a version')
      const [file] = written.files
      const published = await drafting.store([{ path: file!.path, contentType: file!.contentType, stored: { hash: file!.hash, size: file!.size } }], target)
      assert.deepEqual(
        published.forms.map((form) => [form.name, form.fields.map((field) => field.name)]),
        [['booking', ['guests']]],
      )
      assert.deepEqual(reads, [], 'the page was not read back')
    })

    test('a large bundle lets the event loop turn while it is inspected and hashed, before its first write', async () => {
      // Counts the event loop's turns from just before the publish starts to its first write.
      let turns = 0
      let ticking = true
      const tick = () => {
        turns++
        if (ticking) setImmediate(tick)
      }
      let turnsAtFirstWrite = -1
      const watchedBlobs = new WatchedBlobStore(path.join(testStore.dataDir, 'blobs'), () => {
        if (turnsAtFirstWrite < 0) turnsAtFirstWrite = turns
      })
      const watched = pipelineOn(watchedBlobs, rows, variants)
      const MiB = 1024 * 1024
      const images = Array.from({ length: 6 }, (_, i) => ({
        path: `img/large-${i}.png`,
        content: randomBytes(MiB).toString('base64'),
        contentEncoding: 'base64' as const,
      }))
      setImmediate(tick)
      try {
        await watched.store([{ path: 'index.html', content: '<h1>Large</h1>' }, ...images], target)
      } finally {
        ticking = false
      }
      // One turn before inspecting, and at least one for each MiB hashed: other requests are
      // answered in between, not after the whole bundle.
      assert.ok(turnsAtFirstWrite >= 1 + images.length, `the event loop turned ${turnsAtFirstWrite} times before the first write`)
    })

    test('a write that fails fails the publish once every other write has settled, and leaves no blob behind', async () => {
      let failed!: () => void
      const failure = new Promise<void>((resolve) => (failed = resolve))
      const hashes: string[] = []
      const watchedBlobs = new WatchedBlobStore(path.join(testStore.dataDir, 'blobs'), async (hash) => {
        const position = hashes.push(hash)
        // The first image's write is held until the last image's write has failed.
        if (position === 2) await failure
        if (position === 5) {
          failed()
          throw new Error('disk full')
        }
      })
      const watched = pipelineOn(watchedBlobs, rows, variants)
      await assert.rejects(watched.store(photoFiles(), target), /disk full/)
      assert.equal(hashes.length, 5)
      assert.ok(watchedBlobs.stored.includes(hashes[1]!), 'the held write finished before the publish failed')
      for (const hash of hashes) assert.equal(await blobs.has(hash), false, `${hash} was removed again`)
      const left: string[] = []
      for await (const file of blobs.list()) if (hashes.includes(file.hash ?? '') || file.hash === null) left.push(file.name)
      assert.deepEqual(left, [], 'no blob or temp file of the failed publish is left')
    })
  })
}
