/**
 * Publishing is atomic and content-addressed: identical bytes are stored once, a republish writes
 * no new blob bytes, text gets precompressed variants beside its blob, a publish whose metadata
 * transaction fails leaves no website, version, job or blob row, and concurrent publishes get
 * distinct consecutive version numbers. After every successful publish the served site is
 * exactly the bundle's bytes.
 */

import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { brotliDecompressSync, deflateSync, gunzipSync } from 'node:zlib'
import { type Kysely, sql } from 'kysely'
import { sha256 } from '../helpers/factories.ts'
import { type ApiResponse, bundle, startTestServer, type TestServer } from '../helpers/server.ts'
import { blobStoreFiles } from '../helpers/blob-files.ts'
import { STORES, type StoreName } from '../helpers/stores.ts'

type File = { path: string; content: string; contentEncoding?: 'utf8' | 'base64' }

const decoded = (file: File): Buffer => Buffer.from(file.content, file.contentEncoding === 'base64' ? 'base64' : 'utf8')
const bundleSize = (files: File[]): number => files.reduce((sum, f) => sum + decoded(f).length, 0)

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})
function crc32(bytes: Buffer): number {
  let c = 0xffffffff
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

/**
 * A real PNG (RGB, all black) whose image data is deflated with stored blocks: the file is large
 * and very compressible, so only the content type can keep the service from precompressing it.
 */
function blackPng(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data])
    const length = Buffer.alloc(4)
    length.writeUInt32BE(data.length)
    const crc = Buffer.alloc(4)
    crc.writeUInt32BE(crc32(body))
    return Buffer.concat([length, body, crc])
  }
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr.writeUInt8(8, 8) // bit depth
  ihdr.writeUInt8(2, 9) // colour type RGB
  const raw = Buffer.alloc((width * 3 + 1) * height) // filter byte 0 + black pixels, per row
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { level: 0 })),
    chunk('IEND', Buffer.alloc(0)),
  ])
}

/** A site, index.html first, whose every text file is big enough to be worth precompressing. */
function richBundle(title: string): [File, ...File[]] {
  const paragraphs = Array.from({ length: 60 }, (_, i) => `<p>Paragraph ${i} of ${title}: the quick brown fox jumps over the lazy dog.</p>`).join('\n')
  return [
    {
      path: 'index.html',
      content: `<!doctype html><html><head><meta charset="utf-8"><title>${title} – café ☕</title><link rel="stylesheet" href="css/site.css"></head><body><h1>${title} – café ☕</h1><img src="images/black.png" alt=""><img src="images/logo.svg" alt="">${paragraphs}<script src="js/app.js"></script></body></html>`,
    },
    { path: 'css/site.css', content: Array.from({ length: 40 }, (_, i) => `.item-${i} { margin: ${i}px; padding: ${i}px; color: #333; }`).join('\n') },
    {
      path: 'js/app.js',
      content: Array.from({ length: 40 }, (_, i) => `document.querySelectorAll('.item-${i}').forEach((el) => el.classList.add('ready'))`).join('\n'),
    },
    {
      path: 'images/logo.svg',
      content: `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100">${Array.from({ length: 30 }, (_, i) => `<circle cx="${i}" cy="${i}" r="${i}" fill="#123456"/>`).join('')}</svg>`,
    },
    { path: 'images/black.png', content: blackPng(64, 64).toString('base64'), contentEncoding: 'base64' },
    { path: 'tiny.txt', content: 'small' },
  ]
}

