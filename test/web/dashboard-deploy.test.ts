/**
 * Deploying from the dashboard over real HTTP, on every store: the `.zip` form as a browser
 * without JavaScript sends it (a new site, a version stored for review), hostile archives (not a
 * zip, `../x`, a symbolic link, too many entries, a zip bomb, one that lies about its sizes), a
 * refused bundle listing every violation, and the drop area's JSON calls (which hashes the server
 * lacks, uploads, a publish by sha256) with their CSRF token. Every refusal stores nothing.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { MAX_FOLDER_ENTRIES } from '../../src/core/folder-skips.js'
import { PNG, sha256 } from '../helpers/factories.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'
import { captured, uniqueEmail, WebVisitor } from '../helpers/web.ts'
import { makeZip } from '../helpers/zip.ts'

const SITE_FILES = [
  { name: 'dist/index.html', data: '<!doctype html><title>Zipped</title><link rel="stylesheet" href="assets/css/site.css"><img src="img/dot.png" alt="">' },
  { name: 'dist/assets/css/site.css', data: 'body { color: #333 }' },
  { name: 'dist/img/dot.png', data: PNG },
  { name: 'dist/.DS_Store', data: 'junk' },
  { name: 'dist/node_modules/x/index.js', data: 'junk' },
  { name: 'dist/drafts/old.html', data: '<p>old</p>' },
  { name: 'dist/.plinthignore', data: 'drafts/\n' },
]

for (const store of STORES) {
  describe(`deploying from the dashboard (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    let person: WebVisitor

    before(async () => {
      server = await startTestServer(store.name)
      person = new WebVisitor(server)
      await person.signUp(uniqueEmail('dropper'))
    })
    after(async () => server?.close())

    /** Rows of the tables a publish writes, to show that a refusal wrote none. */
    async function stored() {
      const db = server.server.db.kysely
      const count = async (table: 'websites' | 'versions' | 'blobs' | 'uploads') =>
        Number(
          (
            await db
              .selectFrom(table)
              .select((eb) => eb.fn.countAll().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        )
      return { websites: await count('websites'), versions: await count('versions'), blobs: await count('blobs'), uploads: await count('uploads') }
    }

    /** The .zip form sent as a browser sends it: multipart, with the page's CSRF token. */
    async function sendZip(action: string, zip: Buffer | null, fields: Record<string, string>, accept = 'text/html') {
      await person.get('/dashboard')
      const form = new FormData()
      form.set('_csrf', person.csrf!)
      for (const [name, value] of Object.entries(fields)) form.set(name, value)
      if (zip) form.set('bundle', new Blob([new Uint8Array(zip)], { type: 'application/zip' }), 'site.zip')
      const response = await fetch(server.url + action, { method: 'POST', body: form, redirect: 'manual', headers: { cookie: person.cookieHeader(), accept } })
      return { status: response.status, location: response.headers.get('location'), text: await response.text() }
    }

    /** A call of the drop area's script: JSON with the CSRF token in X-CSRF-Token. */
    async function call(path: string, body: unknown, csrf: string | null = person.csrf) {
      const response = await fetch(server.url + path, {
        method: 'POST',
        body: JSON.stringify(body),
        headers: { cookie: person.cookieHeader(), 'content-type': 'application/json', accept: 'application/json', ...(csrf ? { 'x-csrf-token': csrf } : {}) },
      })
      const text = await response.text()
      return { status: response.status, body: text ? JSON.parse(text) : undefined }
    }

    test('a .zip sent without JavaScript publishes a new site from inside its one folder, skipping what a deploy skips', async () => {
      const sent = await sendZip('/dashboard/deploy/zip', makeZip(SITE_FILES), { name: 'Zipped Site', category: 'portfolio' })
      assert.equal(sent.status, 303, sent.text)
      const match = /^\/dashboard\/sites\/(web_[A-Za-z0-9]+)\/versions\/1\?done=deployed$/.exec(sent.location ?? '')
      assert.ok(match, `redirected to the new version: ${sent.location}`)
      const page = await person.get(sent.location!)
      assert.match(page.text, /Published: v1 is live\./)
      const versions = await call(`/dashboard/deploy/missing`, { hashes: [sha256(PNG)] })
      assert.deepEqual(versions.body, { missing: [] }, 'the published image is now held')

      const site = await person.get(`/dashboard/sites/${match[1]}`)
      const slug = captured(/http:\/\/([a-z0-9-]+)\.plinth\.test:8080\//, site.text)
      assert.match((await server.site(slug)).body.toString(), /<title>Zipped<\/title>/)
      assert.deepEqual((await server.site(slug, '/img/dot.png')).body, PNG)
      for (const skipped of ['/.DS_Store', '/node_modules/x/index.js', '/drafts/old.html', '/.plinthignore']) {
        assert.equal((await server.site(slug, skipped)).status, 404, `${skipped} is skipped`)
      }
    })

    test('a .zip for an existing site is stored for review unless it is to go live', async () => {
      const first = await sendZip('/dashboard/deploy/zip', makeZip([{ name: 'index.html', data: '<h1>one</h1>' }]), { category: 'other', name: 'Review Site' })
      const websiteId = /sites\/(web_[A-Za-z0-9]+)\//.exec(first.location!)![1]!
      const second = await sendZip(`/dashboard/sites/${websiteId}/deploy/zip`, makeZip([{ name: 'index.html', data: '<h1>two</h1>' }]), {
        message: 'From a zip',
      })
      assert.equal(second.status, 303)
      assert.equal(second.location, `/dashboard/sites/${websiteId}/versions/2?done=deployed`)
      const page = await person.get(second.location)
      assert.match(page.text, /v2 is stored for review/)
      assert.match(page.text, /Make v2 live/)
      assert.match(page.text, /From a zip/)
      const live = await sendZip(`/dashboard/sites/${websiteId}/deploy/zip`, makeZip([{ name: 'index.html', data: '<h1>three</h1>' }]), { promote: 'true' })
      assert.match((await person.get(live.location!)).text, /v3 is live/)
    })

    test('a refused .zip lists every violation on the page and stores nothing', async () => {
      const before = await stored()
      const zip = makeZip([
        { name: 'about.html', data: '<script src="https://cdn.example.com/x.js"></script><iframe src="https://example.com"></iframe>' },
        { name: 'big.bin', data: Buffer.alloc(3 * 1024 * 1024, 7), deflate: true },
      ])
      const sent = await sendZip('/dashboard/deploy/zip', zip, { name: 'Refused', category: 'other' })
      assert.equal(sent.status, 422)
      assert.match(sent.text, /index\.html/, 'the missing index.html')
      assert.match(sent.text, /<h1>Not published<\/h1>/)
      assert.match(sent.text, /<code>about\.html<\/code>: [^<]*cdn\.example\.com/)
      assert.match(sent.text, /<code>about\.html<\/code>: [^<]*iframe/i)
      assert.match(sent.text, /<code>big\.bin<\/code>: [^<]*MiB/)
      assert.match(sent.text, /Nothing was stored/)
      assert.deepEqual(await stored(), before)
    })

    const hostile: Array<[string, Buffer, RegExp]> = [
      ['not a zip', Buffer.from('<html>not a zip</html>'), /not a zip archive/],
      [
        'a path leaving the folder',
        makeZip([
          { name: 'index.html', data: 'ok' },
          { name: '../x', data: 'escape' },
        ]),
        /&quot;\.\.\/x&quot;|"\.\.\/x"|\.\.\/x/,
      ],
      ['an absolute path', makeZip([{ name: '/etc/x', data: 'escape' }]), /points outside the folder/],
      [
        'a symbolic link',
        makeZip([
          { name: 'index.html', data: 'ok' },
          { name: 'link', data: '/etc/passwd', mode: 0o120777 },
        ]),
        /symbolic link/,
      ],
      [
        'too many entries',
        makeZip(Array.from({ length: MAX_FOLDER_ENTRIES + 1 }, (_, i) => ({ name: `f${i}.txt`, data: '', deflate: false }))),
        /more than 10000/,
      ],
      [
        'a zip bomb over the bundle limit',
        makeZip([
          { name: 'index.html', data: 'ok' },
          { name: 'zeros.txt', data: Buffer.alloc(64 * 1024 * 1024) },
        ]),
        /more than the 8 MiB/,
      ],
      ['a bomb that declares a small size', makeZip([{ name: 'index.html', data: Buffer.alloc(32 * 1024 * 1024), declaredSize: 10 }]), /index\.html/],
    ]
    for (const [what, zip, message] of hostile) {
      test(`a .zip with ${what} gets a clear error page and stores nothing`, async () => {
        const before = await stored()
        const sent = await sendZip('/dashboard/deploy/zip', zip, { name: 'Hostile', category: 'other' })
        assert.equal(sent.status, 422, sent.text.slice(0, 500))
        assert.match(sent.text, /<h1>Not published<\/h1>/)
        assert.match(sent.text, /The \.zip cannot be published/)
        assert.match(sent.text, message)
        assert.deepEqual(await stored(), before)
        const json = await sendZip('/dashboard/deploy/zip', zip, { name: 'Hostile', category: 'other' }, 'application/json')
        assert.equal(JSON.parse(json.text).error.code, 'ARCHIVE_INVALID')
      })
    }

    test('a .zip form without a file, or without its CSRF token, is refused', async () => {
      const empty = await sendZip('/dashboard/deploy/zip', null, { name: 'No file', category: 'other' })
      assert.equal(empty.status, 422)
      assert.match(empty.text, /Choose a \.zip/)
      const form = new FormData()
      form.set('category', 'other')
      form.set('bundle', new Blob([new Uint8Array(makeZip([{ name: 'index.html', data: 'x' }]))]), 'site.zip')
      const forged = await fetch(server.url + '/dashboard/deploy/zip', {
        method: 'POST',
        body: form,
        redirect: 'manual',
        headers: { cookie: person.cookieHeader() },
      })
      assert.equal(forged.status, 403)
    })

    test('the drop area publishes by sha256 what the server holds and sends only the rest', async () => {
      await person.get('/dashboard')
      const html = '<!doctype html><title>Dropped</title><img src="a.png" alt="">'
      const asked = await call('/dashboard/deploy/missing', { hashes: [sha256(html), sha256(PNG)] })
      assert.equal(asked.status, 200)
      const created = await call('/dashboard/deploy', {
        name: 'Dropped',
        category: 'other',
        files: [
          { path: 'index.html', content: Buffer.from(html).toString('base64'), contentEncoding: 'base64' },
          { path: 'a.png', content: PNG.toString('base64'), contentEncoding: 'base64' },
        ],
      })
      assert.equal(created.status, 201, JSON.stringify(created.body))
      assert.equal(created.body.filesSent, 2)
      assert.equal(created.body.versionPage, `/dashboard/sites/${created.body.websiteId}/versions/1`)
      assert.deepEqual((await call('/dashboard/deploy/missing', { hashes: [sha256(html), sha256(PNG), 'f'.repeat(64)] })).body, { missing: ['f'.repeat(64)] })

      const uploadsBefore = (await stored()).uploads
      const again = await call(`/dashboard/sites/${created.body.websiteId}/deploy`, {
        files: [
          { path: 'index.html', sha256: sha256(html) },
          { path: 'a.png', sha256: sha256(PNG) },
        ],
        promote: false,
      })
      assert.equal(again.status, 201, JSON.stringify(again.body))
      assert.deepEqual([again.body.version, again.body.isCurrent, again.body.filesSent, again.body.filesReused, again.body.bytesInline], [2, false, 0, 2, 0])
      assert.equal((await stored()).uploads, uploadsBefore, 'no upload reserved')
    })

    test('the drop area reserves uploads on its own origin, and its calls need the CSRF token', async () => {
      await person.get('/dashboard')
      const reserved = await call('/dashboard/deploy/uploads', { files: [{ filename: 'big.png', size: PNG.length }] })
      assert.equal(reserved.status, 201)
      const upload = reserved.body.uploads[0]
      assert.match(upload.uploadUrl, /^\/v1\/uploads\/upl_[A-Za-z0-9]+\/content\?expires=\d+&signature=/)
      const put = await fetch(server.url + upload.uploadUrl, { method: 'PUT', body: new Uint8Array(PNG) })
      assert.equal(put.status, 200)

      const before = await stored()
      const forged = await call('/dashboard/deploy', { category: 'other', files: [{ path: 'index.html', content: 'x' }] }, null)
      assert.equal(forged.status, 403)
      const refused = await call('/dashboard/deploy', { category: 'other', files: [{ path: 'page.html', content: '<iframe src="/"></iframe>' }] })
      assert.equal(refused.status, 422)
      assert.equal(refused.body.error.code, 'PUBLISH_INVALID')
      assert.deepEqual(
        refused.body.error.violations.map((v: { code: string }) => v.code),
        ['MISSING_INDEX', 'IFRAME'],
      )
      const invalid = await call('/dashboard/deploy/missing', { hashes: ['nope'] })
      assert.equal(invalid.status, 422)
      assert.equal(invalid.body.error.code, 'VALIDATION_FAILED')
      assert.deepEqual(await stored(), before)
    })

    test('a signed-out call is sent to sign in, and a stranger cannot publish to a site not theirs', async () => {
      const signedOut = await fetch(server.url + '/dashboard/deploy/missing', {
        method: 'POST',
        body: '{"hashes":[]}',
        headers: { 'content-type': 'application/json' },
        redirect: 'manual',
      })
      assert.equal(signedOut.status, 403, 'no session, no CSRF token')
      const created = await call('/dashboard/deploy', { category: 'other', files: [{ path: 'index.html', content: 'mine' }] })
      const stranger = new WebVisitor(server)
      await stranger.signUp(uniqueEmail('stranger'))
      await stranger.get('/dashboard')
      const response = await fetch(`${server.url}/dashboard/sites/${created.body.websiteId}/deploy`, {
        method: 'POST',
        body: JSON.stringify({ files: [{ path: 'index.html', content: 'theirs' }] }),
        headers: { cookie: stranger.cookieHeader(), 'content-type': 'application/json', 'x-csrf-token': stranger.csrf! },
      })
      assert.equal(response.status, 404)
      assert.equal((await response.json()).error.code, 'NOT_FOUND')
    })
  })
}
