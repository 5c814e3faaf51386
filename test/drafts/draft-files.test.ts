/**
 * The files of a draft over real HTTP: writing (by content, sha256 or upload), exact-text edits
 * (no match, one, several), moves, deletes and reads; every write checked at once by the rules of
 * one file and the site's limits for the draft as a whole, a refused one writing nothing (no row,
 * no blob); concurrent writes to one draft losing none; serving told of each change.
 */
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { MAX_EDITS } from '../../src/core/limits.ts'
import { draftLabel } from '../../src/core/site-address.ts'
import { assertError, createSite, createUser, PNG_BASE64, sha256, type TestUser } from '../helpers/factories.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

/** Small bundle limits, so that a few files reach them. */
const LIMITS = { PLINTH_MAX_FILES: '8', PLINTH_MAX_PAGES: '3', PLINTH_MAX_FILE_BYTES: '4096', PLINTH_MAX_BUNDLE_BYTES: '16384' }

const page = (title: string, body = '') => `<!doctype html><html><head><title>${title}</title></head><body><h1>${title}</h1>${body}</body></html>`

for (const store of STORES) {
  describe(`draft files (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    before(async () => {
      server = await startTestServer(store.name, LIMITS)
    })
    after(() => server?.close())

    const blobExists = (hash: string) => existsSync(path.join(server.store.dataDir, 'blobs', hash.slice(0, 2), hash))

    /** A new site of a new user (or the given one) with a draft of it, and calls on that draft. */
    async function draftOfNewSite(user?: TestUser) {
      const owner = user ?? (await createUser(server))
      const site = await createSite(server, { owner })
      const created = await server.api('POST', `/v1/websites/${site.websiteId}/drafts`, { token: owner.token })
      assert.equal(created.status, 201, created.text)
      const base = `/v1/websites/${site.websiteId}/drafts/${created.body.draftId}`
      const call = (method: string, suffix: string, body?: unknown) =>
        server.api(method, base + suffix, { token: owner.token, ...(body === undefined ? {} : { body }) })
      return {
        owner,
        site,
        draftId: created.body.draftId as string,
        call,
        put: (file: string, body: unknown) => call('PUT', `/files/${file}`, body),
        edit: (file: string, edits: unknown) => call('PATCH', `/files/${file}`, { edits }),
        read: (file: string, query = '') => call('GET', `/files/${file}${query}`),
        files: async () =>
          (await call('GET', '')).body.files as Array<{
            path: string
            sha256: string
            size: number
            contentType: string
            change: string
            previousPath?: string
          }>,
      }
    }

    test('a write creates a file (201) or replaces one (200), answering its path, size, sha256 and type', async () => {
      const draft = await draftOfNewSite()
      const content = page('About')
      const created = await draft.put('about.html', { content })
      assert.equal(created.status, 201, created.text)
      assert.deepEqual(created.body, { path: 'about.html', size: Buffer.byteLength(content), sha256: sha256(content), contentType: 'text/html' })
      const replaced = await draft.put('about.html', { content: page('About us') })
      assert.equal(replaced.status, 200, replaced.text)
      assert.equal(replaced.body.sha256, sha256(page('About us')))
      const css = await draft.put('style.css', { content: 'body { color: red; }' })
      assert.equal(css.status, 200)
      const binary = await draft.put('img/dot.png', { content: PNG_BASE64, contentEncoding: 'base64' })
      assert.equal(binary.status, 201)
      assert.equal(binary.body.contentType, 'image/png')
      const typed = await draft.put('data/feed', { content: '{"a":1}', contentType: 'application/json; charset=utf-8' })
      assert.equal(typed.body.contentType, 'application/json')
      const spaced = await draft.put('my%20page.html', { content: page('Spaced') })
      assert.equal(spaced.body.path, 'my page.html')
      const files = await draft.files()
      assert.deepEqual(
        files.map((f) => [f.path, f.change]),
        [
          ['about.html', 'added'],
          ['data/feed', 'added'],
          ['img/dot.png', 'added'],
          ['index.html', 'unchanged'],
          ['my page.html', 'added'],
          ['style.css', 'changed'],
        ],
      )
    })

    test('a write by sha256 takes bytes the caller may use (a version or a draft of a site they edit); others are UNKNOWN_HASH', async () => {
      const draft = await draftOfNewSite()
      const [index] = await draft.files()
      const reused = await draft.put('copy.html', { sha256: index!.sha256 })
      assert.equal(reused.status, 201, reused.text)
      assert.equal(reused.body.size, index!.size)
      const own = await draft.put('fresh.css', { content: 'h1 { margin: 0; }' })
      // Bytes only a draft holds: usable by hash in another draft of a site the caller edits.
      const second = await draftOfNewSite(draft.owner)
      assert.equal((await second.put('from-draft.css', { sha256: own.body.sha256 })).status, 201)
      const stranger = await draftOfNewSite()
      const refused = await stranger.put('stolen.css', { sha256: own.body.sha256 })
      assertError(refused, 422, 'PUBLISH_INVALID', /write it again/)
      assert.deepEqual(
        refused.body.error.violations.map((v: { code: string; path: string }) => [v.code, v.path]),
        [['UNKNOWN_HASH', 'stolen.css']],
      )
    })

    test('a write by uploadId takes the bytes of a completed upload of the caller', async () => {
      const draft = await draftOfNewSite()
      const bytes = Buffer.from('body { background: #eee; }')
      const reserved = await server.api('POST', '/v1/uploads', { token: draft.owner.token, body: { files: [{ filename: 'x.css', size: bytes.length }] } })
      const upload = reserved.body.uploads[0]
      const sent = await fetch(upload.uploadUrl.replace(/^https?:\/\/[^/]+/, server.url), { method: 'PUT', body: bytes })
      assert.equal(sent.status, 200)
      const written = await draft.put('uploaded.css', { uploadId: upload.uploadId })
      assert.equal(written.status, 201, written.text)
      assert.equal(written.body.sha256, sha256(bytes))
    })

    test('a write gives exactly one of content, sha256 and uploadId, contentEncoding only with content', async () => {
      const draft = await draftOfNewSite()
      assertError(await draft.put('a.css', {}), 422, 'VALIDATION_FAILED')
      const both = await draft.put('a.css', { content: 'p{}', sha256: sha256('p{}') })
      assertError(both, 422, 'VALIDATION_FAILED')
      assert.match(both.body.error.fields.body, /exactly one/)
      const encoding = await draft.put('a.css', { sha256: sha256('p{}'), contentEncoding: 'utf8' })
      assertError(encoding, 422, 'VALIDATION_FAILED')
      assert.deepEqual(Object.keys(encoding.body.error.fields), ['contentEncoding'])
      assertError(await draft.put('a.css', { content: 'p{}', path: 'b.css' }), 422, 'VALIDATION_FAILED')
    })

    test('a file that breaks its rules is refused with every violation, and nothing is written: no row, no blob', async () => {
      const draft = await draftOfNewSite()
      const before = await draft.files()
      const bad = page('Bad', '<script src="https://cdn.example.com/x.js"></script><iframe src="/x.html"></iframe>')
      const refused = await draft.put('bad.html', { content: bad })
      assertError(refused, 422, 'PUBLISH_INVALID')
      assert.deepEqual(
        refused.body.error.violations.map((v: { code: string; path: string }) => [v.code, v.path]),
        [
          ['EXTERNAL_URL', 'bad.html'],
          ['IFRAME', 'bad.html'],
        ],
      )
      const cases: Array<[string, unknown, string]> = [
        ['a//b.html', { content: page('x') }, 'INVALID_PATH'],
        ['img.png', { content: '!!not base64!!', contentEncoding: 'base64' }, 'INVALID_ENCODING'],
        ['big.txt', { content: 'x'.repeat(5000) }, 'FILE_TOO_LARGE'],
        ['_redirects', { content: '/a /b 999\n' }, 'INVALID_REDIRECTS'],
        ['style.css', { content: '@import url("https://fonts.example.com/x.css");' }, 'EXTERNAL_URL'],
      ]
      for (const [file, body, code] of cases) {
        const res = await draft.put(file, body)
        assertError(res, 422, 'PUBLISH_INVALID')
        assert.deepEqual(
          res.body.error.violations.map((v: { code: string }) => v.code),
          [code],
          file,
        )
      }
      assert.deepEqual(await draft.files(), before, 'no file was written or replaced')
      assert.equal(blobExists(sha256(bad)), false, 'no blob was kept')
      assert.equal(blobExists(sha256('x'.repeat(5000))), false)
    })

    test('the draft as a whole stays within the bundle limits: a write that would grow it past one is refused, one that shrinks it is not', async () => {
      const draft = await draftOfNewSite()
      // Files: the 2 of the bundle, then up to 8.
      for (let i = 1; i <= 6; i++) assert.equal((await draft.put(`f${i}.txt`, { content: `file ${i}` })).status, 201)
      const tooMany = await draft.put('f7.txt', { content: 'one more' })
      assertError(tooMany, 422, 'PUBLISH_INVALID', /past the limits/)
      assert.deepEqual(
        tooMany.body.error.violations.map((v: { code: string; path: string }) => [v.code, v.path]),
        [['TOO_MANY_FILES', 'f7.txt']],
      )
      assert.equal((await draft.put('f6.txt', { content: 'replaced, not added' })).status, 200)
      assert.equal(blobExists(sha256('one more')), false, 'the refused bytes are gone again')

      // Bytes: 16384 in all, 4096 a file.
      const sized = await draftOfNewSite()
      const big = (n: number) => `${n}`.padEnd(4000, '.')
      for (let i = 1; i <= 4; i++) assert.equal((await sized.put(`b${i}.txt`, { content: big(i) })).status, 201)
      const tooLarge = await sized.put('b5.txt', { content: big(5) })
      assertError(tooLarge, 422, 'PUBLISH_INVALID')
      assert.deepEqual(
        tooLarge.body.error.violations.map((v: { code: string }) => v.code),
        ['BUNDLE_TOO_LARGE'],
      )
      assert.equal((await sized.put('b4.txt', { content: 'smaller' })).status, 200)
      assert.equal((await sized.put('b5.txt', { content: big(5) })).status, 201)

      // Pages: 3 HTML pages, index.html among them; a move can make one.
      const pages = await draftOfNewSite()
      assert.equal((await pages.put('a.html', { content: page('A') })).status, 201)
      assert.equal((await pages.put('b.html', { content: page('B') })).status, 201)
      const tooManyPages = await pages.put('c.html', { content: page('C') })
      assert.deepEqual(
        tooManyPages.body.error.violations.map((v: { code: string }) => v.code),
        ['TOO_MANY_PAGES'],
      )
      assert.equal((await pages.put('c.txt', { content: page('C') })).status, 201)
      const moved = await pages.call('POST', '/moves', { from: 'c.txt', to: 'c.html' })
      assertError(moved, 422, 'PUBLISH_INVALID')
      assert.ok(
        (await pages.files()).some((f) => f.path === 'c.txt'),
        'the refused move changed nothing',
      )
    })

    test('an edit replaces text that occurs exactly once; none or several is refused, naming the edit, the file and the count', async () => {
      const draft = await draftOfNewSite()
      const text = ['<!doctype html><html><head><title>Bakery</title></head><body>', '<p>Fresh bread</p>', '<p>Fresh cakes</p>', '</body></html>', ''].join(
        '\n',
      )
      await draft.put('index.html', { content: text })
      const noMatch = await draft.edit('index.html', [{ oldText: '<p>Fresh buns</p>', newText: '<p>Rolls</p>' }])
      assertError(noMatch, 422, 'EDIT_NO_MATCH', /^Edit 1 of 1: its oldText occurs 0 times in index\.html; the closest line is 2: "<p>Fresh bread<\/p>"/)
      assert.deepEqual(noMatch.body.error.fields, { 'edits[0].oldText': 'occurs 0 times in index.html' })
      const several = await draft.edit('index.html', [{ oldText: '<p>Fresh', newText: '<p>Warm' }])
      assertError(several, 422, 'EDIT_AMBIGUOUS', /occurs 2 times in index\.html/)
      const secondFails = await draft.edit('index.html', [
        { oldText: 'bread', newText: 'loaves' },
        { oldText: 'pies', newText: 'tarts' },
      ])
      assertError(secondFails, 422, 'EDIT_NO_MATCH', /^Edit 2 of 2/)
      assert.equal((await draft.read('index.html')).body.content, text, 'nothing was changed')

      const edited = await draft.edit('index.html', [
        { oldText: 'bread', newText: 'loaves' },
        { oldText: 'loaves</p>\n<p>Fresh', newText: 'loaves</p>\n<p>Sweet' },
      ])
      assert.equal(edited.status, 200, edited.text)
      const expected = text.replace('bread', 'loaves').replace('<p>Fresh cakes', '<p>Sweet cakes')
      assert.deepEqual(edited.body, { path: 'index.html', size: Buffer.byteLength(expected), sha256: sha256(expected), contentType: 'text/html' })
      assert.equal((await draft.read('index.html')).body.content, expected)
    })

    test('edits in a row each start from the bytes stored, a leading byte-order mark included', async () => {
      const draft = await draftOfNewSite()
      await draft.put('index.html', { content: page('Menu', '<p>soup</p>') })
      for (const [oldText, newText] of [
        ['soup', 'stew'],
        ['<!doctype', '\ufeff<!doctype'],
        ['stew', 'pie'],
      ] as const) {
        const edited = await draft.edit('index.html', [{ oldText, newText }])
        assert.equal(edited.status, 200, `${oldText} -> ${newText}: ${edited.text}`)
      }
      const stored = `\ufeff${page('Menu', '<p>pie</p>')}`
      assert.equal((await draft.files()).find((file) => file.path === 'index.html')?.sha256, sha256(stored))
      const again = await draft.edit('index.html', [{ oldText: 'pie', newText: 'tart' }])
      assert.equal(again.status, 200, again.text)
      assert.equal(again.body.sha256, sha256(stored.replace('pie', 'tart')))
    })

    test('an edit is checked like a write; binary files, too many edits and missing files are refused', async () => {
      const draft = await draftOfNewSite()
      const before = await draft.read('index.html')
      const breaking = await draft.edit('index.html', [{ oldText: '</body>', newText: '<iframe src="/x"></iframe></body>' }])
      assertError(breaking, 422, 'PUBLISH_INVALID')
      assert.deepEqual((await draft.read('index.html')).body, before.body)
      await draft.put('dot.png', { content: PNG_BASE64, contentEncoding: 'base64' })
      const binary = await draft.edit('dot.png', [{ oldText: 'PNG', newText: 'GIF' }])
      assertError(binary, 422, 'VALIDATION_FAILED', /only text files can be edited/)
      const tooMany = Array.from({ length: MAX_EDITS + 1 }, (_, i) => ({ oldText: `x${i}`, newText: 'y' }))
      assertError(await draft.edit('index.html', tooMany), 422, 'VALIDATION_FAILED')
      assertError(await draft.edit('index.html', [{ oldText: '', newText: 'y' }]), 422, 'VALIDATION_FAILED')
      assertError(await draft.edit('missing.html', [{ oldText: 'a', newText: 'b' }]), 404, 'NOT_FOUND', /no file "missing\.html"/)
      // Serving rules are text whatever their type.
      await draft.put('_redirects', { content: '/old /new 301\n' })
      const redirects = await draft.edit('_redirects', [{ oldText: '/new', newText: '/newer' }])
      assert.equal(redirects.status, 200, redirects.text)
      assert.deepEqual((await draft.read('_redirects')).body.content, '/old /newer 301\n')
    })

    test('a read gives text whole or by lines, and binaries as base64', async () => {
      const draft = await draftOfNewSite()
      const text = 'one\ntwo\nthree\nfour\n'
      await draft.put('notes.txt', { content: text })
      const whole = await draft.read('notes.txt')
      assert.deepEqual(whole.body, {
        path: 'notes.txt',
        size: text.length,
        sha256: sha256(text),
        contentType: 'text/plain',
        contentEncoding: 'utf8',
        content: text,
      })
      const middle = await draft.read('notes.txt', '?offset=2&limit=2')
      assert.equal(middle.status, 200, middle.text)
      assert.equal(middle.body.content, 'two\nthree\n')
      assert.deepEqual(middle.body.lines, { from: 2, to: 3, total: 4 })
      const beyond = await draft.read('notes.txt', '?offset=9')
      assert.deepEqual([beyond.body.content, beyond.body.lines], ['', { from: 9, to: 8, total: 4 }])
      assertError(await draft.read('notes.txt', '?offset=0'), 422, 'VALIDATION_FAILED')
      assertError(await draft.read('notes.txt', '?limit=two'), 422, 'VALIDATION_FAILED')
      await draft.put('dot.png', { content: PNG_BASE64, contentEncoding: 'base64' })
      const png = await draft.read('dot.png', '?offset=1&limit=1')
      assert.deepEqual([png.body.contentEncoding, png.body.content, png.body.lines], ['base64', PNG_BASE64, undefined])
      assertError(await draft.read('nothing.txt'), 404, 'NOT_FOUND')
    })

    test('a delete removes one file (204); a second is 404', async () => {
      const draft = await draftOfNewSite()
      const deleted = await draft.call('DELETE', '/files/style.css')
      assert.equal(deleted.status, 204)
      assert.equal(deleted.text, '')
      assertError(await draft.call('DELETE', '/files/style.css'), 404, 'NOT_FOUND')
      assert.deepEqual(
        (await draft.files()).map((f) => f.path),
        ['index.html'],
      )
    })

    test('a move renames a file: its bytes stay, the type its path implied follows, and the path must be free', async () => {
      const draft = await draftOfNewSite()
      const [, css] = await draft.files()
      const moved = await draft.call('POST', '/moves', { from: 'style.css', to: 'css/site.css' })
      assert.equal(moved.status, 200, moved.text)
      assert.deepEqual(moved.body, { path: 'css/site.css', size: css!.size, sha256: css!.sha256, contentType: 'text/css' })
      assert.deepEqual(
        (await draft.files()).find((f) => f.path === 'css/site.css'),
        { ...css, path: 'css/site.css', change: 'moved', previousPath: 'style.css' },
      )
      await draft.put('notes.txt', { content: 'plain words' })
      const retyped = await draft.call('POST', '/moves', { from: 'notes.txt', to: 'notes.md' })
      assert.equal(retyped.body.contentType, 'text/markdown')
      await draft.put('data.bin', { content: 'typed text', contentType: 'text/plain' })
      const kept = await draft.call('POST', '/moves', { from: 'data.bin', to: 'data2.bin' })
      assert.equal(kept.body.contentType, 'text/plain', 'a type given explicitly stays')

      const taken = await draft.call('POST', '/moves', { from: 'index.html', to: 'css/site.css' })
      assertError(taken, 422, 'VALIDATION_FAILED')
      assert.deepEqual(Object.keys(taken.body.error.fields), ['to'])
      assertError(await draft.call('POST', '/moves', { from: 'index.html', to: 'index.html' }), 422, 'VALIDATION_FAILED')
      assertError(await draft.call('POST', '/moves', { from: 'gone.html', to: 'here.html' }), 404, 'NOT_FOUND')
      // Checked again at the new path: markup that was text is a page now.
      await draft.put('snippet.txt', { content: '<iframe src="/x"></iframe>' })
      const unsafe = await draft.call('POST', '/moves', { from: 'snippet.txt', to: 'snippet.html' })
      assertError(unsafe, 422, 'PUBLISH_INVALID')
      assert.deepEqual(
        unsafe.body.error.violations.map((v: { code: string; path: string }) => [v.code, v.path]),
        [['IFRAME', 'snippet.html']],
      )
      assert.ok((await draft.files()).some((f) => f.path === 'snippet.txt'))
    })

    test('concurrent edits of one file and writes of others all land: none is lost', async () => {
      const draft = await draftOfNewSite()
      const markers = Array.from({ length: 8 }, (_, i) => `marker-${i}`)
      await draft.put('list.txt', { content: markers.join('\n') })
      const results = await Promise.all([
        ...markers.map((m) => draft.edit('list.txt', [{ oldText: m, newText: `${m} done` }])),
        ...[1, 2, 3].map((i) => draft.put(`w${i}.txt`, { content: `write ${i}` })),
      ])
      for (const res of results) assert.ok(res.status === 200 || res.status === 201, res.text)
      assert.equal((await draft.read('list.txt')).body.content, markers.map((m) => `${m} done`).join('\n'))
      const paths = (await draft.files()).map((f) => f.path)
      for (const i of [1, 2, 3]) assert.ok(paths.includes(`w${i}.txt`))
    })

    test("every change tells serving, keyed by the draft's preview label, never the live slug", async () => {
      const draft = await draftOfNewSite()
      const events = server.server.siteEvents
      const told: string[] = []
      const original = events.siteChanged.bind(events)
      events.siteChanged = (key) => {
        told.push(key)
        return original(key)
      }
      try {
        await draft.put('a.txt', { content: 'a' })
        await draft.edit('a.txt', [{ oldText: 'a', newText: 'b' }])
        await draft.call('POST', '/moves', { from: 'a.txt', to: 'b.txt' })
        await draft.call('DELETE', '/files/b.txt')
        await draft.put('bad.html', { content: '<iframe></iframe>' })
      } finally {
        events.siteChanged = original
      }
      const label = draftLabel(draft.site.slug, draft.draftId)
      assert.ok(told.length >= 4, told.join(', '))
      assert.deepEqual([...new Set(told)], [label])
    })
  })
}
