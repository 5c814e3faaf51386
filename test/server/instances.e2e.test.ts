/**
 * Two instances on one PostgreSQL schema and one S3 bucket behave as one service: what is changed
 * through one (a publish, a promotion, an entry, a draft, a revoked token, a deleted site) is what
 * the other serves, shared limits are counted together, a lost change listener only delays
 * propagation by about a second, blobs live in the bucket and nowhere else, and the orphan sweep
 * on the bucket never takes a blob that is referenced or being published through the other
 * instance.
 *
 * Propagation is eventual (a NOTIFY, or the resync while a listener is away), so reads on the other
 * instance are polled up to a generous deadline; the delays seen are reported as diagnostics, not
 * asserted. Both instances run in this process on their own data dirs, ports and database pools.
 */
import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { readdirSync, utimesSync } from 'node:fs'
import { performance } from 'node:perf_hooks'
import { after, before, describe, type TestContext, test } from 'node:test'
import { brotliDecompressSync } from 'node:zlib'
import { HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3'
import pg from 'pg'
import { SIGN_IN_FAILURES_PER_ACCOUNT } from '../../src/core/limits.ts'
import { draftLabel } from '../../src/core/site-address.ts'
import { siteWithCollection } from '../helpers/content.ts'
import { type Instance, s3ObjectFile, startInstance, useS3Credentials } from '../helpers/instances.ts'
import { startTestS3, type TestS3 } from '../helpers/s3.ts'
import { bundle, type TestServer } from '../helpers/server.ts'
import { createStore } from '../helpers/stores.ts'
import { uniqueEmail, WebVisitor } from '../helpers/web.ts'

const skip = process.env.DATABASE_URL ? false : 'DATABASE_URL is not set: PostgreSQL run skipped'

/** Far beyond the promised second: a failure here is a change that never arrives, not a slow one. */
const DEADLINE_MS = 5000
/** Small, so the limit is reached in a few publishes; each test publishes as users of its own. */
const PUBLISH_RATE = 4
const PASSWORD = 'correct horse battery'
const TWO_HOURS_AGO = new Date(Date.now() - 2 * 60 * 60 * 1000)

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex')
const keyOf = (hash: string, suffix = '') => `${hash.slice(0, 2)}/${hash.slice(2, 4)}/${hash}${suffix}`
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Polls `probe` until it answers true, failing after the deadline with the last observation; the
 * time it took is returned (and reported by the caller, never asserted).
 */
async function until(what: string, probe: () => Promise<true | string>, deadlineMs = DEADLINE_MS): Promise<number> {
  const started = performance.now()
  for (;;) {
    const answer = await probe()
    if (answer === true) return performance.now() - started
    if (performance.now() - started > deadlineMs) assert.fail(`${what}: not seen within ${deadlineMs} ms (last seen: ${answer})`)
    await sleep(20)
  }
}

/** A probe that B serves `text` on a path of a site (and not `gone`, when given). */
const serves = (server: TestServer, label: string, path: string, text: string, gone?: string) => async (): Promise<true | string> => {
  const page = await server.site(label, path)
  const body = page.body.toString()
  if (page.status === 200 && body.includes(text) && (gone === undefined || !body.includes(gone))) return true
  return `${page.status} ${body.slice(0, 120)}`
}

const report = (t: TestContext, what: string, ms: number) => t.diagnostic(`${what}: ${ms.toFixed(0)} ms`)

describe('two instances on one database and one bucket (postgres)', { skip }, () => {
  let s3: TestS3
  let raw: S3Client
  let admin: pg.Client
  let restoreCredentials = () => {}
  let a: Instance
  let b: Instance
  let A: TestServer
  let B: TestServer

  before(async () => {
    s3 = await startTestS3(`plinth-scale-${Math.random().toString(36).slice(2, 10)}`)
    restoreCredentials = useS3Credentials(s3)
    raw = new S3Client({ endpoint: s3.endpoint, region: s3.region, credentials: s3.credentials, forcePathStyle: true })
    // A fresh schema, then both instances started at once: both run the migrations' check, and
    // Kysely's advisory lock lets one of them apply each migration.
    const store = await createStore('postgres')
    await store.dispose() // its data dir: the instances have their own
    const databaseUrl = store.databaseUrl!
    const env = { PLINTH_PUBLISH_RATE_PER_MINUTE: String(PUBLISH_RATE) }
    ;[a, b] = await Promise.all([startInstance('a', databaseUrl, s3, env), startInstance('b', databaseUrl, s3, env)])
    A = a.server
    B = b.server
    admin = new pg.Client({ connectionString: databaseUrl, application_name: 'plinth-scale-out-test' })
    await admin.connect()
  })

  after(async () => {
    await admin?.end()
    await A?.close()
    await B?.close()
    raw?.destroy()
    restoreCredentials()
    await s3?.close()
  })

  /** A user with a token, made through A (B sees the same database). */
  const user = () => A.user()

  async function publishSite(server: TestServer, token: string, slug: string, title: string, extra: Parameters<typeof bundle>[1] = []) {
    const res = await server.api('POST', '/v1/websites', { token, body: { name: slug, slug, category: 'other', files: bundle(title, extra) } })
    assert.equal(res.status, 201, res.text)
    return res.body as { websiteId: string; jobId: string; version: number }
  }

  async function publishVersion(server: TestServer, token: string, websiteId: string, title: string, promote = true) {
    const res = await server.api('POST', `/v1/websites/${websiteId}/versions`, { token, body: { files: bundle(title), promote } })
    assert.equal(res.status, 201, res.text)
    return res.body as { jobId: string; version: number }
  }

  async function objectExists(key: string): Promise<boolean> {
    try {
      await raw.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: key }))
      return true
    } catch (error) {
      if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return false
      throw error
    }
  }

  async function bucketKeys(): Promise<Set<string>> {
    const keys = new Set<string>()
    let token: string | undefined
    do {
      const page = await raw.send(new ListObjectsV2Command({ Bucket: s3.bucket, ContinuationToken: token }))
      for (const object of page.Contents ?? []) if (object.Key) keys.add(object.Key)
      token = page.IsTruncated ? page.NextContinuationToken : undefined
    } while (token)
    return keys
  }

  /** Puts a blob's file into the bucket as a crashed publish would leave it, last modified two hours ago. */
  async function leaveOrphan(hash: string, bytes: Buffer, suffix = ''): Promise<string> {
    const key = keyOf(hash, suffix)
    await raw.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: bytes }))
    age(key)
    return key
  }

  const age = (key: string) => utimesSync(s3ObjectFile(s3, key), TWO_HOURS_AGO, TWO_HOURS_AGO)

  /** The LISTEN backends of one instance: its change listener. */
  async function listenerPids(instance: Instance): Promise<number[]> {
    const { rows } = await admin.query<{ pid: number }>(
      `select pid from pg_stat_activity where application_name = $1 and query ilike 'LISTEN%' and datname = current_database()`,
      [instance.applicationName],
    )
    return rows.map((r) => r.pid)
  }

  test('both started at once on a fresh schema, and each migration ran exactly once', async () => {
    const { rows } = await admin.query<{ name: string; runs: number }>('select name, count(*)::int as runs from kysely_migration group by name order by name')
    const migrations = readdirSync(new URL('../../src/db/migrations/', import.meta.url)).filter((f) => /^\d{4}_.*\.ts$/.test(f))
    assert.deepEqual(
      rows.map((r) => r.name),
      migrations.map((f) => f.replace(/\.ts$/, '')).sort(),
    )
    for (const row of rows) assert.equal(row.runs, 1, `${row.name} recorded ${row.runs} times`)
    for (const server of [A, B]) assert.equal((await server.api('GET', '/openapi.json')).status, 200)
  })

  test('a publish through A is served by B', async (t) => {
    const { token } = await user()
    const site = await publishSite(A, token, 'across', 'First through A')
    report(t, 'a new site published through A, first served by B after', await until('B serves version 1', serves(B, 'across', '/', 'First through A')))
    // B has version 1 cached now; version 2 must replace it there.
    await publishVersion(A, token, site.websiteId, 'Second through A')
    report(t, 'version 2 published through A, served by B after', await until('B serves version 2', serves(B, 'across', '/', 'Second through A')))
    assert.equal((await B.site('across', '/style.css')).status, 200)
  })

  test('a promotion and a rollback through A are served by B', async (t) => {
    const { token } = await user()
    const site = await publishSite(A, token, 'promoted', 'Version one')
    await until('B serves version 1', serves(B, 'promoted', '/', 'Version one'))
    const second = await publishVersion(A, token, site.websiteId, 'Version two', false)
    await until('B previews version 2', serves(B, `promoted--v${second.version}`, '/', 'Version two'))
    assert.match((await B.site('promoted', '/')).body.toString(), /Version one/, 'an unpromoted version is not live on B')

    const promote = await A.api('POST', `/v1/websites/${site.websiteId}/versions/${second.jobId}/promote`, { token })
    assert.equal(promote.status, 200, promote.text)
    report(t, 'promotion through A, served by B after', await until('B serves the promoted version', serves(B, 'promoted', '/', 'Version two')))

    const rollback = await A.api('POST', `/v1/websites/${site.websiteId}/versions/${site.version}/promote`, { token })
    assert.equal(rollback.status, 200, rollback.text)
    report(t, 'rollback through A, served by B after', await until('B serves version 1 again', serves(B, 'promoted', '/', 'Version one')))
  })

  test("an entry written, changed and deleted through A is on B's entry page", async (t) => {
    const { user: owner, base, websiteId } = await siteWithCollection(A)
    const slug = (await A.api('GET', `/v1/websites/${websiteId}`, { token: owner.token })).body.slug as string
    const put = (title: string) => A.api('PUT', `${base}/entries/hello`, { token: owner.token, body: { data: { title } } })
    assert.equal((await put('Written on A')).status, 201)
    report(t, 'a new entry, on B after', await until('B shows the entry', serves(B, slug, '/posts-hello', 'Written on A')))
    assert.equal((await put('Changed on A')).status, 200)
    report(t, 'a changed entry, on B after', await until('B shows the change', serves(B, slug, '/posts-hello', 'Changed on A', 'Written on A')))

    const deleted = await A.api('DELETE', `${base}/entries/hello`, { token: owner.token })
    assert.equal(deleted.status, 204, deleted.text)
    const gone = async () => {
      const page = await B.site(slug, '/posts-hello')
      return page.status === 404 || `${page.status}`
    }
    report(t, 'a deleted entry, 404 on B after', await until('B drops the entry', gone))
  })

  test("a draft written, edited and discarded through A is on B's preview host", async (t) => {
    const { token } = await user()
    const site = await publishSite(A, token, 'drafted', 'Live page')
    const created = await A.api('POST', `/v1/websites/${site.websiteId}/drafts`, { token })
    assert.equal(created.status, 201, created.text)
    const label = draftLabel('drafted', created.body.draftId)
    const draft = (method: string, suffix: string, body?: unknown) =>
      A.api(method, `/v1/websites/${site.websiteId}/drafts/${created.body.draftId}${suffix}`, { token, ...(body === undefined ? {} : { body }) })
    report(t, 'a new draft, previewed on B after', await until('B previews the draft', serves(B, label, '/', 'Live page')))
    // B has the draft cached now; each change must replace it there.
    assert.equal((await draft('PUT', '/files/index.html', { content: bundle('Written on A')[0].content })).status, 200)
    report(t, 'a draft write, on B after', await until('B shows the write', serves(B, label, '/', 'Written on A')))
    assert.equal((await draft('PATCH', '/files/index.html', { edits: [{ oldText: '<h1>Written on A', newText: '<h1>Edited on A' }] })).status, 200)
    report(t, 'a draft edit, on B after', await until('B shows the edit', serves(B, label, '/', 'Edited on A')))
    assert.match((await B.site('drafted', '/')).body.toString(), /Live page/, 'the live site is left alone')

    assert.equal((await draft('DELETE', '')).status, 204)
    const gone = async () => {
      const page = await B.site(label, '/')
      return page.status === 404 || `${page.status}`
    }
    report(t, 'a discarded draft, 404 on B after', await until('B drops the draft', gone))
  })

  test('a token revoked through A is refused by B at once', async () => {
    const address = uniqueEmail('revoke')
    const person = await A.server.services.users.create({ email: address, password: PASSWORD })
    const visitor = new WebVisitor(A)
    assert.equal((await visitor.signIn(address)).status, 303)
    const token = await visitor.mintToken('across instances')
    assert.equal((await B.api('GET', '/v1/websites', { token })).status, 200, 'B accepts a token minted on A')

    const [row] = await A.server.services.tokens.list(person.id)
    assert.ok(row, 'the token minted on A is listed')
    const revoked = await visitor.submit('/mcp', `/mcp/tokens/${row.id}/revoke`, {})
    assert.equal(revoked.status, 303, revoked.text)
    // No polling: the token is looked up in the database on every request.
    const refused = await B.api('GET', '/v1/websites', { token })
    assert.equal(refused.status, 401, refused.text)
    assert.equal((await A.api('GET', '/v1/websites', { token })).status, 401)
  })

  test('a site deleted through A is 404 on B', async (t) => {
    const { token } = await user()
    const site = await publishSite(A, token, 'doomed', 'Soon gone')
    await until('B serves the site', serves(B, 'doomed', '/', 'Soon gone'))
    const deleted = await A.api('DELETE', `/v1/websites/${site.websiteId}`, { token })
    assert.equal(deleted.status, 204, deleted.text)
    const gone = async () => {
      const page = await B.site('doomed', '/')
      return page.status === 404 || `${page.status}`
    }
    report(t, 'deletion through A, 404 on B after', await until('B stops serving the site', gone))
    assert.equal((await B.site('doomed', '/style.css')).status, 404)
    assert.equal((await B.api('GET', `/v1/websites/${site.websiteId}`, { token })).status, 404)
  })

  test('the publish rate limit counts publishes through both instances together', async () => {
    const { token } = await user()
    const site = await publishSite(A, token, 'limited', 'Publish 1')
    const through = [B, A, B]
    for (let i = 0; i < PUBLISH_RATE - 1; i++) await publishVersion(through[i % through.length]!, token, site.websiteId, `Publish ${i + 2}`)
    // Neither instance has seen more than half the limit itself; together they reached it.
    for (const [name, server] of [
      ['A', A],
      ['B', B],
    ] as const) {
      const over = await server.api('POST', `/v1/websites/${site.websiteId}/versions`, { token, body: { files: bundle('One too many') } })
      assert.equal(over.status, 429, `${name}: ${over.text}`)
      assert.equal(over.body.error.code, 'RATE_LIMITED')
      assert.ok(Number(over.headers.get('retry-after')) > 0)
    }
  })

  test('failed sign-ins on A and on B are counted together', async () => {
    const address = uniqueEmail('throttled')
    await A.server.services.users.create({ email: address, password: PASSWORD })
    const visitors = [new WebVisitor(A), new WebVisitor(B)]
    for (let i = 0; i < SIGN_IN_FAILURES_PER_ACCOUNT; i++) {
      assert.equal((await visitors[i % 2]!.signIn(address, `wrong ${i}`)).status, 401, `failure ${i + 1}`)
    }
    // Each instance saw fewer failures than the limit; the account is throttled on both.
    for (const visitor of visitors) {
      const blocked = await visitor.signIn(address)
      assert.equal(blocked.status, 429, 'even the right password waits')
      assert.ok(Number(blocked.headers.get('retry-after')) > 0)
    }
  })

  test("B keeps up when its change listener's connection is lost, and listens again", async (t) => {
    const { token } = await user()
    const site = await publishSite(A, token, 'unheard', 'Before the loss')
    await until('B serves version 1', serves(B, 'unheard', '/', 'Before the loss'))

    const [lost, ...others] = await listenerPids(b)
    assert.ok(lost && others.length === 0, `B has one listener backend (found ${[lost, ...others].join(', ')})`)
    const aListener = await listenerPids(a)
    const { rows } = await admin.query<{ done: boolean }>('select pg_terminate_backend($1) as done', [lost])
    assert.equal(rows[0]?.done, true)

    // B drops its caches when it sees the loss; it caches version 1 again here, so only the
    // resync that follows (every cache dropped every second until the listener is back) can
    // bring it a version published while it hears nothing.
    await sleep(100)
    assert.match((await B.site('unheard', '/')).body.toString(), /Before the loss/)
    await publishVersion(A, token, site.websiteId, 'While B was deaf')
    report(
      t,
      'published through A while B listened to nothing, served by B after',
      await until('B serves version 2', serves(B, 'unheard', '/', 'While B was deaf')),
    )

    const back = async () => {
      const pids = await listenerPids(b)
      return (pids.length === 1 && pids[0] !== lost) || `listener backends: ${pids.join(', ') || 'none'}`
    }
    report(t, 'B listening again after', await until('B listens again', back))
    assert.deepEqual(await listenerPids(a), aListener, "A's listener was left alone")

    await publishVersion(A, token, site.websiteId, 'Heard again')
    report(t, 'published through A after B listened again, served by B after', await until('B serves version 3', serves(B, 'unheard', '/', 'Heard again')))
  })

  test('blobs and their compressed variants are in the bucket; nothing is written under either data dir', async () => {
    const { token } = await user()
    const css = `/* ${randomBytes(16).toString('hex')} */\n${'main { margin: 0 auto; max-width: 40rem; }\n'.repeat(100)}`
    await publishSite(A, token, 'in-bucket', 'Stored in the bucket', [{ path: 'big.css', content: css }])
    await A.server.blobVariants.settled()
    const hash = sha256(css)
    const keys = await bucketKeys()
    for (const suffix of ['', '.br', '.gz']) assert.ok(keys.has(keyOf(hash, suffix)), `${keyOf(hash, suffix)} is in the bucket`)
    const html = bundle('Stored in the bucket')[0].content
    assert.ok(keys.has(keyOf(sha256(html))), 'the page is in the bucket')

    // B reads what A wrote, variants included.
    const br = await B.site('in-bucket', '/big.css', { headers: { 'accept-encoding': 'br' } })
    assert.equal(br.status, 200)
    assert.equal(br.headers['content-encoding'], 'br')
    assert.equal(brotliDecompressSync(br.body).toString(), css)

    for (const instance of [a, b]) assert.deepEqual(readdirSync(instance.dataDir), [], `${instance.dataDir} stays empty`)
  })

  test('the sweep on the bucket removes an old orphan and keeps referenced and young blobs', async () => {
    const { token } = await user()
    const css = `/* ${randomBytes(16).toString('hex')} */\n${'p { line-height: 1.5; }\n'.repeat(60)}`
    const hash = sha256(css)
    await publishSite(A, token, 'swept', 'Kept', [{ path: 'kept.css', content: css }])
    await A.server.blobVariants.settled()
    // Referenced and old: kept whatever its age.
    const referenced = [...(await bucketKeys())].filter((key) => key.includes(hash))
    assert.ok(referenced.length >= 2, `the blob and its variants: ${referenced.join(', ')}`)
    for (const key of referenced) age(key)

    const orphanBytes = randomBytes(3000)
    const orphanHash = sha256(orphanBytes)
    const orphan = [await leaveOrphan(orphanHash, orphanBytes), await leaveOrphan(orphanHash, orphanBytes.subarray(0, 1000), '.br')]
    const youngBytes = randomBytes(100)
    const young = keyOf(sha256(youngBytes))
    await raw.send(new PutObjectCommand({ Bucket: s3.bucket, Key: young, Body: youngBytes }))

    const result = await B.server.sweepBlobs()
    assert.ok(result.orphanBlobs >= 1 && result.orphanFiles >= 2, JSON.stringify(result))
    for (const key of orphan) assert.equal(await objectExists(key), false, `${key} of the orphan is gone`)
    for (const key of [...referenced, young]) assert.equal(await objectExists(key), true, `${key} is kept`)
    for (const server of [A, B]) {
      const page = await server.site('swept', '/kept.css')
      assert.equal(page.status, 200)
      assert.equal(page.body.toString(), css)
    }
  })

  /**
   * The sweep checks an object's age (HEAD) and then deletes it; a DELETE that reaches the bucket
   * after the publish uploaded the bytes again, committed and confirmed them would take the blob
   * of a committed version. The sweep reads the bytes first and puts them back when a reference
   * has appeared by the time the DELETE answered (blobs/blob-removal.ts).
   */
  test('a publish through B of the same bytes as an old orphan, while A sweeps, keeps its blob', async () => {
    for (let round = 0; round < 5; round++) {
      const { token } = await user()
      const content = `/* ${randomBytes(16).toString('hex')} */\n${'p { margin: 0 auto; }\n'.repeat(40)}`
      const key = await leaveOrphan(sha256(content), Buffer.from(content))
      const slug = `sweep-race-${round}`
      await Promise.all([
        publishSite(B, token, slug, 'Race', [{ path: 'race.css', content }]),
        A.server.sweepBlobs(),
        sleep(round * 5).then(() => A.server.sweepBlobs()),
      ])
      await B.server.blobVariants.settled()
      await A.server.sweepBlobs()
      assert.equal(await objectExists(key), true, `round ${round}: the published blob is in the bucket`)
      for (const server of [A, B]) {
        const page = await server.site(slug, '/race.css')
        assert.equal(page.status, 200, `round ${round}`)
        assert.equal(page.body.toString(), content)
      }
    }
  })

  test('after all of the above, both data dirs are still empty', () => {
    for (const instance of [a, b]) assert.deepEqual(readdirSync(instance.dataDir), [], `${instance.dataDir} stays empty`)
  })
})
