/**
 * Uploads over real HTTP on every store: reserve, PUT the bytes to the signed URL (no token), then
 * use the upload as a bundle file. The signed URL is the only credential, checked for signature,
 * expiry and exact size; an upload is written once and belongs to the user who reserved it.
 */
import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import http from 'node:http'
import { after, before, describe, test } from 'node:test'
import { uploadSignature } from '../../src/uploads/upload-urls.ts'
import { bundle, startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex')
const MiB = 1024 * 1024

interface Put {
  status: number
  headers: http.IncomingHttpHeaders
  body: any
}

/**
 * A PUT with node:http, so headers (Content-Length, chunked) are exactly as given. The answer may
 * come before the whole body is sent (a refused upload): a write error after it is expected.
 */
function put(server: TestServer, uploadUrl: string, body: Buffer | Buffer[], headers: Record<string, string | number> = {}): Promise<Put> {
  const target = new URL(uploadUrl)
  const { port } = new URL(server.url)
  const chunks = Array.isArray(body) ? body : [body]
  return new Promise((resolve, reject) => {
    let answered = false
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'PUT',
        path: target.pathname + target.search,
        agent: false,
        headers: Array.isArray(body) ? { 'transfer-encoding': 'chunked', ...headers } : { 'content-length': body.length, ...headers },
      },
      (res) => {
        answered = true
        const parts: Buffer[] = []
        res.on('data', (c: Buffer) => parts.push(c))
        res.on('end', () => {
          const text = Buffer.concat(parts).toString('utf8')
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text ? JSON.parse(text) : undefined })
        })
      },
    )
    req.on('error', (error) => {
      if (!answered) reject(error)
    })
    for (const chunk of chunks) req.write(chunk)
    req.end()
  })
}

