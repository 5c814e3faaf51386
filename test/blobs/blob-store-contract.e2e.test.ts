/**
 * What every BlobStore promises (src/blobs/blob-store.ts), checked against each implementation:
 * the filesystem store in a temp dir, and the S3 store against s3rver on loopback. Then what only
 * the S3 store has to get right: retrying a server that answers 503, telling a 404 from a failure,
 * and never uploading bytes the bucket holds already.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3'
import type { BlobEncoding, BlobFile, BlobStore } from '../../src/blobs/blob-store.ts'
import { FsBlobStore } from '../../src/blobs/fs-blob-store.ts'
import { S3_REQUEST_ATTEMPTS, S3BlobStore } from '../../src/blobs/s3-blob-store.ts'
import { sha256 } from '../helpers/factories.ts'
import { startTestS3, type TestS3 } from '../helpers/s3.ts'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Random identity bytes with their hash, and two distinct stand-ins for the variants. */
function blob(size = 2000) {
  const bytes = randomBytes(size)
  return { hash: sha256(bytes), bytes, br: randomBytes(Math.ceil(size / 3)), gzip: randomBytes(Math.ceil(size / 2)) }
}

/** The listed files of one hash, by encoding. */
async function listed(store: BlobStore, hash: string): Promise<Map<BlobEncoding | null, BlobFile>> {
  const files = new Map<BlobEncoding | null, BlobFile>()
  for await (const file of store.list()) {
    if (file.hash !== hash) continue
    assert.equal(files.has(file.encoding), false, `${file.name} listed twice`)
    files.set(file.encoding, file)
  }
  return files
}

interface Subject {
  store: BlobStore
  close(): void | Promise<void>
}

interface ContractOptions {
  /**
   * How long to wait before putting stored bytes again, so that the touch is visible in the
   * store's timestamps: S3 has whole seconds, and a server whose self-copy keeps LastModified
   * (s3rver) is written anew only once the object is out of the store's same-second window (2 s).
   */
  touchDelayMs: number
}

