/** The publish pipeline on a real store: a failed publish leaves no bytes, a concurrent one keeps its own. */
import assert from 'node:assert/strict'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { BlobsRepository } from '../../src/blobs/blobs.repository.ts'
import { FsBlobStore } from '../../src/blobs/fs-blob-store.ts'
import { type Db, migrate, openDb } from '../../src/db/connect.ts'
import { ServerSecrets } from '../../src/db/server-secrets.ts'
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

for (const store of STORES) {
  describe(`publish pipeline (${store.name})`, { skip: store.skip }, () => {
    let testStore: TestStore
    let db: Db
    let blobs: FsBlobStore
    let rows: BlobsRepository
    let pipeline: PublishPipeline
    before(async () => {
      testStore = await createStore(store.name)
      db = openDb({ dataDir: testStore.dataDir, databaseUrl: testStore.databaseUrl })
      await migrate(db)
      blobs = new FsBlobStore(path.join(testStore.dataDir, 'blobs'))
      rows = new BlobsRepository(db.kysely)
      pipeline = new PublishPipeline({
        blobs,
        blobRows: rows,
        references: new UploadsService({
          baseUrl: 'http://localhost',
          repo: new UploadsRepository(db.kysely),
          blobs,
          blobRows: rows,
          secrets: new ServerSecrets(db.kysely),
        }),
        httpsSites: false,
      })
    })
    after(async () => {
      await db?.close()
      await testStore?.dispose()
    })

    test('a publish whose metadata transaction fails removes the blobs and variants it wrote', async () => {
      const bundle = await pipeline.store(files('failed'), target)
      const hashes = bundle.newBlobs.map((b) => b.hash)
      assert.equal(hashes.length, 2)
      for (const hash of hashes) assert.equal(await blobs.has(hash), true)
      assert.ok(
        bundle.newBlobs.some((b) => b.br_size !== null),
        'the HTML got a brotli variant',
      )

      // The metadata transaction failed.
      await pipeline.abandon(bundle)
      for (const hash of hashes) {
        assert.equal(await blobs.has(hash), false)
        assert.equal(await blobs.has(hash, 'br'), false)
        assert.equal(await blobs.has(hash, 'gzip'), false)
      }
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
      await rows.insertMissing(db.kysely, bundle.newBlobs)
      // The failing publish of the same bytes cleaned up before our rows were visible to it.
      await blobs.delete(victim.hash)
      await pipeline.confirm(bundle)
      assert.equal(await blobs.has(victim.hash), true)
      if (victim.br_size !== null) assert.equal(await blobs.has(victim.hash, 'br'), true)
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
  })
}
