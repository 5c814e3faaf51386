/**
 * Hostile input against the publishing API. Every refusal must be the error envelope
 * ({error:{code,message,...}} with a JSON content type) and must store nothing: the rows of
 * websites, versions, version_files and blobs and the files under {dataDir}/blobs are counted
 * before and after each case.
 */

import assert from 'node:assert/strict'
import http from 'node:http'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import type { Kysely } from 'kysely'
import { type ApiResponse, bundle, startTestServer, type TestServer } from '../helpers/server.ts'
import { blobStoreFiles } from '../helpers/blob-files.ts'
import { STORES } from '../helpers/stores.ts'

const MiB = 1024 * 1024
const BODY_LIMIT = 16 * MiB

type File = { path: string; content: string; contentEncoding?: 'utf8' | 'base64'; contentType?: string }

/** What a publish can leave behind: metadata rows and blob files on disk. */
async function footprint(server: TestServer) {
  // Compressed variants are written after a publish answers; compare the disk once none is in flight.
  await server.server.blobVariants.settled()
  const db = server.server.db.kysely as unknown as Kysely<any>
  const rows = async (table: string) =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    )
  const sites = await db
    .selectFrom('websites')
    .select(['id', 'slug', 'status', 'current_version_id', 'last_version_number', 'updated_at'])
    .orderBy('id')
    .execute()
  return {
    websites: await rows('websites'),
    versions: await rows('versions'),
    versionFiles: await rows('version_files'),
    blobs: await rows('blobs'),
    blobFiles: [...blobStoreFiles(path.join(server.config.dataDir, 'blobs')).keys()].sort(),
    sites: sites.map((s) => ({ ...s, last_version_number: Number(s.last_version_number) })),
  }
}

/** Runs the case and checks that it left no row and no blob file behind. */
async function storesNothing(server: TestServer, work: () => Promise<void>): Promise<void> {
  const beforeState = await footprint(server)
  await work()
  assert.deepEqual(await footprint(server), beforeState, 'the refused request stored something')
}

function assertEnvelope(res: { status: number; headers: Headers | http.IncomingHttpHeaders; body?: any; text: string }, status: number, code: string) {
  assert.equal(res.status, status, `expected ${status} ${code}, got ${res.status}: ${res.text.slice(0, 500)}`)
  const type = res.headers instanceof Headers ? res.headers.get('content-type') : res.headers['content-type']
  assert.match(String(type), /^application\/json(;|$)/, 'the error envelope is JSON')
  const body = res.body ?? JSON.parse(res.text)
  assert.deepEqual(Object.keys(body), ['error'], 'the envelope has one top-level key, error')
  assert.equal(body.error.code, code)
  assert.equal(typeof body.error.message, 'string')
  assert.ok(body.error.message.length > 0, 'the message is not empty')
  return body.error as {
    code: string
    message: string
    fields?: Record<string, string>
    violations?: Array<{ code: string; message: string; path?: string; detail?: string }>
  }
}

function assertViolations(res: ApiResponse) {
  const error = assertEnvelope(res, 422, 'PUBLISH_INVALID')
  assert.ok(Array.isArray(error.violations) && error.violations.length > 0, 'PUBLISH_INVALID lists its violations')
  for (const v of error.violations) {
    assert.equal(typeof v.code, 'string')
    assert.equal(typeof v.message, 'string')
    assert.ok(v.message.length > 0)
  }
  return error.violations
}

interface RawResult {
  status?: number
  headers?: http.IncomingHttpHeaders
  text: string
  /** Set when the connection was reset before a response could be read. */
  reset?: string
}

/**
 * A request over node:http, for bodies fetch cannot send: `chunks` (which may arrive over time)
 * are written one by one (with back-pressure) and `end` says whether the request is finished.
 * Resolves with the response as soon as it has been read, even if the server answered before the
 * body was sent (then the rest of the body is abandoned), or with `reset` when the connection
 * broke before any response.
 */