function blobStoreContract(name: string, open: () => Subject | Promise<Subject>, options: ContractOptions) {
  describe(`blob store contract (${name})`, () => {
    let subject: Subject
    let store: BlobStore
    before(async () => {
      subject = await open()
      store = subject.store
    })
    after(() => subject?.close())

    test('identity bytes and both variants round-trip', async () => {
      const b = blob()
      await store.put(b.hash, b.br, 'br')
      await store.put(b.hash, b.gzip, 'gzip')
      await store.put(b.hash, b.bytes)
      assert.equal(await store.has(b.hash), true)
      assert.equal(await store.has(b.hash, 'identity'), true)
      assert.equal(await store.has(b.hash, 'br'), true)
      assert.equal(await store.has(b.hash, 'gzip'), true)
      assert.deepEqual(await store.get(b.hash), b.bytes)
      assert.deepEqual(await store.get(b.hash, 'br'), b.br)
      assert.deepEqual(await store.get(b.hash, 'gzip'), b.gzip)
    })

    test('a blob stored without variants has none', async () => {
      const b = blob(10)
      await store.put(b.hash, b.bytes)
      assert.equal(await store.has(b.hash, 'br'), false)
      await assert.rejects(store.get(b.hash, 'gzip'), (error: NodeJS.ErrnoException) => error.code === 'ENOENT')
    })

    test('a missing blob: has() is false, get() rejects with code ENOENT', async () => {
      const b = blob(10)
      assert.equal(await store.has(b.hash), false)
      await assert.rejects(store.get(b.hash), (error: NodeJS.ErrnoException) => error.code === 'ENOENT')
      await assert.rejects(store.get(b.hash, 'br'), (error: NodeJS.ErrnoException) => error.code === 'ENOENT')
    })

    test('an empty blob round-trips', async () => {
      const bytes = Buffer.alloc(0)
      await store.put(sha256(bytes), bytes)
      assert.deepEqual(await store.get(sha256(bytes)), bytes)
    })

    test('put of stored bytes succeeds and marks the file modified, so a listing taken before cannot remove it', async () => {
      const b = blob()
      await store.put(b.hash, b.gzip, 'gzip')
      await store.put(b.hash, b.bytes)
      const first = await listed(store, b.hash)
      assert.ok(first.get('identity') && first.get('gzip'))

      await sleep(options.touchDelayMs)
      await store.put(b.hash, b.gzip, 'gzip')
      await store.put(b.hash, b.bytes)
      const second = await listed(store, b.hash)
      for (const encoding of ['identity', 'gzip'] as const) {
        assert.ok(second.get(encoding)!.modifiedMs > first.get(encoding)!.modifiedMs, `${encoding} marked modified`)
      }
      assert.deepEqual(await store.get(b.hash), b.bytes)
      assert.deepEqual(await store.get(b.hash, 'gzip'), b.gzip)

      // The sweep's race: it listed the blob when it was old, a publish claimed the bytes again
      // since; its check at removal sees the new time and keeps the file.
      const old = first.get('identity')!
      assert.equal(await store.removeIfOlder(old, old.modifiedMs + 1), false)
      assert.equal(await store.has(b.hash), true)
    })

    test('delete removes the blob and its variants; deleting a missing blob is no error', async () => {
      const b = blob()
      await store.put(b.hash, b.br, 'br')
      await store.put(b.hash, b.gzip, 'gzip')
      await store.put(b.hash, b.bytes)
      await store.delete(b.hash)
      for (const encoding of ['identity', 'br', 'gzip'] as const) assert.equal(await store.has(b.hash, encoding), false, encoding)
      await assert.rejects(store.get(b.hash), (error: NodeJS.ErrnoException) => error.code === 'ENOENT')
      assert.equal((await listed(store, b.hash)).size, 0)
      await store.delete(b.hash)
      await store.delete(blob(10).hash)
    })

    test('list yields every blob and variant with its hash, encoding and size', async () => {
      const withVariants = blob(3000)
      const bare = blob(500)
      await store.put(withVariants.hash, withVariants.br, 'br')
      await store.put(withVariants.hash, withVariants.gzip, 'gzip')
      await store.put(withVariants.hash, withVariants.bytes)
      await store.put(bare.hash, bare.bytes)
      const started = Date.now()

      const files = await listed(store, withVariants.hash)
      assert.deepEqual([...files.keys()].sort(), ['br', 'gzip', 'identity'])
      assert.equal(files.get('identity')!.bytes, withVariants.bytes.length)
      assert.equal(files.get('br')!.bytes, withVariants.br.length)
      assert.equal(files.get('gzip')!.bytes, withVariants.gzip.length)
      for (const file of files.values()) {
        assert.equal(file.hash, withVariants.hash)
        assert.ok(file.name.includes(withVariants.hash), file.name)
        // Written moments ago (S3 keeps whole seconds, so a margin of a few).
        assert.ok(Math.abs(file.modifiedMs - started) < 60_000, `${file.name}: modifiedMs ${file.modifiedMs}`)
      }
      const bareFiles = await listed(store, bare.hash)
      assert.deepEqual([...bareFiles.keys()], ['identity'])
      assert.equal(bareFiles.get('identity')!.bytes, bare.bytes.length)

      // Files of one hash come side by side, as the sweep's grouping needs.
      const order: string[] = []
      for await (const file of store.list()) if (file.hash) order.push(file.hash)
      const runs = order.filter((hash, i) => i === 0 || order[i - 1] !== hash)
      assert.equal(new Set(runs).size, runs.length)
    })

    test('removeIfOlder keeps a file modified at or after the limit and removes an older one', async () => {
      const b = blob()
      await store.put(b.hash, b.br, 'br')
      await store.put(b.hash, b.bytes)
      const files = await listed(store, b.hash)
      const identity = files.get('identity')!
      // Margins of seconds either side: S3 keeps whole seconds.
      assert.equal(await store.removeIfOlder(identity, Date.now() - 5_000), false)
      assert.equal(await store.removeIfOlder(identity, identity.modifiedMs), false)
      assert.equal(await store.has(b.hash), true)

      assert.equal(await store.removeIfOlder(identity, Date.now() + 5_000), true)
      assert.equal(await store.has(b.hash), false)
      assert.equal(await store.has(b.hash, 'br'), true, 'only the file named is removed')
      assert.equal(await store.removeIfOlder(identity, Date.now() + 5_000), false, 'gone already')
      assert.equal(await store.removeIfOlder(files.get('br')!, Date.now() + 5_000), true)
      assert.equal((await listed(store, b.hash)).size, 0)
    })

    test('a 3 MiB blob round-trips byte for byte', async () => {
      const bytes = randomBytes(3 * 1024 * 1024)
      const hash = sha256(bytes)
      await store.put(hash, bytes)
      const back = await store.get(hash)
      assert.equal(back.length, bytes.length)
      assert.ok(back.equals(bytes))
      assert.equal((await listed(store, hash)).get('identity')!.bytes, bytes.length)
    })

    test('concurrent puts of the same blob all succeed and leave its bytes', async () => {
      const b = blob(50_000)
      await Promise.all([store.put(b.hash, b.bytes), store.put(b.hash, b.bytes), store.put(b.hash, b.bytes), store.put(b.hash, b.br, 'br')])
      await Promise.all([store.put(b.hash, b.bytes), store.put(b.hash, b.bytes)])
      assert.deepEqual(await store.get(b.hash), b.bytes)
      assert.deepEqual(await store.get(b.hash, 'br'), b.br)
      assert.deepEqual([...(await listed(store, b.hash)).keys()].sort(), ['br', 'identity'])
    })

    test('a name that is not a lowercase SHA-256 hex digest is refused', async () => {
      const bytes = Buffer.from('x')
      for (const bad of ['abc', sha256(bytes).toUpperCase(), `../${sha256(bytes).slice(3)}`, `${sha256(bytes)}/x`, '']) {
        await assert.rejects(async () => store.put(bad, bytes), /sha256/, `put ${bad}`)
        await assert.rejects(async () => store.get(bad), /sha256/, `get ${bad}`)
        await assert.rejects(async () => store.has(bad), /sha256/, `has ${bad}`)
        await assert.rejects(async () => store.delete(bad), /sha256/, `delete ${bad}`)
      }
    })
  })
}

