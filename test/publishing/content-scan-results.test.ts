/**
 * A text is checked by the content rules once per user, path, media type and limit: a publish that
 * sends it again reuses what was found, refusals and warnings alike, and checks only what changed.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { BlobVariants, VARIANT_WORK } from '../../src/blobs/blob-variants.ts'
import { BlobsRepository } from '../../src/blobs/blobs.repository.ts'
import { FsBlobStore } from '../../src/blobs/fs-blob-store.ts'
import { AppError, type PublishViolation } from '../../src/core/errors.ts'
import { BUNDLE_LIMITS } from '../../src/core/limits.ts'
import { type Db, migrate, openDb } from '../../src/db/connect.ts'
import { ServerSecrets } from '../../src/db/server-secrets.ts'
import type { FileScan } from '../../src/publishing/authoring-rules.ts'
import type { ScanOutcome, TextScan } from '../../src/publishing/content-rules.ts'
import { CONTENT_SCAN_RESULTS_KEPT, ContentScanResults } from '../../src/publishing/content-scan-results.ts'
import { CONTENT_SCAN_BATCH_CHARS, ContentScanPool } from '../../src/publishing/content-scans.pool.ts'
import { PublishPipeline } from '../../src/publishing/publish-pipeline.ts'
import type { PublishFileInput } from '../../src/publishing/publishing.schemas.ts'
import { UploadsRepository } from '../../src/uploads/uploads.repository.ts'
import { UploadsService } from '../../src/uploads/uploads.service.ts'
import { useCompiledThreadModules } from '../helpers/build.ts'
import { createStore, type TestStore } from '../helpers/stores.ts'

await useCompiledThreadModules()

/** The real pool, noting the path of every text it is asked to check. */
class CountingScanPool extends ContentScanPool {
  checked: string[] = []

  override scan(scans: readonly TextScan[], limit: number, facts?: boolean): Promise<ScanOutcome[]> {
    this.checked.push(...scans.map((scan) => scan.path))
    return super.scan(scans, limit, facts)
  }
}

const alice = { userId: 'usr_alice', collectionNames: [] }
const bob = { userId: 'usr_bob', collectionNames: [] }

const head = (title: string) =>
  `<!doctype html><html lang="en"><meta name="viewport" content="width=device-width"><title>${title}</title><link rel="stylesheet" href="site.css"><script src="app.js"></script>`

/** A site whose index.html loads a plain-http image: mixed content, a warning on an https site (and nothing else to warn of). */
const site = (headline: string): PublishFileInput[] => [
  { path: 'index.html', content: `${head('t')}<h1>${headline}</h1><a href="about.html">About</a><img src="http://images.example/a.png" alt="">` },
  { path: 'about.html', content: `${head('About')}<p>About us.</p><a href="/">Home</a>` },
  { path: 'site.css', content: 'body { color: #222 }' },
  { path: 'app.js', content: 'document.body.dataset.ready = "1"' },
]

/** A page loading a script from another origin: refused (EXTERNAL_URL). */
const externalScript = '<!doctype html><title>t</title><script src="https://cdn.example/x.js"></script>'

/** A page whose checks take several hundred milliseconds here: far past a 100 ms limit. */
const heavyPage = `<!doctype html><title>heavy</title>${'<div><p>a <b>b</b> <i>c</i></p></div>'.repeat(50_000)}`

async function refusal(publishing: Promise<unknown>): Promise<PublishViolation[]> {
  const error = await publishing.then(
    () => assert.fail('the bundle should be refused'),
    (e: unknown) => e,
  )
  assert.ok(error instanceof AppError && error.code === 'PUBLISH_INVALID', `PUBLISH_INVALID expected, got ${String(error)}`)
  return error.violations ?? []
}