for (const store of STORES) {
  describe(`Atomic, content-addressed publishing (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    let user: { id: string; token: string }
    let blobsDir: string
    let db: Kysely<any>

    const rows = async (table: string, where?: [string, unknown]) => {
      let query = db.selectFrom(table).select((eb) => eb.fn.countAll().as('n'))
      if (where) query = query.where(where[0], '=', where[1])
      return Number((await query.executeTakeFirstOrThrow()).n)
    }
    const footprint = async () => ({
      websites: await rows('websites'),
      versions: await rows('versions'),
      versionFiles: await rows('version_files'),
      blobs: await rows('blobs'),
    })
    /** Compressed variants are made after a publish answers: disk contents are compared once they are. */
    const variantsMade = () => server.server.blobVariants.settled()
    /** The blob files on disk once no compressed variant is being written, so no temp file of one is caught in flight. */
    const settledBlobFiles = async () => {
      await variantsMade()
      return blobStoreFiles(blobsDir)
    }
    const blobBytes = async () => [...(await settledBlobFiles()).values()].reduce((a, b) => a + b, 0)

    const createSite = async (files: File[], extra: Record<string, unknown> = {}): Promise<ApiResponse> => {
      const res = await server.api('POST', '/v1/websites', { token: user.token, body: { category: 'other', files, ...extra } })
      assert.equal(res.status, 201, res.text)
      return res
    }
    const publishVersion = async (websiteId: string, files: File[], extra: Record<string, unknown> = {}): Promise<ApiResponse> => {
      const res = await server.api('POST', `/v1/websites/${websiteId}/versions`, { token: user.token, body: { files, ...extra } })
      assert.equal(res.status, 201, res.text)
      return res
    }

    /** The site host serves exactly the bundle's bytes, file by file, and index.html at "/". */
    const assertServes = async (label: string, files: File[]) => {
      for (const file of files) {
        const res = await server.site(label, `/${file.path}`)
        assert.equal(res.status, 200, `${label}/${file.path}`)
        assert.ok(res.body.equals(decoded(file)), `${label}/${file.path} is served byte for byte`)
      }
      const root = await server.site(label, '/')
      assert.equal(root.status, 200)
      assert.ok(root.body.equals(decoded(files.find((f) => f.path === 'index.html')!)), `${label}/ serves index.html`)
    }

    before(async () => {
      server = await startTestServer(store.name, { PLINTH_PUBLISH_RATE_PER_MINUTE: '1000' })
      user = await server.user()
      blobsDir = path.join(server.config.dataDir, 'blobs')
      db = server.server.db.kysely
    })
    after(() => server?.close())

    test('identical bytes are stored once across versions and sites', async () => {
      const files = richBundle('Shared bytes')
      const hashes = new Set(files.map((f) => sha256(decoded(f))))

      const first = await createSite(files, { name: 'Shared one' })
      await assertServes(first.body.slug, files)
      const afterFirst = await footprint()
      const blobFiles = await settledBlobFiles()
      for (const hash of hashes) {
        assert.ok(blobFiles.has(path.join(hash.slice(0, 2), hash)), `blob ${hash} is stored`)
        assert.equal(await rows('blobs', ['hash', hash]), 1)
      }

      const second = await createSite(files, { name: 'Shared two' })
      await assertServes(second.body.slug, files)
      const third = await publishVersion(first.body.websiteId, files, { message: 'same bytes again' })
      assert.equal(third.body.version, 2)
      await assertServes(first.body.slug, files)

      assert.deepEqual(await settledBlobFiles(), blobFiles, 'no blob file was added or changed')
      assert.deepEqual(
        await footprint(),
        {
          ...afterFirst,
          websites: afterFirst.websites + 1,
          versions: afterFirst.versions + 2,
          versionFiles: afterFirst.versionFiles + 2 * files.length,
        },
        'one more website, two more versions, no more blob rows',
      )

      // Every version points at the same blobs.
      const pointers = await db
        .selectFrom('version_files')
        .select(['version_id', 'path', 'hash'])
        .where('version_id', 'in', [first.body.jobId, second.body.jobId, third.body.jobId])
        .execute()
      const byPath = new Map<string, Set<string>>()
      for (const p of pointers) byPath.set(p.path, (byPath.get(p.path) ?? new Set()).add(p.hash))
      assert.equal(byPath.size, files.length)
      for (const [file, set] of byPath) assert.equal(set.size, 1, `${file} has one hash across the three versions`)
    })

    test('republishing a site unchanged writes no new blob bytes yet creates a new, live version', async () => {
      const files = richBundle('Republish')
      const site = await createSite(files, { name: 'Republish' })
      const bytesBefore = await blobBytes()
      const filesBefore = await settledBlobFiles()
      const before = await footprint()

      const again = await publishVersion(site.body.websiteId, files)
      assert.equal(again.body.version, 2)
      assert.equal(again.body.isCurrent, true)
      assert.equal(again.body.bytesWritten, bundleSize(files), 'bytesWritten is the decoded bundle size, even when nothing new was stored')
      assert.equal(await blobBytes(), bytesBefore, 'no blob bytes were written')
      assert.deepEqual(await settledBlobFiles(), filesBefore)
      assert.deepEqual(await footprint(), { ...before, versions: before.versions + 1, versionFiles: before.versionFiles + files.length })
      const website = await server.api('GET', `/v1/websites/${site.body.websiteId}`, { token: user.token })
      assert.equal(website.body.currentVersionId, again.body.jobId)
      assert.deepEqual(
        website.body.versions.map((v: { version: number }) => v.version),
        [2, 1],
      )
      await assertServes(site.body.slug, files)

      // Changing one file stores exactly that file's blob (and its variants), nothing else.
      const changed = files.map((f) => (f.path === 'css/site.css' ? { ...f, content: `${f.content}\n.extra { color: red; }` } : f))
      const newHash = sha256(decoded(changed.find((f) => f.path === 'css/site.css')!))
      await publishVersion(site.body.websiteId, changed)
      const added = [...(await settledBlobFiles()).keys()].filter((f) => !filesBefore.has(f)).sort()
      const stem = path.join(newHash.slice(0, 2), newHash)
      assert.deepEqual(added, [stem, `${stem}.br`, `${stem}.gz`].sort())
      await assertServes(site.body.slug, changed)
    })

    test('bytesWritten equals the decoded bundle size for createWebsite and createWebsiteVersion', async () => {
      const files = richBundle('Sizes – ünïcödé 🎉')
      const expected = bundleSize(files)
      assert.notEqual(
        expected,
        files.reduce((sum, f) => sum + f.content.length, 0),
        'the test bundle has multi-byte text and base64',
      )
      const site = await createSite(files, { name: 'Sizes' })
      assert.equal(site.body.bytesWritten, expected)
      await assertServes(site.body.slug, files)

      const smaller = bundle('Smaller')
      const version = await publishVersion(site.body.websiteId, smaller)
      assert.equal(version.body.bytesWritten, bundleSize(smaller))
      await assertServes(site.body.slug, smaller)

      const website = await server.api('GET', `/v1/websites/${site.body.websiteId}`, { token: user.token })
      assert.equal(website.body.currentVersion.bytes, bundleSize(smaller))
      const first = website.body.versions.find((v: { version: number }) => v.version === 1)
      assert.deepEqual(
        first.files.map((f: { originalName: string; size: number }) => [f.originalName, f.size]).sort(),
        files.map((f) => [f.path, decoded(f).length]).sort(),
        'each file reports its decoded size',
      )
    })

    test('text files get precompressed .br and .gz variants beside their blob when large enough; PNG images do not', async () => {
      const files = richBundle('Variants')
      const site = await createSite(files, { name: 'Variants' })
      await variantsMade()
      await assertServes(site.body.slug, files)
      const onDisk = await settledBlobFiles()
      const stem = (bytes: Buffer) => {
        const hash = sha256(bytes)
        return { hash, rel: path.join(hash.slice(0, 2), hash) }
      }

      for (const file of files.filter((f) => /\.(html|css|js|svg)$/.test(f.path))) {
        const bytes = decoded(file)
        const { hash, rel } = stem(bytes)
        assert.ok(bytes.length >= 1024, `${file.path} is large`)
        assert.ok(onDisk.has(rel), `${file.path}: identity blob`)
        assert.ok(onDisk.has(`${rel}.br`), `${file.path}: .br variant beside the blob`)
        assert.ok(onDisk.has(`${rel}.gz`), `${file.path}: .gz variant beside the blob`)
        assert.ok(brotliDecompressSync(readFileSync(path.join(blobsDir, `${rel}.br`))).equals(bytes), `${file.path}.br decodes to the file`)
        assert.ok(gunzipSync(readFileSync(path.join(blobsDir, `${rel}.gz`))).equals(bytes), `${file.path}.gz decodes to the file`)
        const row = await db.selectFrom('blobs').selectAll().where('hash', '=', hash).executeTakeFirstOrThrow()
        assert.deepEqual([Number(row.size), Number(row.br_size), Number(row.gzip_size)], [bytes.length, onDisk.get(`${rel}.br`), onDisk.get(`${rel}.gz`)])
      }

      const png = decoded(files.find((f) => f.path === 'images/black.png')!)
      assert.ok(png.length > 10_000, 'the PNG is large')
      assert.ok(deflateSync(png).length < png.length / 10, 'and very compressible')
      const tiny = decoded(files.find((f) => f.path === 'tiny.txt')!)
      for (const [name, bytes] of [
        ['PNG', png],
        ['tiny text', tiny],
      ] as const) {
        const { hash, rel } = stem(bytes)
        assert.ok(onDisk.has(rel), `${name}: identity blob`)
        assert.ok(!onDisk.has(`${rel}.br`) && !onDisk.has(`${rel}.gz`), `${name}: no precompressed variant`)
        const row = await db.selectFrom('blobs').selectAll().where('hash', '=', hash).executeTakeFirstOrThrow()
        assert.deepEqual([row.br_size, row.gzip_size], [null, null])
      }

      // The precompressed variant is what a brotli-capable client gets.
      const html = await server.site(site.body.slug, '/', { headers: { 'accept-encoding': 'br' } })
      assert.equal(html.headers['content-encoding'], 'br')
      assert.ok(brotliDecompressSync(html.body).equals(decoded(files[0])))
      const image = await server.site(site.body.slug, '/images/black.png', { headers: { 'accept-encoding': 'br, gzip' } })
      assert.equal(image.headers['content-encoding'], undefined)
      assert.ok(image.body.equals(png))
    })

    test('a publish whose metadata transaction fails leaves no website, version, job or blob row', async () => {
      // A real, deterministic failure: a trigger makes the last insert of the publish transaction
      // (its version_files rows) fail, after the blobs were written and after the website and
      // version rows were inserted inside the transaction.
      const { install, uninstall } = failingVersionFilesInsert(store.name)

      const existingFiles = bundle('Before the failure')
      const existing = await createSite(existingFiles, { name: 'Survivor' })
      const websiteRow = () => db.selectFrom('websites').selectAll().where('id', '=', existing.body.websiteId).executeTakeFirstOrThrow()
      const existingRowBefore = await websiteRow()
      const newFiles = richBundle('Never stored')
      const newVersionFiles = richBundle('Never stored version')
      assert.equal((await server.site('atomic-fail', '/')).status, 404)
      const before = await footprint()

      for (const statement of install) await statement.execute(db)
      let created: ApiResponse
      let versioned: ApiResponse
      try {
        created = await server.api('POST', '/v1/websites', {
          token: user.token,
          body: { name: 'Atomic', slug: 'atomic-fail', category: 'other', files: newFiles },
        })
        versioned = await server.api('POST', `/v1/websites/${existing.body.websiteId}/versions`, { token: user.token, body: { files: newVersionFiles } })
      } finally {
        for (const statement of uninstall) await statement.execute(db)
      }

      for (const res of [created, versioned]) {
        assert.equal(res.status, 500, res.text)
        assert.match(res.headers.get('content-type') ?? '', /^application\/json/)
        assert.deepEqual(res.body, { error: { code: 'INTERNAL', message: res.body.error.message } })
        assert.doesNotMatch(res.text, /simulated|trigger|version_files|insert|sqlite|postgres/i, 'no SQL or driver text leaks')
      }
      assert.deepEqual(await footprint(), before, 'no website, version, version file or blob row')
      assert.deepEqual(await websiteRow(), existingRowBefore, 'the existing website row is untouched (version counter rolled back)')
      const list = await server.api('GET', '/v1/websites', { token: user.token })
      assert.ok(!list.body.items.some((s: { slug: string }) => s.slug === 'atomic-fail'))
      const versions = await server.api('GET', `/v1/websites/${existing.body.websiteId}/versions`, { token: user.token })
      assert.deepEqual(
        versions.body.versions.map((v: { version: number }) => v.version),
        [1],
      )
      const suggestion = await server.api('GET', '/v1/slugs/suggest?value=atomic-fail', { token: user.token })
      assert.equal(suggestion.body.available, true, 'the slug was not claimed')
      assert.equal((await server.site('atomic-fail', '/')).status, 404)
      await assertServes(existing.body.slug, existingFiles)

      // With the fault gone the very same publishes succeed, as if the failed ones never happened.
      const retried = await createSite(newFiles, { name: 'Atomic', slug: 'atomic-fail' })
      assert.equal(retried.body.slug, 'atomic-fail')
      assert.equal(retried.body.version, 1)
      await assertServes('atomic-fail', newFiles)
      const retriedVersion = await publishVersion(existing.body.websiteId, newVersionFiles)
      assert.equal(retriedVersion.body.version, 2, 'the failed publish did not use up a version number')
      await assertServes(existing.body.slug, newVersionFiles)
    })

    test('a bundle that breaks only a content rule leaves no blob behind: what was stored while its texts were checked is removed', async () => {
      const files = richBundle('Refused late').map((f) =>
        f.path === 'index.html' ? { ...f, content: f.content.replace('</body>', '<iframe src="https://elsewhere.example/"></iframe></body>') } : f,
      )
      assert.ok(files.some((f) => f.content.includes('<iframe')))
      const before = await settledBlobFiles()
      const rowsBefore = await footprint()
      const res = await server.api('POST', '/v1/websites', { token: user.token, body: { category: 'other', files } })
      assert.equal(res.status, 422, res.text)
      assert.deepEqual(
        res.body.error.violations.map((v: { code: string }) => v.code),
        ['IFRAME'],
      )
      assert.deepEqual(await settledBlobFiles(), before, 'no blob file was left behind')
      assert.deepEqual(await footprint(), rowsBefore)
    })

    test('a failed publish leaves no blob bytes behind either', async () => {
      const { install, uninstall } = failingVersionFilesInsert(store.name)
      const before = await settledBlobFiles()
      for (const statement of install) await statement.execute(db)
      try {
        const res = await server.api('POST', '/v1/websites', { token: user.token, body: { category: 'other', files: richBundle('Orphans') } })
        assert.equal(res.status, 500)
      } finally {
        for (const statement of uninstall) await statement.execute(db)
      }
      assert.deepEqual(await settledBlobFiles(), before, 'no blob file was left behind')
    })

    test('publishes racing for the same explicit slug: one wins, the others get 409 SLUG_TAKEN and store no rows', async () => {
      const racers = Array.from({ length: 5 }, (_, i) => richBundle(`Racer ${i}`))
      const before = await footprint()
      const storedBefore = new Set((await db.selectFrom('blobs').select('hash').execute()).map((r) => r.hash as string))
      const results = await Promise.all(
        racers.map((files) => server.api('POST', '/v1/websites', { token: user.token, body: { slug: 'race-slug', category: 'event', files } })),
      )
      const winners = results.filter((r) => r.status === 201)
      assert.equal(winners.length, 1, results.map((r) => `${r.status} ${r.text.slice(0, 120)}`).join('\n'))
      for (const loser of results.filter((r) => r.status !== 201)) {
        assert.equal(loser.status, 409, loser.text)
        assert.equal(loser.body.error.code, 'SLUG_TAKEN')
        assert.equal(typeof loser.body.error.fields.slug, 'string')
      }
      const winnerFiles = racers.find((_files, i) => results[i]?.status === 201)
      assert.ok(winnerFiles)
      const winnerNew = new Set(winnerFiles.map((f) => sha256(decoded(f))).filter((h) => !storedBefore.has(h)))
      assert.deepEqual(
        await footprint(),
        {
          websites: before.websites + 1,
          versions: before.versions + 1,
          versionFiles: before.versionFiles + winnerFiles.length,
          blobs: before.blobs + winnerNew.size,
        },
        'only the winner left rows',
      )
      for (const [i, files] of racers.entries()) {
        if (files === winnerFiles) continue
        const ownHash = sha256(decoded(files[0]))
        assert.equal(await rows('blobs', ['hash', ownHash]), 0, `racer ${i}'s index.html has no blob row`)
      }
      await assertServes('race-slug', winnerFiles)
    })

    test('concurrent publishes to one site get distinct consecutive versions 2..11 and exactly one live version', async () => {
      const site = await createSite(bundle('Concurrent v1'), { name: 'Concurrent' })
      // Every bundle has its own page and a shared file that is not stored yet, so the racing
      // publishes also race to write the same new blob.
      const shared = { path: 'shared.txt', content: `shared by every racer ${site.body.websiteId}\n`.repeat(50) }
      const bundles = Array.from({ length: 10 }, (_, i) => [...bundle(`Concurrent ${i}`), shared])
      const results = await Promise.all(bundles.map((files, i) => publishVersion(site.body.websiteId, files, { message: `racer ${i}` })))

      const numbers = results.map((r) => r.body.version as number)
      assert.deepEqual(
        [...numbers].sort((a, b) => a - b),
        [2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
      )
      assert.equal(new Set(results.map((r) => r.body.jobId)).size, 10, 'distinct job ids')
      assert.ok(results.every((r) => r.body.isCurrent === true))

      const website = await server.api('GET', `/v1/websites/${site.body.websiteId}`, { token: user.token })
      assert.equal(website.status, 200)
      assert.deepEqual(
        website.body.versions.map((v: { version: number }) => v.version),
        [11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1],
      )
      const live = website.body.versions.filter((v: { isCurrent: boolean }) => v.isCurrent)
      assert.equal(live.length, 1, 'exactly one live version')
      assert.equal(live[0].id, website.body.currentVersionId)
      assert.equal(live[0].version, 11, 'the last version to commit (the highest number) is live')
      const listed = await server.api('GET', `/v1/websites/${site.body.websiteId}/versions`, { token: user.token })
      assert.deepEqual(
        listed.body.versions.map((v: { version: number }) => v.version),
        [11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1],
      )

      const liveBundle = bundles.find((_files, i) => results[i]?.body.jobId === website.body.currentVersionId)
      assert.ok(liveBundle, 'the live version is one of those published')
      await assertServes(site.body.slug, liveBundle)
      for (const [i, files] of bundles.entries()) await assertServes(`${site.body.slug}--v${results[i]?.body.version}`, files)

      assert.equal(await rows('blobs', ['hash', sha256(decoded(shared))]), 1, 'the shared blob has one row')
      assert.deepEqual(
        [...(await settledBlobFiles()).keys()].filter((f) => f.endsWith('.tmp')),
        [],
        'no temp file is left',
      )
    })

    test('a version published with promote false is stored and served at its preview URL at once, while the live site keeps its bytes', async () => {
      const v1 = bundle('Live one')
      const site = await createSite(v1, { name: 'Review' })
      // A reviewer opens the preview URL before the version exists.
      assert.equal((await server.site(`${site.body.slug}--v2`, '/')).status, 404)
      const v2 = [...bundle('Under review'), { path: 'new.txt', content: 'new in v2' }]
      const res = await publishVersion(site.body.websiteId, v2, { promote: false })
      assert.equal(res.body.isCurrent, false)
      assert.equal(res.body.version, 2)
      await assertServes(site.body.slug, v1)
      assert.equal((await server.site(site.body.slug, '/new.txt')).status, 404)
      await assertServes(`${site.body.slug}--v2`, v2)
    })
  })
}

/** SQL that makes every insert into version_files fail (the last step of a publish transaction), and undoes it. */
function failingVersionFilesInsert(storeName: StoreName) {
  return storeName === 'sqlite'
    ? {
        install: [sql`CREATE TRIGGER plinth_test_fail BEFORE INSERT ON version_files BEGIN SELECT RAISE(ABORT, 'simulated metadata failure'); END`],
        uninstall: [sql`DROP TRIGGER plinth_test_fail`],
      }
    : {
        install: [
          sql`CREATE FUNCTION plinth_test_fail() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'simulated metadata failure'; END $$`,
          sql`CREATE TRIGGER plinth_test_fail BEFORE INSERT ON version_files FOR EACH ROW EXECUTE FUNCTION plinth_test_fail()`,
        ],
        uninstall: [sql`DROP TRIGGER plinth_test_fail ON version_files`, sql`DROP FUNCTION plinth_test_fail()`],
      }
}