blobStoreContract(
  'fs',
  () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'plinth-blobs-'))
    const store = new FsBlobStore(root)
    return {
      store,
      close: async () => {
        await store.close()
        rmSync(root, { recursive: true, force: true })
      },
    }
  },
  { touchDelayMs: 50 },
)

let s3: TestS3 | undefined
const sharedS3 = async () => (s3 ??= await startTestS3())
after(() => s3?.close())

blobStoreContract(
  's3',
  async () => {
    const server = await sharedS3()
    const store = new S3BlobStore({ ...server, forcePathStyle: true, prefix: 'contract', maxAttempts: S3_REQUEST_ATTEMPTS })
    return { store, close: () => store.close() }
  },
  { touchDelayMs: 2_100 },
)

/** What one request through the proxy was: its method and whether it carried bytes or copied. */
interface Seen {
  method: string
  path: string
  copy: boolean
  status: number
}

/**
 * A proxy in front of the S3 server that answers the next `fail` requests itself with 503
 * SlowDown (S3's throttling answer), cuts the bodies of the next `cut` answers short (their
 * headers and half their bytes, then the connection closes), and records every request it passes on.
 */
async function startProxy(target: string) {
  const upstream = new URL(target)
  const seen: Seen[] = []
  const state = { fail: 0, cut: 0 }
  const server = http.createServer((req, res) => {
    const record = (status: number) => seen.push({ method: req.method!, path: req.url!, copy: 'x-amz-copy-source' in req.headers, status })
    if (state.fail > 0) {
      state.fail--
      req.resume()
      req.on('end', () => {
        record(503)
        const body = '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>'
        res.writeHead(503, { 'content-type': 'application/xml' })
        res.end(req.method === 'HEAD' ? undefined : body)
      })
      return
    }
    const forward = http.request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      record(answer.statusCode!)
      res.writeHead(answer.statusCode!, answer.headers)
      const length = Number(answer.headers['content-length'])
      if (state.cut > 0 && req.method === 'GET' && length > 1) {
        state.cut--
        const chunks: Buffer[] = []
        answer.on('data', (chunk: Buffer) => chunks.push(chunk))
        answer.on('end', () => res.write(Buffer.concat(chunks).subarray(0, length >> 1), () => res.destroy()))
        return
      }
      answer.pipe(res)
    })
    forward.on('error', (error) => res.destroy(error))
    req.pipe(forward)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    state,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

describe('S3 blob store', () => {
  let server: TestS3
  let proxy: Awaited<ReturnType<typeof startProxy>>
  let store: S3BlobStore
  before(async () => {
    server = await sharedS3()
    proxy = await startProxy(server.endpoint)
    store = new S3BlobStore({ ...server, endpoint: proxy.endpoint, forcePathStyle: true, prefix: 'proxied/', maxAttempts: 4 })
  })
  after(async () => {
    await store?.close()
    await proxy?.close()
  })

  test('503 SlowDown answers are retried until the server answers', async () => {
    const b = blob()
    proxy.state.fail = 2
    await store.put(b.hash, b.bytes)
    proxy.state.fail = 2
    assert.deepEqual(await store.get(b.hash), b.bytes)
    proxy.state.fail = 2
    assert.equal(await store.has(b.hash), true)
    assert.equal(proxy.seen.filter((s) => s.status === 503).length, 6)
  })

  test('a server that keeps failing fails the call after maxAttempts, not as a missing blob', async () => {
    const before = proxy.seen.length
    proxy.state.fail = 100
    await assert.rejects(store.get(blob(10).hash), (error: Error & { code?: string; $metadata?: { httpStatusCode?: number } }) => {
      assert.notEqual(error.code, 'ENOENT')
      assert.equal(error.$metadata?.httpStatusCode, 503)
      return true
    })
    assert.equal(proxy.seen.length - before, 4)
    proxy.state.fail = 0
  })

  test('a body cut short after its headers is fetched again', async () => {
    const b = blob(50_000)
    await store.put(b.hash, b.bytes)
    const before = proxy.seen.length
    proxy.state.cut = 2
    assert.deepEqual(await store.get(b.hash), b.bytes)
    assert.deepEqual(
      proxy.seen.slice(before).map((s) => s.method),
      ['GET', 'GET', 'GET'],
    )
  })

  test('a body cut short on every try fails the call after maxAttempts, not as a missing blob', async () => {
    const b = blob(50_000)
    await store.put(b.hash, b.bytes)
    const before = proxy.seen.length
    proxy.state.cut = 100
    await assert.rejects(store.get(b.hash), (error: Error & { code?: string }) => {
      assert.notEqual(error.code, 'ENOENT')
      return true
    })
    assert.equal(proxy.seen.length - before, 4)
    proxy.state.cut = 0
  })

  test('a 404 on HEAD is has() false, answered at once without retries', async () => {
    const before = proxy.seen.length
    assert.equal(await store.has(blob(10).hash), false)
    assert.deepEqual(
      proxy.seen.slice(before).map((s) => [s.method, s.status]),
      [['HEAD', 404]],
    )
  })

  test('a put of stored bytes sends none of them again', async () => {
    const b = blob(100_000)
    await store.put(b.hash, b.br, 'br')
    await store.put(b.hash, b.bytes)
    const before = proxy.seen.length
    await store.put(b.hash, b.br, 'br')
    await store.put(b.hash, b.bytes)
    const uploads = proxy.seen.slice(before).filter((s) => s.method === 'PUT' && !s.copy)
    assert.deepEqual(uploads, [])
    assert.equal(proxy.seen.slice(before).filter((s) => s.copy).length, 2, 'each touched by a copy onto itself')
  })

  test('prefixes keep stores apart in one bucket, and keys that are not blobs are not listed', async () => {
    const a = new S3BlobStore({ ...server, forcePathStyle: true, prefix: 'tenant-a', maxAttempts: S3_REQUEST_ATTEMPTS })
    const b = new S3BlobStore({ ...server, forcePathStyle: true, prefix: 'tenant-b/', maxAttempts: S3_REQUEST_ATTEMPTS })
    const raw = new S3Client({ endpoint: server.endpoint, region: server.region, credentials: server.credentials, forcePathStyle: true })
    try {
      const x = blob(100)
      await a.put(x.hash, x.bytes)
      assert.equal(await a.has(x.hash), true)
      assert.equal(await b.has(x.hash), false)
      assert.equal((await listed(b, x.hash)).size, 0)
      for (const key of ['tenant-a/readme.txt', `tenant-a/${x.hash.slice(0, 2)}/${x.hash.slice(2, 4)}/${x.hash}.tmp`, `tenant-a/00/00/${x.hash}`]) {
        await raw.send(new PutObjectCommand({ Bucket: server.bucket, Key: key, Body: Buffer.from('not a blob') }))
      }
      const names: string[] = []
      for await (const file of a.list()) names.push(file.name)
      assert.deepEqual(names, [`${x.hash.slice(0, 2)}/${x.hash.slice(2, 4)}/${x.hash}`])
    } finally {
      await a.close()
      await b.close()
      raw.destroy()
    }
  })

  test('check() passes for the bucket and fails for a missing one', async () => {
    await store.check()
    const missing = new S3BlobStore({ ...server, bucket: 'no-such-bucket', forcePathStyle: true, prefix: '', maxAttempts: 1 })
    try {
      await assert.rejects(missing.check())
    } finally {
      await missing.close()
    }
  })
})
