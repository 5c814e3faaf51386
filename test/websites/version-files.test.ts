/**
 * A version's files read back (text whole or by lines, binaries as base64, paths with slashes and
 * percent-encoded characters) and two versions compared file by file, over real HTTP: owners and
 * editors only, a stranger gets 404 as for an unknown site.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { assertError, createVersion, PNG, PNG_BASE64, sha256, siteWithMembers, type TestUser } from '../helpers/factories.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

const page = (title: string) => `<!doctype html>\n<html lang="en">\n<head><title>${title}</title></head>\n<body>\n<h1>${title}</h1>\n</body>\n</html>\n`
const menu = 'Soup\nBread\nCheese\nWine\n'
const otherPng = Buffer.concat([PNG, Buffer.from([0])])

for (const store of STORES) {
  describe(`reading a version's files and comparing versions (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    let owner: TestUser
    let editor: TestUser
    let stranger: TestUser
    let websiteId: string
    let firstId: string
    let secondId: string

    before(async () => {
      server = await startTestServer(store.name)
      const members = await siteWithMembers(server, {
        files: [
          { path: 'index.html', content: page('One') },
          { path: 'menu/today é.txt', content: menu },
          { path: 'logo.png', content: PNG_BASE64, contentEncoding: 'base64' },
          { path: 'old.css', content: 'p { color: red; }' },
          { path: 'about.html', content: page('About') },
          { path: 'photo.png', content: PNG_BASE64, contentEncoding: 'base64' },
        ],
      })
      ;({ owner, editor, stranger } = members)
      websiteId = members.site.websiteId
      firstId = members.site.jobId
      secondId = (
        await createVersion(server, owner, websiteId, {
          files: [
            { path: 'index.html', content: page('Two') },
            { path: 'menu/today é.txt', content: menu },
            { path: 'logo.png', content: otherPng.toString('base64'), contentEncoding: 'base64' },
            { path: 'pages/about.html', content: page('About') },
            { path: 'photo.png', content: PNG_BASE64, contentEncoding: 'base64' },
            { path: 'new.js', content: 'console.log(1)\n' },
          ],
        })
      ).jobId
    })
    after(() => server?.close())

    const read = (user: TestUser, version: string | number, path: string) =>
      server.api('GET', `/v1/websites/${websiteId}/versions/${version}/files/${path}`, { token: user.token })

    test('a text file comes back whole as text, with its size, hash and type', async () => {
      const res = await read(owner, 1, 'index.html')
      assert.equal(res.status, 200, res.text)
      assert.deepEqual(res.body, {
        path: 'index.html',
        size: Buffer.byteLength(page('One')),
        sha256: sha256(page('One')),
        contentType: 'text/html',
        contentEncoding: 'utf8',
        content: page('One'),
      })
    })

    test('a path with slashes and percent-encoded characters names the file; offset and limit give lines', async () => {
      const path = `menu/${encodeURIComponent('today é.txt')}`
      const whole = await read(editor, firstId, path)
      assert.equal(whole.status, 200, whole.text)
      assert.equal(whole.body.path, 'menu/today é.txt')
      assert.equal(whole.body.content, menu)
      const range = await read(editor, 1, `${path}?offset=2&limit=2`)
      assert.equal(range.status, 200, range.text)
      assert.equal(range.body.content, 'Bread\nCheese\n')
      assert.deepEqual(range.body.lines, { from: 2, to: 3, total: 4 })
      const tail = await read(editor, 1, `${path}?offset=4`)
      assert.deepEqual([tail.body.content, tail.body.lines], ['Wine\n', { from: 4, to: 4, total: 4 }])
    })

    test('a binary comes back whole as base64, a range notwithstanding', async () => {
      const res = await read(owner, 2, 'logo.png?limit=1')
      assert.equal(res.status, 200, res.text)
      assert.equal(res.body.contentEncoding, 'base64')
      assert.equal(res.body.contentType, 'image/png')
      assert.deepEqual(Buffer.from(res.body.content, 'base64'), otherPng)
      assert.equal(res.body.sha256, sha256(otherPng))
      assert.equal(res.body.lines, undefined)
    })

    test('a bad range is VALIDATION_FAILED naming it', async () => {
      for (const query of ['offset=0', 'limit=0', 'limit=2001', 'offset=two', 'offset=1.5']) {
        const res = await read(owner, 1, `index.html?${query}`)
        assertError(res, 422, 'VALIDATION_FAILED')
        assert.deepEqual(Object.keys(res.body.error.fields), [query.split('=')[0]], query)
      }
      // A negative number is told its range, not that it is no number.
      for (const [query, field, message] of [
        ['offset=-1', 'offset', 'must be >= 1'],
        ['limit=-5', 'limit', 'must be >= 1'],
      ]) {
        assert.deepEqual((await read(owner, 1, `index.html?${query}`)).body.error.fields, { [field!]: message }, query)
      }
    })

    test('an unknown file, version or site is 404; a stranger gets 404 too', async () => {
      assertError(await read(owner, 1, 'new.js'), 404, 'NOT_FOUND', /new\.js" of version 1/)
      assertError(await read(owner, 1, 'menu'), 404, 'NOT_FOUND')
      assertError(await read(owner, 3, 'index.html'), 404, 'NOT_FOUND')
      assertError(await read(owner, 'job_unknown', 'index.html'), 404, 'NOT_FOUND')
      assertError(await read(stranger, 1, 'index.html'), 404, 'NOT_FOUND', /^Website not found/)
      assertError(await server.api('GET', `/v1/websites/web_unknown/versions/1/files/index.html`, { token: owner.token }), 404, 'NOT_FOUND')
    })

    const diff = (user: TestUser, a: string | number, b: string | number) =>
      server.api('GET', `/v1/websites/${websiteId}/versions/${a}/diff/${b}`, { token: user.token })

    test('comparing two versions lists added, removed, moved and changed files, with a unified diff of changed text', async () => {
      const res = await diff(editor, 1, secondId)
      assert.equal(res.status, 200, res.text)
      assert.deepEqual(res.body.from, { kind: 'version', id: firstId, version: 1 })
      assert.deepEqual(res.body.to, { kind: 'version', id: secondId, version: 2 })
      const byPath = Object.fromEntries(res.body.files.map((f: { path: string }) => [f.path, f]))
      assert.deepEqual(Object.keys(byPath), ['index.html', 'logo.png', 'new.js', 'old.css', 'pages/about.html'], 'unchanged files are left out')
      assert.deepEqual(byPath['pages/about.html'], {
        path: 'pages/about.html',
        status: 'moved',
        previousPath: 'about.html',
        sizeBefore: Buffer.byteLength(page('About')),
        sizeAfter: Buffer.byteLength(page('About')),
      })
      assert.deepEqual(byPath['new.js'], { path: 'new.js', status: 'added', sizeAfter: 15 })
      assert.deepEqual(byPath['old.css'], { path: 'old.css', status: 'removed', sizeBefore: 17 })
      assert.deepEqual(byPath['logo.png'], { path: 'logo.png', status: 'changed', sizeBefore: PNG.length, sizeAfter: otherPng.length }, 'no diff of a binary')
      const html = byPath['index.html']
      assert.equal(html.status, 'changed')
      assert.equal(
        html.diff,
        [
          '--- a/index.html',
          '+++ b/index.html',
          '@@ -1,7 +1,7 @@',
          ' <!doctype html>',
          ' <html lang="en">',
          '-<head><title>One</title></head>',
          '+<head><title>Two</title></head>',
          ' <body>',
          '-<h1>One</h1>',
          '+<h1>Two</h1>',
          ' </body>',
          ' </html>',
          '',
        ].join('\n'),
      )
      assert.equal(html.diffTruncated, undefined)
    })

    test('the other way round, and against itself', async () => {
      const back = await diff(owner, secondId, firstId)
      assert.equal(back.status, 200, back.text)
      const statuses = Object.fromEntries(back.body.files.map((f: { path: string; status: string }) => [f.path, f.status]))
      assert.deepEqual(statuses, { 'about.html': 'moved', 'index.html': 'changed', 'logo.png': 'changed', 'new.js': 'removed', 'old.css': 'added' })
      const same = await diff(owner, 2, 2)
      assert.deepEqual(same.body.files, [])
    })

    test('a text file too large to compare is diffTruncated', async () => {
      const big = (fill: string) => `${'p { margin: 0; }\n'.repeat(40_000)}/* ${fill} */\n`
      const site = await siteWithMembers(server, {
        files: [
          { path: 'index.html', content: page('Big') },
          { path: 'big.css', content: big('one') },
        ],
      })
      const { owner } = site
      await createVersion(server, owner, site.site.websiteId, {
        files: [
          { path: 'index.html', content: page('Big') },
          { path: 'big.css', content: big('two') },
        ],
      })
      const res = await server.api('GET', `/v1/websites/${site.site.websiteId}/versions/1/diff/2`, { token: owner.token })
      assert.equal(res.status, 200, res.text)
      assert.deepEqual(res.body.files, [
        { path: 'big.css', status: 'changed', sizeBefore: big('one').length, sizeAfter: big('two').length, diffTruncated: true },
      ])
    })

    test("a draft is a side too: compared with a version, its files read back through the version's path", async () => {
      const started = await server.api('POST', `/v1/websites/${websiteId}/drafts`, { token: editor.token, body: { baseVersion: 2 } })
      assert.equal(started.status, 201, started.text)
      const draftId: string = started.body.draftId
      const edited = await server.api('PATCH', `/v1/websites/${websiteId}/drafts/${draftId}/files/new.js`, {
        token: editor.token,
        body: { edits: [{ oldText: 'log(1)', newText: 'log(2)' }] },
      })
      assert.equal(edited.status, 200, edited.text)
      const res = await diff(owner, 2, draftId)
      assert.equal(res.status, 200, res.text)
      assert.deepEqual(res.body.to, { kind: 'draft', id: draftId, version: 2 })
      assert.deepEqual(
        res.body.files.map((f: { path: string; status: string; diff?: string }) => [f.path, f.status, f.diff]),
        [['new.js', 'changed', '--- a/new.js\n+++ b/new.js\n@@ -1,1 +1,1 @@\n-console.log(1)\n+console.log(2)\n']],
      )
      const back = await read(owner, draftId, 'new.js')
      assert.equal(back.body.content, 'console.log(2)\n')
      assertError(await diff(stranger, 2, draftId), 404, 'NOT_FOUND')
      assertError(await diff(owner, 'drf_unknown', 2), 404, 'NOT_FOUND', /^Draft not found/)
    })

    test('an unknown version or draft on either side is 404; a stranger gets 404', async () => {
      assertError(await diff(owner, 1, 3), 404, 'NOT_FOUND')
      assertError(await diff(owner, 'drf_unknown', 1), 404, 'NOT_FOUND')
      assertError(await diff(stranger, 1, 2), 404, 'NOT_FOUND', /^Website not found/)
      // An empty side names nothing either.
      assertError(await diff(owner, 1, ''), 404, 'NOT_FOUND', /a path parameter is empty/)
    })
  })
}