describe('content rules run once per text', () => {
  let testStore: TestStore
  let db: Db
  let pipelineWith: (scans: ContentScanPool) => PublishPipeline
  const pool = new CountingScanPool({ threads: 1, timeLimitMs: 10_000, memoryMb: 256, idleTimeoutMs: 5_000, batchChars: CONTENT_SCAN_BATCH_CHARS })
  const strict = new CountingScanPool({ threads: 1, timeLimitMs: 100, memoryMb: 256, idleTimeoutMs: 5_000, batchChars: CONTENT_SCAN_BATCH_CHARS })

  before(async () => {
    testStore = await createStore('sqlite')
    db = openDb({ dataDir: testStore.dataDir, databaseUrl: null })
    await migrate(db)
    const blobs = new FsBlobStore(path.join(testStore.dataDir, 'blobs'))
    const blobRows = new BlobsRepository(db.kysely)
    const variants = new BlobVariants({ blobs, rows: blobRows, log: { warn() {}, info() {} }, ...VARIANT_WORK })
    const references = new UploadsService({
      baseUrl: 'http://localhost',
      repo: new UploadsRepository(db.kysely),
      blobs,
      blobRows,
      blobVariants: variants,
      secrets: new ServerSecrets(db.kysely),
      log: { error() {} },
    })
    pipelineWith = (scans) =>
      new PublishPipeline({
        blobs,
        blobRows,
        variants,
        scans,
        scanResults: new ContentScanResults(CONTENT_SCAN_RESULTS_KEPT),
        references,
        httpsSites: true,
        limits: BUNDLE_LIMITS,
      })
  })
  after(async () => {
    await pool.close()
    await strict.close()
    await db?.close()
    await testStore?.dispose()
  })

  test('a bundle sent again is not checked again, and keeps its warnings', async () => {
    pool.checked = []
    const pipeline = pipelineWith(pool)
    const first = await pipeline.store(site('Hello'), alice)
    assert.deepEqual(pool.checked.sort(), ['about.html', 'app.js', 'index.html', 'site.css'])
    assert.deepEqual(
      first.warnings.map((w) => [w.code, w.path]),
      [['MIXED_CONTENT', 'index.html']],
    )

    pool.checked = []
    const again = await pipeline.store(site('Hello'), alice)
    assert.deepEqual(pool.checked, [], 'no text is checked a second time')
    assert.deepEqual(again.warnings, first.warnings)
    assert.deepEqual(again.files, first.files)
  })

  test('only the texts that changed, moved or belong to another user are checked', async () => {
    pool.checked = []
    const pipeline = pipelineWith(pool)
    await pipeline.store(site('Before'), alice)
    pool.checked = []

    await pipeline.store(site('After'), alice)
    assert.deepEqual(pool.checked, ['index.html'], 'the one edited page')

    pool.checked = []
    const moved = site('After').map((file) => (file.path === 'about.html' ? { ...file, path: 'team.html' } : file))
    await pipeline.store(moved, alice)
    assert.deepEqual(pool.checked, ['team.html'], 'the same text at a new path')

    pool.checked = []
    await pipeline.store(site('After'), bob)
    assert.deepEqual(pool.checked.sort(), ['about.html', 'app.js', 'index.html', 'site.css'], "another user's publish tells nothing of alice's")
  })

  test('a refused text stays refused, with the same violations, without being checked again', async () => {
    pool.checked = []
    const pipeline = pipelineWith(pool)
    const bundle = [...site('Refused'), { path: 'shop.html', content: externalScript }]
    const first = await refusal(pipeline.store(bundle, alice))
    assert.deepEqual(
      first.map((v) => [v.code, v.path]),
      [['EXTERNAL_URL', 'shop.html']],
    )
    pool.checked = []
    const again = await refusal(pipeline.store(bundle, alice))
    assert.deepEqual(pool.checked, [])
    assert.deepEqual(again, first)
  })

  test('a text stopped by the time limit is checked again on the next publish', async () => {
    strict.checked = []
    const pipeline = pipelineWith(strict)
    const bundle = [{ path: 'index.html', content: heavyPage }]
    for (let i = 0; i < 2; i++) {
      const violations = await refusal(pipeline.store(bundle, alice))
      assert.deepEqual(
        violations.map((v) => [v.code, v.path]),
        [['CONTENT_TOO_COMPLEX', 'index.html']],
      )
    }
    assert.deepEqual(strict.checked, ['index.html', 'index.html'], 'the outcome of a limit is not remembered')
  })

  test('results are kept per key, least recently used dropped first, and never for text UTF-8 cannot hold', () => {
    const results = new ContentScanResults(2)
    const scan = (text: string, path = 'a.html'): FileScan => ({ path, contentType: 'text/html', file: 0, text, bytes: Buffer.from(text) })
    const [a, b, c] = ['<p>a', '<p>b', '<p>c'].map((text) => results.keyOf('usr_1', scan(text), 50, true))
    assert.notEqual(a, results.keyOf('usr_1', scan('<p>a'), 49, true), 'the limit is part of the key')
    assert.notEqual(a, results.keyOf('usr_1', { ...scan('<p>a'), contentType: 'image/svg+xml' }, 50, true), 'so is the media type')
    assert.notEqual(a, results.keyOf('usr_1', scan('<p>a'), 50, false), 'and whether the facts were gathered')
    assert.equal(a, results.keyOf('usr_1', scan('<p>a'), 50, true))
    const stored: FileScan = { path: 'a.html', contentType: 'text/html', file: 0, hash: createHash('sha256').update('<p>a').digest('hex') }
    assert.equal(results.keyOf('usr_1', stored, 50, true), a, 'a stored file is known by the hash of its bytes, without its text')
    const nothing: ScanOutcome = { found: [], facts: null, forms: [] }
    results.remember(a, nothing)
    results.remember(b!, nothing)
    assert.deepEqual(results.get(a), nothing)
    results.remember(c!, nothing)
    assert.equal(results.size, 2)
    assert.equal(results.get(b!), undefined, 'b was used least recently')

    assert.equal(results.keyOf('usr_1', scan('<p>\ud800'), 50, true), null, 'a lone surrogate has no key')
    assert.equal(results.keyOf('usr_1', scan('<p>\ud800'), 50, true), results.keyOf('usr_1', scan('<p>\udc00'), 50, true))
  })
})