for (const store of STORES) {
  describe(`Uploads (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    let owner: { id: string; token: string }
    let other: { id: string; token: string }

    const reserve = async (token: string, files: Array<{ filename?: string; contentType?: string; size: number }>) => {
      const res = await server.api('POST', '/v1/uploads', { token, body: { files } })
      assert.equal(res.status, 201, res.text)
      return res.body.uploads as Array<{
        uploadId: string
        uploadUrl: string
        method: string
        headers: Record<string, string>
        expiresAt: string
        size: number
      }>
    }
    /** Reserves and PUTs one file; returns its upload id. */
    const upload = async (token: string, bytes: Buffer, file: { filename?: string; contentType?: string } = {}) => {
      const [reserved] = await reserve(token, [{ ...file, size: bytes.length }])
      const res = await put(server, reserved!.uploadUrl, bytes, reserved!.headers)
      assert.equal(res.status, 200, JSON.stringify(res.body))
      return reserved!.uploadId
    }
    const publish = (token: string, files: unknown[], slug?: string) =>
      server.api('POST', '/v1/websites', { token, body: { category: 'other', ...(slug ? { slug } : {}), files } })
    const blobRowCount = async () =>
      Number(
        (
          await server.server.db.kysely
            .selectFrom('blobs')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      )

    before(async () => {
      server = await startTestServer(store.name)
      owner = await server.user()
      other = await server.user()
    })
    after(() => server?.close())

    test('reserve, PUT without a token, publish with uploadId: the site serves the uploaded bytes', async () => {
      const photo = randomBytes(300 * 1024)
      const uploads = await reserve(owner.token, [{ filename: 'photo.png', contentType: 'image/png', size: photo.length }, { size: 10 }])
      assert.equal(uploads.length, 2)
      const [first] = uploads
      assert.match(first!.uploadId, /^upl_[A-Za-z0-9]{22}$/)
      assert.equal(first!.method, 'PUT')
      assert.deepEqual(first!.headers, { 'Content-Type': 'image/png' })
      assert.deepEqual(uploads[1]!.headers, {})
      assert.equal(first!.size, photo.length)
      const url = new URL(first!.uploadUrl)
      assert.equal(url.origin, server.config.baseUrl)
      assert.equal(url.pathname, `/v1/uploads/${first!.uploadId}/content`)
      assert.ok(url.searchParams.get('expires') && url.searchParams.get('signature'))
      const lifetime = Date.parse(first!.expiresAt) - Date.now()
      assert.ok(lifetime > 14 * 60_000 && lifetime <= 15 * 60_000, `15 minutes, got ${lifetime} ms`)

      const received = await put(server, first!.uploadUrl, photo, { 'content-type': 'image/png' })
      assert.equal(received.status, 200, JSON.stringify(received.body))
      assert.deepEqual(received.body, { uploadId: first!.uploadId, sha256: sha256(photo), size: photo.length })

      const created = await publish(owner.token, [...bundle('Uploaded'), { path: 'images/photo.png', uploadId: first!.uploadId }], 'uploaded-site')
      assert.equal(created.status, 201, created.text)
      assert.equal(created.body.bytesWritten, bundle('Uploaded').reduce((n, f) => n + Buffer.byteLength(f.content), 0) + photo.length)
      const served = await server.site('uploaded-site', '/images/photo.png')
      assert.equal(served.status, 200)
      assert.equal(served.headers['content-type'], 'image/png')
      assert.ok(served.body.equals(photo), 'served bytes equal the uploaded ones')
    })

    test('the PUT takes any Content-Type, or none, as raw bytes', async () => {
      for (const headers of [{ 'content-type': 'application/json' }, { 'content-type': 'text/plain; charset=utf-8' }, {}] as Array<Record<string, string>>) {
        const bytes = Buffer.from('{"not": "parsed as JSON"')
        const [reserved] = await reserve(owner.token, [{ size: bytes.length }])
        const res = await put(server, reserved!.uploadUrl, bytes, headers)
        assert.equal(res.status, 200, JSON.stringify(res.body))
        assert.equal(res.body.sha256, sha256(bytes))
      }
    })

    test('a tampered or incomplete URL is 403 UPLOAD_URL_INVALID and stores nothing', async () => {
      const bytes = Buffer.from('hello upload')
      const [reserved] = await reserve(owner.token, [{ size: bytes.length }])
      const url = new URL(reserved!.uploadUrl)
      const signature = url.searchParams.get('signature')!
      const flipped = (signature[0] === 'A' ? 'B' : 'A') + signature.slice(1)
      const later = String(Number(url.searchParams.get('expires')) + 3600)
      const [another] = await reserve(owner.token, [{ size: bytes.length }])
      const variants = [
        `${url.origin}${url.pathname}?expires=${url.searchParams.get('expires')}&signature=${flipped}`,
        `${url.origin}${url.pathname}?expires=${later}&signature=${signature}`,
        `${url.origin}${url.pathname}?expires=${url.searchParams.get('expires')}`,
        `${url.origin}${url.pathname}`,
        `${url.origin}${url.pathname}?expires=soon&signature=${signature}`,
        // A valid signature of one upload does not open another.
        `${url.origin}/v1/uploads/${another!.uploadId}/content${url.search}`,
      ]
      for (const variant of variants) {
        const res = await put(server, variant, bytes)
        assert.equal(res.status, 403, variant)
        assert.equal(res.body.error.code, 'UPLOAD_URL_INVALID', variant)
      }
      const res = await put(server, reserved!.uploadUrl, bytes)
      assert.equal(res.status, 200, 'the real URL still works: nothing was stored before')
    })

    test('an expired URL is 403 UPLOAD_URL_EXPIRED', async () => {
      const bytes = Buffer.from('late bytes')
      const [reserved] = await reserve(owner.token, [{ size: bytes.length }])
      const { value } = await server.server.db.kysely.selectFrom('secrets').select('value').where('name', '=', 'upload_url_key').executeTakeFirstOrThrow()
      const expires = String(Math.floor(Date.now() / 1000) - 1)
      const signature = uploadSignature(Buffer.from(value, 'base64'), reserved!.uploadId, expires)
      const res = await put(server, `${server.url}/v1/uploads/${reserved!.uploadId}/content?expires=${expires}&signature=${signature}`, bytes)
      assert.equal(res.status, 403)
      assert.equal(res.body.error.code, 'UPLOAD_URL_EXPIRED')
      assert.match(res.body.error.message, /reserve a new upload/)
    })

    test('the body must be exactly the reserved size: shorter is 400, longer is 413, chunked or not', async () => {
      const bytes = randomBytes(1000)
      const [reserved] = await reserve(owner.token, [{ size: bytes.length }])
      const short = await put(server, reserved!.uploadUrl, bytes.subarray(0, 999))
      assert.equal(short.status, 400)
      assert.equal(short.body.error.code, 'BAD_REQUEST')
      assert.match(short.body.error.message, /exactly 1000 bytes/)
      const long = await put(server, reserved!.uploadUrl, Buffer.concat([bytes, Buffer.from('x')]))
      assert.equal(long.status, 413)
      assert.equal(long.body.error.code, 'PAYLOAD_TOO_LARGE')
      const chunkedLong = await put(server, reserved!.uploadUrl, [bytes, bytes, bytes])
      assert.equal(chunkedLong.status, 413, 'a chunked body is cut off at the reserved size')
      const chunkedShort = await put(server, reserved!.uploadUrl, [bytes.subarray(0, 500)])
      assert.equal(chunkedShort.status, 400)
      const ok = await put(server, reserved!.uploadUrl, [bytes.subarray(0, 400), bytes.subarray(400)])
      assert.equal(ok.status, 200, 'refused attempts stored nothing; the exact bytes are taken')
      assert.equal(ok.body.sha256, sha256(bytes))
    })

    test('over 2 MiB: refused at reservation (422) and at the PUT (413)', async () => {
      const res = await server.api('POST', '/v1/uploads', { token: owner.token, body: { files: [{ size: 2 * MiB + 1 }] } })
      assert.equal(res.status, 422)
      assert.equal(res.body.error.code, 'VALIDATION_FAILED')
      assert.ok(res.body.error.fields['files[0].size'])
      const [small] = await reserve(owner.token, [{ size: 10 }])
      const huge = await put(server, small!.uploadUrl, Buffer.alloc(3 * MiB, 1))
      assert.equal(huge.status, 413)
      assert.equal(huge.body.error.code, 'PAYLOAD_TOO_LARGE')
      const [max] = await reserve(owner.token, [{ size: 2 * MiB }])
      assert.equal((await put(server, max!.uploadUrl, Buffer.alloc(2 * MiB, 7))).status, 200, 'exactly 2 MiB is fine')
    })

    test('a second PUT of the same upload is 409 UPLOAD_COMPLETED and changes nothing', async () => {
      const bytes = Buffer.from('first bytes')
      const [reserved] = await reserve(owner.token, [{ size: bytes.length }])
      assert.equal((await put(server, reserved!.uploadUrl, bytes)).status, 200)
      const again = await put(server, reserved!.uploadUrl, Buffer.from('other bytes'))
      assert.equal(again.status, 409)
      assert.equal(again.body.error.code, 'UPLOAD_COMPLETED')
      const read = await server.server.services.uploads.readUpload({ userId: owner.id } as never, reserved!.uploadId)
      assert.ok(read.bytes.equals(bytes))
    })

    test('createUploads refuses bad requests with VALIDATION_FAILED and needs a token', async () => {
      const bad: unknown[] = [
        {},
        { files: [] },
        { files: Array.from({ length: 41 }, () => ({ size: 1 })) },
        { files: [{ size: 0 }] },
        { files: [{ size: 1.5 }] },
        { files: [{ size: '10' }] },
        { files: [{ size: 10, filename: 'a/b.png' }] },
        { files: [{ size: 10, filename: 'x\u0000.png' }] },
        { files: [{ size: 10, contentType: 'not a type' }] },
        { files: [{ size: 10, sha256: 'x' }] },
      ]
      for (const body of bad) {
        const res = await server.api('POST', '/v1/uploads', { token: owner.token, body })
        assert.equal(res.status, 422, JSON.stringify(body))
        assert.equal(res.body.error.code, 'VALIDATION_FAILED')
      }
      assert.equal((await server.api('POST', '/v1/uploads', { body: { files: [{ size: 1 }] } })).status, 401)
      assert.equal((await server.api('GET', '/v1/uploads/upl_x/content')).status, 405)
    })

    test('readUpload gives the bytes, type and name of an upload to its owner only', async () => {
      const bytes = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"></svg>')
      const uploadId = await upload(owner.token, bytes, { filename: 'logo.svg', contentType: 'image/svg+xml' })
      const read = await server.server.services.uploads.readUpload({ userId: owner.id } as never, uploadId)
      assert.ok(read.bytes.equals(bytes))
      assert.equal(read.contentType, 'image/svg+xml')
      assert.equal(read.filename, 'logo.svg')
      const plain = await upload(owner.token, Buffer.from('x'))
      assert.deepEqual((await server.server.services.uploads.readUpload({ userId: owner.id } as never, plain)).contentType, null)
      for (const [userId, id] of [
        [other.id, uploadId],
        [owner.id, 'upl_unknown'],
      ]) {
        await assert.rejects(
          server.server.services.uploads.readUpload({ userId } as never, id!),
          (e: any) => e.code === 'VALIDATION_FAILED' && e.fields.uploadId === 'is not a known upload of yours',
        )
      }
    })

    test("another user's, a pending or an expired upload in a publish is refused per file, and nothing is stored", async () => {
      const theirs = await upload(other.token, Buffer.from('their bytes'))
      const [pending] = await reserve(owner.token, [{ size: 5 }])
      const expired = await upload(owner.token, Buffer.from('old bytes'))
      await server.server.db.kysely.updateTable('uploads').set({ expires_at: '2000-01-01T00:00:00.000Z' }).where('id', '=', expired).execute()
      const res = await publish(
        owner.token,
        [
          ...bundle(),
          { path: 'theirs.txt', uploadId: theirs },
          { path: 'pending.txt', uploadId: pending!.uploadId },
          { path: 'expired.txt', uploadId: expired },
          { path: 'nothing.txt', uploadId: 'upl_doesnotexist' },
        ],
        'refused-uploads',
      )
      assert.equal(res.status, 422, res.text)
      assert.equal(res.body.error.code, 'PUBLISH_INVALID')
      assert.deepEqual(
        res.body.error.violations.map((v: any) => [v.code, v.path, v.detail]),
        [
          ['UNKNOWN_UPLOAD', 'theirs.txt', theirs],
          ['UPLOAD_INCOMPLETE', 'pending.txt', pending!.uploadId],
          ['UNKNOWN_UPLOAD', 'expired.txt', expired],
          ['UNKNOWN_UPLOAD', 'nothing.txt', 'upl_doesnotexist'],
        ],
      )
      assert.doesNotMatch(res.body.error.violations[0].message, /expired|pending|received/, "another user's upload looks unknown")
      assert.match(res.body.error.violations[2].message, /expired/)
      assert.equal((await server.api('GET', '/v1/slugs/suggest?value=refused-uploads', { token: owner.token })).body.available, true)
    })

    test('the sweep removes expired uploads and the bytes only they held; bytes a site uses stay', async () => {
      const kysely = server.server.db.kysely
      const blobs = server.server.blobs
      const alone = randomBytes(300)
      const shared = randomBytes(300)
      const aloneUpload = await upload(other.token, alone)
      const sharedUpload = await upload(other.token, shared)
      const [pending] = await reserve(other.token, [{ size: 10 }])
      assert.equal((await publish(other.token, [...bundle(), { path: 'shared.bin', uploadId: sharedUpload }], 'swept-uploads')).status, 201)
      const fresh = await upload(other.token, randomBytes(300))
      const later = Date.now() + 25 * 60 * 60 * 1000
      await kysely
        .updateTable('uploads')
        .set({ expires_at: new Date(Date.now() + 48 * 60 * 60 * 1000).toISOString() })
        .where('id', '=', fresh)
        .execute()

      const removed = await server.server.services.uploads.sweepExpired(later)
      assert.ok(removed >= 3, `the three expired uploads went (${removed})`)
      const left = await kysely.selectFrom('uploads').select('id').where('id', 'in', [aloneUpload, sharedUpload, pending!.uploadId, fresh]).execute()
      assert.deepEqual(
        left.map((row) => row.id),
        [fresh],
        'only the unexpired upload is left',
      )
      await assert.rejects(blobs.get(sha256(alone)), 'the bytes only the expired upload held are gone')
      const rows = await kysely
        .selectFrom('blobs')
        .select('hash')
        .where('hash', 'in', [sha256(alone), sha256(shared)])
        .execute()
      assert.deepEqual(
        rows.map((row) => row.hash),
        [sha256(shared)],
      )
      assert.deepEqual(await blobs.get(sha256(shared)), shared, 'the bytes a version uses stay')
      const served = await server.site('swept-uploads', '/shared.bin')
      assert.equal(served.status, 200)
      assert.equal(await server.server.services.uploads.sweepExpired(later), 0, 'a second sweep finds nothing')
    })

    test('an HTML file sent by upload still obeys the authoring rules', async () => {
      const page = Buffer.from('<!doctype html><title>x</title><script src="https://cdn.example.com/x.js"></script>')
      const uploadId = await upload(owner.token, page, { filename: 'index.html' })
      const res = await publish(owner.token, [{ path: 'index.html', uploadId }])
      assert.equal(res.status, 422, res.text)
      assert.deepEqual(
        res.body.error.violations.map((v: any) => [v.code, v.path]),
        [['EXTERNAL_URL', 'index.html']],
      )
      const big = await upload(owner.token, Buffer.alloc(2 * MiB, 0x41), { filename: 'a.bin' })
      const tooMuch = await publish(owner.token, [...bundle(), ...[1, 2, 3, 4, 5].map((i) => ({ path: `b${i}.bin`, uploadId: big }))])
      assert.equal(tooMuch.status, 422)
      assert.deepEqual(
        tooMuch.body.error.violations.map((v: any) => v.code),
        ['BUNDLE_TOO_LARGE'],
        'sizes of uploaded files count toward the bundle limit',
      )
    })

    test('each file gives exactly one of content, uploadId and sha256 (VALIDATION_FAILED otherwise)', async () => {
      const hash = 'a'.repeat(64)
      const cases: Array<[unknown, string, RegExp]> = [
        [{ path: 'x.txt' }, 'files[2]', /needs one of content, uploadId or sha256/],
        [{ path: 'x.txt', content: 'x', sha256: hash }, 'files[2]', /exactly one/],
        [{ path: 'x.txt', uploadId: 'upl_x', sha256: hash }, 'files[2]', /exactly one/],
        [{ path: 'x.txt', uploadId: 'upl_x', contentEncoding: 'base64' }, 'files[2].contentEncoding', /only allowed with content/],
      ]
      for (const [file, field, message] of cases) {
        const res = await publish(owner.token, [...bundle(), file])
        assert.equal(res.status, 422, res.text)
        assert.equal(res.body.error.code, 'VALIDATION_FAILED')
        assert.match(res.body.error.fields[field], message)
      }
      const res = await publish(owner.token, [...bundle(), { path: 'x.txt', sha256: 'ABC' }])
      assert.equal(res.body.error.code, 'VALIDATION_FAILED')
      assert.ok(res.body.error.fields['files[2].sha256'])
    })

    test('a 40-file site, then a version of 39 files by sha256 and one new inline: served right, one new blob written', async () => {
      const files = [
        {
          path: 'index.html',
          content: '<!doctype html><title>forty</title><link rel="stylesheet" href="css/0.css"><script src="js/0.js"></script><h1>Forty</h1>',
        },
        ...Array.from({ length: 13 }, (_, i) => ({ path: `css/${i}.css`, content: `.c${i} { color: #${String(i).padStart(6, '0')}; }` })),
        ...Array.from({ length: 13 }, (_, i) => ({ path: `js/${i}.js`, content: `console.log(${i}, "forty")` })),
        ...Array.from({ length: 13 }, (_, i) => ({
          path: `img/${i}.png`,
          content: randomBytes(2000 + i).toString('base64'),
          contentEncoding: 'base64' as const,
        })),
      ]
      assert.equal(files.length, 40)
      const created = await publish(owner.token, files, 'forty-files')
      assert.equal(created.status, 201, created.text)

      const bytesOf = (f: { content: string; contentEncoding?: string }) => Buffer.from(f.content, f.contentEncoding === 'base64' ? 'base64' : 'utf8')
      const changed = { path: 'css/5.css', content: '.changed { color: red; }' }
      const next = files.map((f) => (f.path === changed.path ? changed : { path: f.path, sha256: sha256(bytesOf(f)) }))
      const rowsBefore = await blobRowCount()
      const version = await server.api('POST', `/v1/websites/${created.body.websiteId}/versions`, { token: owner.token, body: { files: next } })
      assert.equal(version.status, 201, version.text)
      assert.equal(await blobRowCount(), rowsBefore + 1, 'only the new file was written')
      const stored = await server.server.db.kysely.selectFrom('version_files').selectAll().where('version_id', '=', version.body.jobId).execute()
      assert.equal(stored.length, 40)
      assert.equal(
        version.body.bytesWritten,
        files.reduce((n, f) => n + (f === files.find((x) => x.path === changed.path) ? Buffer.byteLength(changed.content) : bytesOf(f).length), 0),
      )

      for (const file of [...files.filter((f) => f.path !== changed.path), changed]) {
        const served = await server.site('forty-files', `/${file.path}`)
        assert.equal(served.status, 200, file.path)
        assert.ok(served.body.equals(bytesOf(file)), `${file.path} is served as published`)
      }
      const png = await server.site('forty-files', '/img/3.png')
      assert.equal(png.headers['content-type'], 'image/png')
    })

    test('unknown hashes are 422 PUBLISH_INVALID listing exactly the missing files', async () => {
      const known = Buffer.from('body { margin: 0 }')
      const created = await publish(owner.token, [...bundle('Hashes'), { path: 'known.css', content: known.toString() }], 'hash-site')
      assert.equal(created.status, 201, created.text)
      const theirs = Buffer.from('only in a site of another user')
      assert.equal((await publish(other.token, [...bundle(), { path: 'x.txt', content: theirs.toString() }])).status, 201)
      const missingA = sha256(Buffer.from('never published'))
      const res = await server.api('POST', `/v1/websites/${created.body.websiteId}/versions`, {
        token: owner.token,
        body: {
          files: [
            ...bundle('Hashes'),
            { path: 'known.css', sha256: sha256(known) },
            { path: 'a.txt', sha256: missingA },
            { path: 'b.txt', sha256: sha256(theirs) },
          ],
        },
      })
      assert.equal(res.status, 422, res.text)
      assert.equal(res.body.error.code, 'PUBLISH_INVALID')
      assert.match(res.body.error.message, /send those files with content instead/)
      assert.deepEqual(
        res.body.error.violations.map((v: any) => [v.code, v.path, v.detail]),
        [
          ['UNKNOWN_HASH', 'a.txt', missingA],
          ['UNKNOWN_HASH', 'b.txt', sha256(theirs)],
        ],
      )
      const versions = await server.api('GET', `/v1/websites/${created.body.websiteId}/versions`, { token: owner.token })
      assert.equal(versions.body.versions.length, 1, 'nothing was stored')
    })

    test('a hash may name a completed upload of the caller, or a file of a site they edit', async () => {
      const bytes = Buffer.from('uploaded, then named by hash')
      await upload(owner.token, bytes, { filename: 'note.txt' })
      const byHash = await publish(owner.token, [...bundle(), { path: 'note.txt', sha256: sha256(bytes) }], 'upload-by-hash')
      assert.equal(byHash.status, 201, byHash.text)
      assert.ok((await server.site('upload-by-hash', '/note.txt')).body.equals(bytes))
      assert.equal((await publish(other.token, [...bundle(), { path: 'note.txt', sha256: sha256(bytes) }])).status, 422, "not someone else's upload")

      const editor = await server.user()
      await server.server.services.members.share(byHash.body.websiteId, editor.email, 'editor')
      const edited = await publish(editor.token, [...bundle(), { path: 'copy.txt', sha256: sha256(bytes) }], 'editor-copy')
      assert.equal(edited.status, 201, edited.text)
      assert.ok((await server.site('editor-copy', '/copy.txt')).body.equals(bytes))
    })
  })
}