function rawRequest(
  server: TestServer,
  options: { method?: string; path: string; headers: Record<string, string | number>; chunks: Iterable<Buffer> | AsyncIterable<Buffer>; end?: boolean },
): Promise<RawResult> {
  const { port } = new URL(server.url)
  return new Promise((resolve) => {
    let settled = false
    const settle = (result: RawResult) => {
      if (settled) return
      settled = true
      resolve(result)
      req.destroy()
    }
    const req = http.request({ host: '127.0.0.1', port, method: options.method ?? 'POST', path: options.path, headers: options.headers, agent: false })
    req.setMaxListeners(0)
    req.on('response', (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => settle({ status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', (error: NodeJS.ErrnoException) => settle({ text: '', reset: error.code ?? error.message }))
    })
    req.on('error', (error: NodeJS.ErrnoException) => settle({ text: '', reset: error.code ?? error.message }))
    void (async () => {
      for await (const chunk of options.chunks) {
        if (settled || req.destroyed) return
        if (!req.write(chunk)) {
          await new Promise<void>((resume) => {
            const go = () => {
              req.off('drain', go)
              req.off('close', go)
              resume()
            }
            req.on('drain', go)
            req.on('close', go)
          })
        }
      }
      if (options.end !== false && !settled && !req.destroyed) req.end()
    })()
  })
}

function* repeat(chunk: Buffer, times: number): Generator<Buffer> {
  for (let i = 0; i < times; i++) yield chunk
}

for (const store of STORES) {
  describe(`Hostile input to the publishing API (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    let owner: { id: string; token: string }
    let other: { id: string; token: string }
    let ownSiteId: string
    let othersSite: { websiteId: string; jobId: string; slug: string }

    const createBody = (files: unknown) => ({ category: 'other', files })

    /** Both publishing operations, with a body builder each: the same rules apply to both. */
    const publishers = () => [
      { name: 'createWebsite', url: '/v1/websites', body: (files: unknown) => createBody(files) },
      { name: 'createWebsiteVersion', url: `/v1/websites/${ownSiteId}/versions`, body: (files: unknown) => ({ files }) },
    ]

    /** The owner's JSON request headers, with the body's length declared or (chunked) not. */
    const framedHeaders = (framing: 'content-length' | 'chunked', length: number) => ({
      authorization: `Bearer ${owner.token}`,
      'content-type': 'application/json',
      ...(framing === 'content-length' ? { 'content-length': length } : {}),
    })

    const publish = (files: File[]) => server.api('POST', '/v1/websites', { token: owner.token, body: createBody(files) })

    before(async () => {
      server = await startTestServer(store.name)
      owner = await server.user()
      other = await server.user()
      const own = await server.api('POST', '/v1/websites', { token: owner.token, body: { name: 'Own site', category: 'other', files: bundle('Own') } })
      assert.equal(own.status, 201, own.text)
      ownSiteId = own.body.websiteId
      const theirs = await server.api('POST', '/v1/websites', {
        token: other.token,
        body: { name: 'Their site', category: 'portfolio', files: bundle('Theirs') },
      })
      assert.equal(theirs.status, 201, theirs.text)
      othersSite = theirs.body
    })
    after(() => server?.close())

    test('path traversal, absolute and backslash paths are refused as INVALID_PATH naming the path, by both publishing operations', async () => {
      for (const bad of ['../x', 'a/../../x', '/etc/passwd', 'a\\b']) {
        for (const publisher of publishers()) {
          await storesNothing(server, async () => {
            const files = [...bundle('Traversal'), { path: bad, content: 'owned' }]
            const res = await server.api('POST', publisher.url, { token: owner.token, body: publisher.body(files) })
            const violations = assertViolations(res)
            assert.deepEqual(
              violations.map((v) => [v.code, v.path]),
              [['INVALID_PATH', bad]],
              `${publisher.name} ${JSON.stringify(bad)}`,
            )
          })
        }
      }
    })

    test('a NUL byte in a path is INVALID_PATH and in utf8 content is INVALID_ENCODING, each naming the file', async () => {
      await storesNothing(server, async () => {
        const res = await publish([...bundle('Nul'), { path: 'a\u0000b.html', content: '<p>x</p>' }])
        assert.deepEqual(
          assertViolations(res).map((v) => [v.code, v.path]),
          [['INVALID_PATH', 'a\u0000b.html']],
        )
      })
      await storesNothing(server, async () => {
        const res = await publish([...bundle('Nul'), { path: 'notes.txt', content: 'before\u0000after' }])
        assert.deepEqual(
          assertViolations(res).map((v) => [v.code, v.path]),
          [['INVALID_ENCODING', 'notes.txt']],
        )
      })
      await storesNothing(server, async () => {
        const res = await publish([{ path: 'index.html', content: '<p>\u0000</p>' }])
        assert.deepEqual(
          assertViolations(res).map((v) => [v.code, v.path]),
          [['INVALID_ENCODING', 'index.html']],
        )
      })
    })

    test('invalid UTF-8 bytes in the raw request body are refused as 400 INVALID_JSON', async () => {
      const head = Buffer.from('{"category":"other","files":[{"path":"index.html","content":"<p>')
      const tail = Buffer.from('</p>"}]}')
      // A stray 0xFF, an overlong "/", a UTF-8-encoded lone surrogate (CESU-8) and a truncated sequence.
      for (const bad of [[0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82]]) {
        await storesNothing(server, async () => {
          const body = Buffer.concat([head, Buffer.from(bad), tail])
          const res = await server.api('POST', '/v1/websites', { token: owner.token, body, headers: { 'content-type': 'application/json' } })
          assertEnvelope(res, 400, 'INVALID_JSON')
        })
      }
    })

    test('a body of raw UTF-8 and the same body written in ASCII with \\u escapes publish the same bytes', async () => {
      const text = '<!doctype html><title>Café ☕ 𝄞</title><p>Grüße, 東京</p>'
      const raw = Buffer.from(JSON.stringify({ category: 'other', files: [{ path: 'index.html', content: text }] }))
      const escaped = Buffer.from(
        JSON.stringify({ category: 'other', files: [{ path: 'index.html', content: text }] }).replace(
          /[^\x00-\x7f]/g,
          (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
        ),
      )
      assert.ok(raw.some((byte) => byte > 0x7f) && escaped.every((byte) => byte < 0x80), 'one body has multi-byte characters, the other is ASCII only')
      for (const body of [raw, escaped]) {
        const res = await server.api('POST', '/v1/websites', { token: owner.token, body, headers: { 'content-type': 'application/json' } })
        assert.equal(res.status, 201, res.text)
        const served = await server.site(res.body.slug, '/')
        assert.equal(served.status, 200)
        assert.equal(served.body.toString('utf8'), text)
      }
    })

    test('a lone surrogate in utf8 content is INVALID_ENCODING and in a path is INVALID_PATH', async () => {
      await storesNothing(server, async () => {
        // JSON.stringify writes the lone surrogate as the escape \ud800: valid JSON, invalid text.
        const res = await publish([...bundle('Surrogate'), { path: 'notes.txt', content: 'broken \ud800 text' }])
        assert.deepEqual(
          assertViolations(res).map((v) => [v.code, v.path]),
          [['INVALID_ENCODING', 'notes.txt']],
        )
      })
      await storesNothing(server, async () => {
        const res = await publish([{ path: 'index.html', content: '<p>\udc00</p>' }])
        assert.deepEqual(
          assertViolations(res).map((v) => [v.code, v.path]),
          [['INVALID_ENCODING', 'index.html']],
        )
      })
      await storesNothing(server, async () => {
        const res = await publish([...bundle('Surrogate'), { path: 'x\ud800.txt', content: 'x' }])
        assert.deepEqual(
          assertViolations(res).map((v) => [v.code, v.path]),
          [['INVALID_PATH', 'x\ud800.txt']],
        )
      })
    })

    test('broken base64 is INVALID_ENCODING naming the file', async () => {
      for (const content of ['not base64!', 'abc', 'ab=c', 'YWJj====', '####']) {
        await storesNothing(server, async () => {
          const res = await publish([...bundle('Base64'), { path: 'images/logo.png', content, contentEncoding: 'base64' }])
          assert.deepEqual(
            assertViolations(res).map((v) => [v.code, v.path]),
            [['INVALID_ENCODING', 'images/logo.png']],
            JSON.stringify(content),
          )
        })
      }
    })

    test('a 10,000-file array is refused with TOO_MANY_FILES and a bounded violations list', async () => {
      // Every extra file also breaks a per-file rule, so an unbounded list would have 10,000 entries.
      const files: File[] = [{ path: 'index.html', content: '<p>hi</p>' }]
      for (let i = 1; i < 10_000; i++) files.push({ path: `../f${i}.txt`, content: 'x' })
      await storesNothing(server, async () => {
        const res = await publish(files)
        const violations = assertViolations(res)
        const [first] = violations
        assert.equal(first?.code, 'TOO_MANY_FILES')
        assert.equal(first.path, undefined, 'TOO_MANY_FILES concerns the bundle, not a file')
        assert.match(first.detail ?? '', /10000/)
        assert.ok(violations.length <= 100, `at most 100 violations, got ${violations.length}`)
        assert.ok(violations.some((v) => v.code === 'INVALID_PATH' && v.path === '../f1.txt'))
        assert.ok(res.text.length < 64 * 1024, `the answer stays small (${res.text.length} bytes)`)
      })
    })

    test('a 10,000-item array of malformed files is refused with a bounded VALIDATION_FAILED fields list', async () => {
      const files = Array.from({ length: 10_000 }, (_, i) => ({ path: i, content: false, extra: true }))
      await storesNothing(server, async () => {
        const res = await server.api('POST', '/v1/websites', { token: owner.token, body: createBody(files) })
        const error = assertEnvelope(res, 422, 'VALIDATION_FAILED')
        const names = Object.keys(error.fields ?? {})
        assert.ok(names.includes('files[0].path') && names.includes('files[0].content') && names.includes('files[0].extra'), names.slice(0, 5).join(', '))
        assert.ok(names.length <= 100, `at most 100 fields, got ${names.length}`)
        assert.ok(res.text.length < 64 * 1024, `the answer stays small (${res.text.length} bytes)`)
      })
    })

    test('JSON nested 100,000 levels deep is refused with a 4xx envelope and the server keeps answering', async () => {
      const depth = 100_000
      const cases: Array<[string, string, number, string]> = [
        ['unterminated [[[', '['.repeat(depth), 400, 'INVALID_JSON'],
        ['balanced arrays', '['.repeat(depth) + ']'.repeat(depth), 422, 'VALIDATION_FAILED'],
        ['nested objects', `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`, 422, 'VALIDATION_FAILED'],
        ['nested arrays as files', `{"category":"other","files":${'['.repeat(depth)}${']'.repeat(depth)}}`, 422, 'VALIDATION_FAILED'],
      ]
      for (const [name, body, status, code] of cases) {
        await storesNothing(server, async () => {
          const res = await server.api('POST', '/v1/websites', { token: owner.token, body })
          assert.ok(res.status >= 400 && res.status < 500, `${name}: ${res.status}`)
          assertEnvelope(res, status, code)
        })
        const index = await server.api('GET', '/v1')
        assert.equal(index.status, 200, `the server still answers after ${name}`)
      }
      const ok = await publish(bundle('Still alive'))
      assert.equal(ok.status, 201, ok.text)
    })

    test('a body just over 16 MiB (16 MiB + 1 bytes) is refused with 413 PAYLOAD_TOO_LARGE, with Content-Length or chunked', async () => {
      // With Content-Length the header alone decides; chunked, the server has to count the bytes.
      const body = Buffer.alloc(BODY_LIMIT + 1, 0x20)
      for (const framing of ['content-length', 'chunked'] as const) {
        await storesNothing(server, async () => {
          const res = await rawRequest(server, {
            path: '/v1/websites',
            headers: framedHeaders(framing, body.length),
            chunks: [body],
          })
          assert.equal(res.reset, undefined, `${framing}: the 413 is readable, not a reset (${res.reset})`)
          assertEnvelope(res as Required<RawResult>, 413, 'PAYLOAD_TOO_LARGE')
        })
      }
    })

    test('a body of exactly 16 MiB is within the limit', async () => {
      const json = JSON.stringify({ name: 'Exactly at the limit', category: 'other', files: bundle('Limit') })
      const body = Buffer.from(json + ' '.repeat(BODY_LIMIT - Buffer.byteLength(json)))
      assert.equal(body.length, BODY_LIMIT)
      const res = await server.api('POST', '/v1/websites', { token: owner.token, body, headers: { 'content-type': 'application/json' } })
      assert.equal(res.status, 201, res.text.slice(0, 300))
    })

    test('a body that arrives in many small pieces, with Content-Length or chunked, publishes its exact bytes', async () => {
      // Pieces of 997 bytes (so a multi-byte character is split between two of them), with pauses
      // so that they reach the server as separate reads.
      const image = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7919) % 251))
      const page = `<!doctype html><title>Pieces</title><p>${'Grüße aus 東京 𝄞 '.repeat(2000)}</p>`
      const body = Buffer.from(
        JSON.stringify(
          createBody([
            { path: 'index.html', content: page },
            { path: 'photo.png', content: image.toString('base64'), contentEncoding: 'base64' },
          ]),
        ),
      )
      async function* pieces() {
        for (let at = 0, n = 0; at < body.length; at += 997, n++) {
          if (n % 16 === 0) await new Promise((resume) => setTimeout(resume, 2))
          yield body.subarray(at, at + 997)
        }
      }
      for (const framing of ['content-length', 'chunked'] as const) {
        const res = await rawRequest(server, {
          path: '/v1/websites',
          headers: framedHeaders(framing, body.length),
          chunks: pieces(),
        })
        assert.equal(res.status, 201, `${framing}: ${res.text.slice(0, 300)}`)
        const { slug } = JSON.parse(res.text) as { slug: string }
        assert.equal((await server.site(slug, '/')).body.toString('utf8'), page, `${framing}: the page`)
        assert.deepEqual((await server.site(slug, '/photo.png')).body, image, `${framing}: the image`)
      }
    })

    test('a body cut off before its Content-Length is in stores nothing, and the server goes on', async () => {
      const body = Buffer.from(JSON.stringify(createBody(bundle('Cut off'))) + ' '.repeat(2 * MiB))
      await storesNothing(server, async () => {
        const { port } = new URL(server.url)
        const req = http.request({
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/v1/websites',
          agent: false,
          headers: framedHeaders('content-length', body.length),
        })
        req.on('error', () => {})
        // Half the body, time for the server to read it, then the connection goes.
        await new Promise<void>((sent) => req.write(body.subarray(0, body.length / 2), () => sent()))
        await new Promise((resume) => setTimeout(resume, 100))
        req.destroy()
        await new Promise((closed) => req.on('close', closed))
      })
      assert.equal((await server.api('GET', '/v1')).status, 200, 'the server still answers')
      const ok = await publish(bundle('After the cut'))
      assert.equal(ok.status, 201, ok.text)
    })

    test('a 50 MB body is refused with 413 PAYLOAD_TOO_LARGE (or the connection is cut) and stores nothing', async () => {
      // The server may close the connection while the body is still being sent; then the write
      // fails with a reset instead of a readable 413. The 16 MiB + 1 test above proves the 413 path.
      const chunk = Buffer.alloc(MiB, 0x20)
      for (const framing of ['content-length', 'chunked'] as const) {
        await storesNothing(server, async () => {
          const res = await rawRequest(server, {
            path: '/v1/websites',
            headers: framedHeaders(framing, 50 * MiB),
            chunks: repeat(chunk, 50),
          })
          if (res.reset === undefined) assertEnvelope(res as Required<RawResult>, 413, 'PAYLOAD_TOO_LARGE')
          else assert.match(res.reset, /^(ECONNRESET|EPIPE)$/, framing)
        })
        assert.equal((await server.api('GET', '/v1')).status, 200, 'the server still answers')
      }
    })

    test('a Content-Length claiming more than 16 MiB is refused with 413 before the body is sent', async () => {
      await storesNothing(server, async () => {
        // Only 2 bytes of the announced 50 MB are sent and the request is never finished: the
        // answer can only come from the header.
        const res = await rawRequest(server, {
          path: '/v1/websites',
          headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json', 'content-length': 50 * MiB },
          chunks: [Buffer.from('{}')],
          end: false,
        })
        assertEnvelope(res as Required<RawResult>, 413, 'PAYLOAD_TOO_LARGE')
      })
    })

    test('an anonymous oversized body is refused with 401 before the body is read', async () => {
      await storesNothing(server, async () => {
        const res = await rawRequest(server, {
          path: '/v1/websites',
          headers: { 'content-type': 'application/json', 'content-length': 50 * MiB },
          chunks: [Buffer.from('{}')],
          end: false,
        })
        assertEnvelope(res as Required<RawResult>, 401, 'AUTH_REQUIRED')
      })
    })

    test('malformed JSON is refused as 400 INVALID_JSON; an empty body is no body', async () => {
      const bodies = ['{', '{"category": }', "{'category':'other'}", '{"category":"other",}', '{"category":"other"} trailing', 'NaN', '"unterminated']
      for (const body of bodies) {
        await storesNothing(server, async () => {
          const res = await server.api('POST', '/v1/websites', { token: owner.token, body, headers: { 'content-type': 'application/json' } })
          assertEnvelope(res, 400, 'INVALID_JSON')
        })
      }
      // An empty body is no body: a route that needs one says so.
      await storesNothing(server, async () => {
        const res = await server.api('POST', '/v1/websites', { token: owner.token, body: '', headers: { 'content-type': 'application/json' } })
        assertEnvelope(res, 422, 'VALIDATION_FAILED')
      })
    })

    test('a body that is not application/json is refused as 415 UNSUPPORTED_MEDIA_TYPE', async () => {
      const json = JSON.stringify(createBody(bundle('Wrong type')))
      for (const type of [
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'text/json',
        'application/jsonx',
        'application/xml',
      ]) {
        await storesNothing(server, async () => {
          const res = await server.api('POST', '/v1/websites', { token: owner.token, body: json, headers: { 'content-type': type } })
          assertEnvelope(res, 415, 'UNSUPPORTED_MEDIA_TYPE')
        })
      }
      await storesNothing(server, async () => {
        const res = await rawRequest(server, {
          path: '/v1/websites',
          headers: { authorization: `Bearer ${owner.token}`, 'content-length': Buffer.byteLength(json) },
          chunks: [Buffer.from(json)],
        })
        assertEnvelope(res as Required<RawResult>, 415, 'UNSUPPORTED_MEDIA_TYPE')
      })
    })

    test('__proto__ and constructor.prototype keys are refused as 400 and pollute nothing', async () => {
      const files = JSON.stringify(bundle('Pollution'))
      const bodies = [
        `{"__proto__":{"polluted":"yes"},"category":"other","files":${files}}`,
        `{"category":"other","files":[{"path":"index.html","content":"<p>x</p>","__proto__":{"polluted":"yes"}}]}`,
        `{"\\u005f_proto__":{"polluted":"yes"},"category":"other","files":${files}}`,
        `{"constructor":{"prototype":{"polluted":"yes"}},"category":"other","files":${files}}`,
        `{"category":"other","files":[{"path":"index.html","content":"x","constructor":{"prototype":{"polluted":"yes"}}}]}`,
      ]
      for (const body of bodies) {
        await storesNothing(server, async () => {
          const res = await server.api('POST', '/v1/websites', { token: owner.token, body })
          assertEnvelope(res, 400, 'INVALID_JSON')
        })
      }
      const versionRes = await server.api('POST', `/v1/websites/${ownSiteId}/versions`, {
        token: owner.token,
        body: `{"files":${files},"__proto__":{"promote":false}}`,
      })
      assertEnvelope(versionRes, 400, 'INVALID_JSON')
      // The server runs in this process: its Object.prototype is ours.
      assert.equal(({} as Record<string, unknown>).polluted, undefined)
      assert.equal(Object.hasOwn(Object.prototype, 'polluted'), false)
      assert.equal(Object.hasOwn(Object.prototype, 'promote'), false)
      assert.equal((await publish(bundle('After pollution attempt'))).status, 201)
    })

    test('unknown fields are refused as 422 VALIDATION_FAILED naming each field', async () => {
      const cases: Array<[string, string, unknown, string[]]> = [
        ['createWebsite top level', '/v1/websites', { ...createBody(bundle('Unknown')), extra: 1 }, ['extra']],
        ['createWebsite file', '/v1/websites', createBody([{ path: 'index.html', content: '<p>x</p>', mode: '0755' }]), ['files[0].mode']],
        [
          'createWebsite Object.prototype names',
          '/v1/websites',
          { ...createBody(bundle('Unknown')), toString: 1, hasOwnProperty: 2 },
          ['toString', 'hasOwnProperty'],
        ],
        ['createWebsiteVersion', `/v1/websites/${ownSiteId}/versions`, { files: bundle('Unknown'), title: 'v2', isCurrent: true }, ['title', 'isCurrent']],
      ]
      for (const [name, url, body, expected] of cases) {
        await storesNothing(server, async () => {
          const res = await server.api('POST', url, { token: owner.token, body })
          const error = assertEnvelope(res, 422, 'VALIDATION_FAILED')
          assert.deepEqual(Object.keys(error.fields ?? {}).sort(), [...expected].sort(), name)
          for (const field of expected) {
            assert.equal(typeof error.fields![field], 'string')
            assert.ok(error.message.includes(field), `${name}: the message names ${field}`)
          }
        })
      }
      await storesNothing(server, async () => {
        // "constructor" without "prototype" is a legal JSON key; it must still be named.
        const res = await server.api('POST', '/v1/websites', {
          token: owner.token,
          body: `{"category":"other","files":${JSON.stringify(bundle())},"constructor":1}`,
        })
        assert.deepEqual(Object.keys(assertEnvelope(res, 422, 'VALIDATION_FAILED').fields ?? {}), ['constructor'])
      })
    })

    test('wrong types are refused as 422 VALIDATION_FAILED with fields', async () => {
      const cases: Array<[string, string, unknown, string[]]> = [
        ['files a string', '/v1/websites', { category: 'other', files: 'index.html' }, ['files']],
        ['files empty', '/v1/websites', { category: 'other', files: [] }, ['files']],
        ['category a number', '/v1/websites', { category: 7, files: bundle() }, ['category']],
        ['path and content of the wrong type', '/v1/websites', createBody([{ path: 1, content: true }]), ['files[0].path', 'files[0].content']],
        [
          'contentEncoding unknown',
          '/v1/websites',
          createBody([{ path: 'index.html', content: 'x', contentEncoding: 'latin1' }]),
          ['files[0].contentEncoding'],
        ],
        ['body an array', '/v1/websites', [createBody(bundle())], ['body']],
        ['promote "yes"', `/v1/websites/${ownSiteId}/versions`, { files: bundle('Types'), promote: 'yes' }, ['promote']],
        ['message a number', `/v1/websites/${ownSiteId}/versions`, { files: bundle('Types'), message: 42 }, ['message']],
      ]
      for (const [name, url, body, expected] of cases) {
        await storesNothing(server, async () => {
          const res = await server.api('POST', url, { token: owner.token, body })
          const error = assertEnvelope(res, 422, 'VALIDATION_FAILED')
          assert.deepEqual(Object.keys(error.fields ?? {}).sort(), [...expected].sort(), `${name}: ${res.text}`)
        })
      }
    })

    test("another user's website id or job id is 404 NOT_FOUND, like an unknown id, and changes nothing", async () => {
      const theirView = async () => {
        const site = await server.api('GET', `/v1/websites/${othersSite.websiteId}`, { token: other.token })
        assert.equal(site.status, 200)
        return site.body
      }
      const beforeView = await theirView()
      const liveBefore = await server.site(othersSite.slug, '/')
      assert.equal(liveBefore.status, 200)

      const attempts: Array<(websiteId: string, jobId: string) => [string, string, unknown?]> = [
        (websiteId) => ['GET', `/v1/websites/${websiteId}`],
        (websiteId) => ['GET', `/v1/websites/${websiteId}/versions`],
        (websiteId) => ['POST', `/v1/websites/${websiteId}/versions`, { files: bundle('Defaced'), message: 'defaced' }],
        (websiteId, jobId) => ['POST', `/v1/websites/${websiteId}/versions/${jobId}/promote`],
        (_websiteId, jobId) => ['GET', `/v1/jobs/${jobId}`],
      ]
      await storesNothing(server, async () => {
        for (const attempt of attempts) {
          const [method, url, body] = attempt(othersSite.websiteId, othersSite.jobId)
          const res = await server.api(method, url, { token: owner.token, body })
          const error = assertEnvelope(res, 404, 'NOT_FOUND')
          const [uMethod, uUrl, uBody] = attempt('web_doesnotexist0000000000', 'job_doesnotexist0000000000')
          const unknownRes = await server.api(uMethod, uUrl, { token: owner.token, body: uBody })
          const unknownError = assertEnvelope(unknownRes, 404, 'NOT_FOUND')
          assert.equal(error.message, unknownError.message, `${method} ${url}: a foreign id reads exactly like an unknown one`)
        }
      })
      const list = await server.api('GET', '/v1/websites', { token: owner.token })
      assert.equal(list.status, 200)
      assert.ok(!list.body.items.some((s: { id: string }) => s.id === othersSite.websiteId), 'the foreign site is not listed')

      assert.deepEqual(await theirView(), beforeView, 'the owner sees the site unchanged')
      const liveAfter = await server.site(othersSite.slug, '/')
      assert.equal(liveAfter.status, 200)
      assert.ok(liveAfter.body.equals(liveBefore.body), 'the live site is unchanged')
    })

    test('a bundle breaking many rules at once gets ONE 422 listing every violation, file-specific ones with their path', async () => {
      const big = Buffer.alloc(2 * MiB + 1, 7)
      const files: File[] = [
        {
          path: 'home.html',
          content: [
            '<!doctype html><html><head><title>Home</title>',
            '<script src="https://cdn.example.com/lib.js"></script>',
            '<link rel="stylesheet" href="https://cdn.example.com/theme.css">',
            '<link rel="stylesheet" href="css/site.css">',
            '</head><body>',
            '<iframe src="https://example.com/embed"></iframe>',
            '<script src="app.js"></script>',
            '</body></html>',
          ].join('\n'),
        },
        { path: 'css/site.css', content: '@import url("https://fonts.example.com/font.css");\nbody { color: #111; }' },
        { path: 'app.js', content: "if ('serviceWorker' in navigator) navigator.serviceWorker.register('/sw.js')" },
        { path: 'images/huge.bin', content: big.toString('base64'), contentEncoding: 'base64' },
        ...Array.from({ length: 15 }, (_, i) => ({ path: `pages/p${i + 1}.html`, content: `<p>page ${i + 1}</p>` })),
        { path: 'notes.txt', content: 'one' },
        { path: 'notes.txt', content: 'two' },
      ]
      for (const publisher of publishers()) {
        await storesNothing(server, async () => {
          const res = await server.api('POST', publisher.url, { token: owner.token, body: publisher.body(files) })
          const violations = assertViolations(res)
          const codes = new Set(violations.map((v) => v.code))
          for (const code of ['MISSING_INDEX', 'EXTERNAL_URL', 'IFRAME', 'SERVICE_WORKER', 'FILE_TOO_LARGE', 'TOO_MANY_PAGES', 'DUPLICATE_PATH']) {
            assert.ok(codes.has(code), `${publisher.name}: ${code} is listed among ${[...codes].join(', ')}`)
          }
          const at = (code: string) =>
            violations
              .filter((v) => v.code === code)
              .map((v) => v.path)
              .sort()
          assert.deepEqual(at('EXTERNAL_URL'), ['css/site.css', 'home.html', 'home.html'], 'external script, external stylesheet and CSS @import')
          assert.deepEqual(at('IFRAME'), ['home.html'])
          assert.deepEqual(at('SERVICE_WORKER'), ['app.js'])
          assert.deepEqual(at('FILE_TOO_LARGE'), ['images/huge.bin'])
          assert.deepEqual(at('DUPLICATE_PATH'), ['notes.txt'])
          assert.deepEqual(at('MISSING_INDEX'), [undefined], 'bundle-level: no path')
          assert.deepEqual(at('TOO_MANY_PAGES'), [undefined], 'bundle-level: no path')
          assert.equal(violations.length, 9, JSON.stringify(violations.map((v) => [v.code, v.path])))
        })
      }
    })
  })
}
