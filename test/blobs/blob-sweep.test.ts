/**
 * The blob sweep: temp files and blobs nothing refers to, left by a crash, are removed at start
 * and on demand; referenced blobs, young ones and one a publish in flight claims are kept.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { loadConfig } from '../../src/config.ts'
import { createLogger } from '../../src/log.ts'
import { startServer } from '../../src/server.ts'
import { createSite, sha256 } from '../helpers/factories.ts'
import { BASE_URL, bundle, SITE_DOMAIN, startTestServer, TestServer } from '../helpers/server.ts'
import { createStore, STORES } from '../helpers/stores.ts'

const TWO_HOURS_AGO = new Date(Date.now() - 2 * 60 * 60 * 1000)

/** The path of a blob file (or its variant) under a data dir, as the filesystem store lays it out. */
const blobFile = (dataDir: string, hash: string, suffix = '') => path.join(dataDir, 'blobs', hash.slice(0, 2), hash + suffix)

/** Writes a file as a crash would leave it, last modified two hours ago. */
function leave(file: string, bytes: Buffer | string, when = TWO_HOURS_AGO): string {
  mkdirSync(path.dirname(file), { recursive: true })
  writeFileSync(file, bytes)
  utimesSync(file, when, when)
  return file
}

/** An orphan blob (identity and a .br variant) and a temp file, old enough to sweep. */
function leaveCrashDebris(dataDir: string) {
  const bytes = randomBytes(3000)
  const hash = sha256(bytes)
  const orphan = leave(blobFile(dataDir, hash), bytes)
  const variant = leave(blobFile(dataDir, hash, '.br'), bytes.subarray(0, 1000))
  const temp = leave(`${blobFile(dataDir, sha256(randomBytes(8)))}.0a1b2c3d4e5f.tmp`, randomBytes(500))
  return { orphan, variant, temp }
}

for (const store of STORES) {
  describe(`blob sweep (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    before(async () => {
      server = await startTestServer(store.name)
    })
    after(() => server?.close())

    async function publish(slug: string, files: Array<{ path: string; content: string; contentEncoding?: 'utf8' | 'base64' }>) {
      return createSite(server, { name: slug, slug, files })
    }

    test('removes old temp files and unreferenced blobs; keeps referenced, young and claimed ones', async () => {
      const dataDir = server.store.dataDir
      const css = `body { color: #${randomBytes(3).toString('hex')}; }`
      await publish('sweep-kept', bundle('Kept', [{ path: 'extra.css', content: css }]))
      // A referenced blob, old: kept whatever its age.
      const referenced = blobFile(dataDir, sha256(Buffer.from(css)))
      assert.ok(existsSync(referenced))
      utimesSync(referenced, TWO_HOURS_AGO, TWO_HOURS_AGO)

      const debris = leaveCrashDebris(dataDir)
      const youngBytes = randomBytes(100)
      const young = leave(blobFile(dataDir, sha256(youngBytes)), youngBytes, new Date())
      const youngTemp = leave(`${blobFile(dataDir, sha256(randomBytes(8)))}.ffffffffffff.tmp`, 'x', new Date())

      const result = await server.server.sweepBlobs()
      assert.ok(result.orphanBlobs >= 1 && result.orphanFiles >= 2, JSON.stringify(result))
      assert.ok(result.tempFiles >= 1 && result.tempBytes >= 500, JSON.stringify(result))
      for (const gone of [debris.orphan, debris.variant, debris.temp]) assert.equal(existsSync(gone), false, gone)
      for (const kept of [referenced, young, youngTemp]) assert.equal(existsSync(kept), true, kept)

      const page = await server.site('sweep-kept', '/extra.css')
      assert.equal(page.status, 200)
      assert.equal(page.body.toString(), css)
    })

    test('a publish of the same bytes as an old orphan, concurrent with sweeps, keeps its blobs', async () => {
      const dataDir = server.store.dataDir
      for (let round = 0; round < 5; round++) {
        const content = `/* ${randomBytes(16).toString('hex')} */\n${'p { margin: 0 auto; }\n'.repeat(40)}`
        const hash = sha256(Buffer.from(content))
        // The same bytes, orphaned long ago by a crashed publish.
        leave(blobFile(dataDir, hash), content)
        const slug = `sweep-race-${round}`
        const [published] = await Promise.all([
          publish(slug, bundle('Race', [{ path: 'race.css', content }])),
          server.server.sweepBlobs(),
          new Promise((resolve) => setTimeout(resolve, round)).then(() => server.server.sweepBlobs()),
        ])
        assert.ok(published.websiteId)
        await server.server.sweepBlobs()
        assert.ok(existsSync(blobFile(dataDir, hash)), `round ${round}: the published blob is on disk`)
        const page = await server.site(slug, '/race.css')
        assert.equal(page.status, 200)
        assert.equal(page.body.toString(), content)
      }
    })
  })

  test(`at start, what a crash left behind is swept (${store.name})`, { skip: store.skip }, async () => {
    const testStore = await createStore(store.name)
    const debris = leaveCrashDebris(testStore.dataDir)
    const config = loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      PLINTH_DATA_DIR: testStore.dataDir,
      PLINTH_BASE_URL: BASE_URL,
      PLINTH_SITE_DOMAIN: SITE_DOMAIN,
      PLINTH_LOG_LEVEL: 'silent',
      ...(testStore.databaseUrl ? { DATABASE_URL: testStore.databaseUrl } : {}),
    })
    const running = await startServer(config, createLogger('silent'))
    try {
      for (let i = 0; i < 100 && Object.values(debris).some((f) => existsSync(f)); i++) await new Promise((resolve) => setTimeout(resolve, 50))
      for (const gone of Object.values(debris)) assert.equal(existsSync(gone), false, gone)
    } finally {
      await running.close()
      await testStore.dispose()
    }
  })
}
