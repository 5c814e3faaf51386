import assert from 'node:assert/strict'
import { rmSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { checkReadiness, PROBE_TIMEOUT_MS } from '../../src/ops/readiness.ts'
import { useS3Credentials } from '../helpers/instances.ts'
import { freePort } from '../helpers/net.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

/** The S3 store reads the standard AWS variables; without them the SDK would look for credentials elsewhere (slowly). */
const OPS_CREDENTIALS = { credentials: { accessKeyId: 'OPS_TEST', secretAccessKey: 'OPS_TEST' } }

for (const store of STORES) {
  describe(`health and readiness (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    before(async () => {
      server = await startTestServer(store.name)
    })
    after(() => server?.close())

    test('GET /healthz answers 200 {"status":"ok"}, uncached, without a token', async () => {
      const res = await server.api('GET', '/healthz')
      assert.equal(res.status, 200)
      assert.deepEqual(res.body, { status: 'ok' })
      assert.equal(res.headers.get('cache-control'), 'no-store')
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/)
    })

    test('GET /readyz answers 200 when the database and the blob store answer', async () => {
      const res = await server.api('GET', '/readyz')
      assert.equal(res.status, 200, res.text)
      assert.deepEqual(res.body, { status: 'ready', checks: { database: 'ok', blobStore: 'ok' } })
      assert.equal(res.headers.get('cache-control'), 'no-store')
    })

    test('the operations endpoints are not in the OpenAPI document', async () => {
      const doc = (await server.api('GET', '/openapi.json')).body
      for (const path of ['/healthz', '/readyz', '/metrics']) assert.ok(!(path in doc.paths), path)
    })
  })
}

describe('readiness when the blob store fails', () => {
  test('a filesystem store whose folder cannot be written: 503 naming the blob store', async () => {
    const server = await startTestServer('sqlite')
    try {
      // A file where the blob folder should be: no one, root included, can create blobs under it.
      const root = path.join(server.config.dataDir, 'blobs')
      rmSync(root, { recursive: true, force: true })
      writeFileSync(root, 'not a folder')
      const res = await server.api('GET', '/readyz')
      assert.equal(res.status, 503, res.text)
      assert.equal(res.body.status, 'unready')
      assert.equal(res.body.checks.database, 'ok')
      assert.match(res.body.checks.blobStore, /^failed: [A-Z]+$/, 'an error code, not a message with paths in it')
      assert.equal(res.headers.get('cache-control'), 'no-store')
      // Healthy all the same: the process answers.
      assert.equal((await server.api('GET', '/healthz')).status, 200)
    } finally {
      rmSync(path.join(server.config.dataDir, 'blobs'), { force: true })
      await server.close()
    }
  })

  test('an S3 store whose endpoint refuses connections: 503', async () => {
    const port = await freePort()
    const restore = useS3Credentials(OPS_CREDENTIALS)
    const server = await startTestServer('sqlite', s3Env(`http://127.0.0.1:${port}`))
    try {
      const res = await server.api('GET', '/readyz')
      assert.equal(res.status, 503, res.text)
      assert.deepEqual(Object.keys(res.body.checks).sort(), ['blobStore', 'database'])
      assert.equal(res.body.checks.database, 'ok')
      assert.match(res.body.checks.blobStore, /^failed: \S+$/)
    } finally {
      await server.close()
      restore()
    }
  })

  test('an S3 endpoint that accepts connections and never answers: 503 within the deadline, not a hung probe', async () => {
    const sockets = new Set<net.Socket>()
    const silent = net.createServer((socket) => {
      sockets.add(socket)
      socket.on('error', () => {})
    })
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    const restore = useS3Credentials(OPS_CREDENTIALS)
    const server = await startTestServer('sqlite', s3Env(`http://127.0.0.1:${(silent.address() as net.AddressInfo).port}`))
    try {
      const started = Date.now()
      const res = await server.api('GET', '/readyz')
      const took = Date.now() - started
      assert.equal(res.status, 503, res.text)
      assert.deepEqual(res.body.checks, { database: 'ok', blobStore: 'failed: TIMEOUT' })
      assert.ok(took >= PROBE_TIMEOUT_MS - 50 && took < PROBE_TIMEOUT_MS + 3_000, `answered after ${took} ms`)
    } finally {
      // Hang up, so that the store's pending requests (the sweep at start) fail now and the server can close.
      silent.close()
      for (const socket of sockets) socket.destroy()
      await server.close()
      restore()
    }
  })
})

describe('checkReadiness', () => {
  test('runs the probes at once, each under its deadline, and names errors by code or class only', async () => {
    const started = Date.now()
    const result = await checkReadiness(
      {
        fine: () => Promise.resolve('yes'),
        hangs: () => new Promise(() => {}),
        refused: () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED 10.1.2.3:5432'), { code: 'ECONNREFUSED' })),
        named: () => {
          const error = new Error('The bucket secret-bucket does not exist')
          error.name = 'NoSuchBucket'
          return Promise.reject(error)
        },
        plain: () => {
          throw new Error('something at /var/lib/plinth')
        },
      },
      100,
    )
    assert.ok(Date.now() - started < 1_000)
    assert.equal(result.ready, false)
    assert.deepEqual(result.checks, {
      fine: 'ok',
      hangs: 'failed: TIMEOUT',
      refused: 'failed: ECONNREFUSED',
      named: 'failed: NoSuchBucket',
      plain: 'failed: error',
    })
    assert.deepEqual(Object.keys(result.errors).sort(), ['hangs', 'named', 'plain', 'refused'], 'the errors themselves, for the log')
    assert.deepEqual(await checkReadiness({ a: async () => {} }), { ready: true, checks: { a: 'ok' }, errors: {} })
  })
})

function s3Env(endpoint: string): Record<string, string> {
  return { PLINTH_BLOB_STORE: 's3', PLINTH_S3_BUCKET: 'plinth-ops-test', PLINTH_S3_ENDPOINT: endpoint, PLINTH_S3_FORCE_PATH_STYLE: 'true' }
}
