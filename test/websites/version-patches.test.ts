/**
 * A patch: createWebsiteVersion with baseVersion and changes (put, delete, move, edit) instead of
 * the whole bundle, over real HTTP. Each op, the version it makes byte for byte the one the whole
 * bundle makes, VERSION_CONFLICT on a stale base unless overwrite, and every bad request refused
 * whole, naming what is wrong, with nothing stored.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { assertError, createSite, createUser, createVersion, PNG_BASE64, sha256, siteWithMembers, type TestUser } from '../helpers/factories.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

const page = (title: string, body = `<h1>${title}</h1>`) =>
  `<!doctype html>\n<html lang="en">\n<head><title>${title}</title><link rel="stylesheet" href="style.css"></head>\n<body>\n${body}\n</body>\n</html>\n`
const baseFiles = () => [
  { path: 'index.html', content: page('Home', '<h1>Home</h1>\n<p>Open daily</p>') },
  { path: 'style.css', content: 'body { color: #222; }\n' },
  { path: 'notes.txt', content: 'first\nsecond\n' },
  { path: 'data.json', content: '{"a": 1}\n', contentType: 'text/plain' },
  { path: 'logo.png', content: PNG_BASE64, contentEncoding: 'base64' },
]

type FileSummary = { originalName: string; sha256: string; contentType: string | null; size: number }

for (const store of STORES) {
  describe(`patching a version (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer

    before(async () => {
      server = await startTestServer(store.name)
    })
    after(() => server?.close())

    const patch = (user: TestUser, websiteId: string, body: object) => server.api('POST', `/v1/websites/${websiteId}/versions`, { token: user.token, body })
    const filesOf = async (user: TestUser, websiteId: string, version: number): Promise<FileSummary[]> => {
      const res = await server.api('GET', `/v1/websites/${websiteId}/versions`, { token: user.token })
      const found = res.body.versions.find((v: { version: number }) => v.version === version)
      assert.ok(found, `version ${version} exists`)
      return found.files
    }
    const text = async (user: TestUser, websiteId: string, version: number, path: string) =>
      (await server.api('GET', `/v1/websites/${websiteId}/versions/${version}/files/${path}`, { token: user.token })).body.content
    const versionCount = async (user: TestUser, websiteId: string) =>
      (await server.api('GET', `/v1/websites/${websiteId}/versions`, { token: user.token })).body.versions.length

    test('an editor patches with every op; the files left alone are the base version bytes, the live site serves the result', async () => {
      const { site, editor } = await siteWithMembers(server, { files: baseFiles() })
      const res = await patch(editor, site.websiteId, {
        baseVersion: 1,
        message: 'Opening hours',
        changes: [
          { op: 'edit', path: 'index.html', edits: [{ oldText: '<p>Open daily</p>', newText: '<p>Open daily, 8 to 6</p>' }] },
          { op: 'edit', path: 'index.html', edits: [{ oldText: '8 to 6', newText: '8 to 7' }] },
          { op: 'put', path: 'menu/index.html', content: page('Menu') },
          { op: 'put', path: 'images/dot.png', content: PNG_BASE64, contentEncoding: 'base64' },
          { op: 'move', from: 'notes.txt', to: 'notes.md' },
          { op: 'move', from: 'data.json', to: 'data/info.json' },
          { op: 'delete', path: 'logo.png' },
        ],
      })
      assert.equal(res.status, 201, res.text)
      assert.equal(res.body.version, 2)
      assert.equal(res.body.isCurrent, true, 'promote defaults to true')
      const files = Object.fromEntries((await filesOf(editor, site.websiteId, 2)).map((f) => [f.originalName, f]))
      assert.deepEqual(Object.keys(files).sort(), ['data/info.json', 'images/dot.png', 'index.html', 'menu/index.html', 'notes.md', 'style.css'])
      const before = Object.fromEntries((await filesOf(editor, site.websiteId, 1)).map((f) => [f.originalName, f]))
      assert.equal(files['style.css']!.sha256, before['style.css']!.sha256)
      assert.equal(files['notes.md']!.sha256, before['notes.txt']!.sha256)
      assert.equal(files['notes.md']!.contentType, 'text/markdown', 'a moved file takes the type of its new name')
      assert.equal(files['data/info.json']!.contentType, 'text/plain', 'a type given at publish stays with the file')
      assert.equal(files['images/dot.png']!.sha256, before['logo.png']!.sha256)
      assert.match(await text(editor, site.websiteId, 2, 'index.html'), /<p>Open daily, 8 to 7<\/p>/)
      const live = await server.site(site.slug, '/')
      assert.match(live.body.toString(), /8 to 7/)
      const history = await server.api('GET', `/v1/websites/${site.websiteId}/versions`, { token: editor.token })
      assert.equal(history.body.versions[0].instruction, 'Opening hours')
    })

    test('a patch makes, byte for byte, the version the whole bundle makes', async () => {
      const owner = await createUser(server)
      const patched = await createSite(server, { owner, files: baseFiles() })
      const res = await patch(owner, patched.websiteId, {
        baseVersion: patched.jobId,
        promote: false,
        changes: [
          { op: 'edit', path: 'style.css', edits: [{ oldText: '#222', newText: '#111' }] },
          { op: 'put', path: 'about.html', content: page('About') },
          { op: 'move', from: 'notes.txt', to: 'notes/index.txt' },
        ],
      })
      assert.equal(res.status, 201, res.text)
      assert.equal(res.body.isCurrent, false)
      const whole = await createSite(server, {
        owner,
        files: [
          { path: 'index.html', content: page('Home', '<h1>Home</h1>\n<p>Open daily</p>') },
          { path: 'style.css', content: 'body { color: #111; }\n' },
          { path: 'notes/index.txt', content: 'first\nsecond\n' },
          { path: 'data.json', content: '{"a": 1}\n', contentType: 'text/plain' },
          { path: 'logo.png', content: PNG_BASE64, contentEncoding: 'base64' },
          { path: 'about.html', content: page('About') },
        ],
      })
      const summary = (files: FileSummary[]) => files.map((f) => `${f.originalName} ${f.sha256} ${f.contentType} ${f.size}`).sort()
      assert.deepEqual(summary(await filesOf(owner, patched.websiteId, 2)), summary(await filesOf(owner, whole.websiteId, 1)))
      assert.equal((await filesOf(owner, patched.websiteId, 2)).find((f) => f.originalName === 'style.css')!.sha256, sha256('body { color: #111; }\n'))
    })

    test('a base with a newer version is VERSION_CONFLICT naming it; overwrite publishes anyway', async () => {
      const owner = await createUser(server)
      const site = await createSite(server, { owner, files: baseFiles() })
      await createVersion(server, owner, site.websiteId, { files: [...baseFiles(), { path: 'extra.css', content: 'p {}' }] })
      const changes = [{ op: 'delete', path: 'notes.txt' }]
      const stale = await patch(owner, site.websiteId, { baseVersion: 1, changes })
      assertError(stale, 409, 'VERSION_CONFLICT', /^Version 1 is not the newest: version 2 was published since, changing extra\.css\./)
      assert.deepEqual(Object.keys(stale.body.error.fields), ['baseVersion'])
      // Said before the changes are tried: this one would not apply to version 1 either.
      const staleAndBad = await patch(owner, site.websiteId, { baseVersion: 1, changes: [{ op: 'delete', path: 'missing.txt' }] })
      assertError(staleAndBad, 409, 'VERSION_CONFLICT')
      const wholeOnStale = await patch(owner, site.websiteId, { baseVersion: 1, files: baseFiles() })
      assertError(wholeOnStale, 409, 'VERSION_CONFLICT')
      assert.equal(await versionCount(owner, site.websiteId), 2, 'nothing stored')

      const overwritten = await patch(owner, site.websiteId, { baseVersion: 1, overwrite: true, changes })
      assert.equal(overwritten.status, 201, overwritten.text)
      const files = (await filesOf(owner, site.websiteId, 3)).map((f) => f.originalName).sort()
      assert.deepEqual(files, ['data.json', 'index.html', 'logo.png', 'style.css'], 'version 2 undone: no extra.css')
      const onNewest = await patch(owner, site.websiteId, { baseVersion: 3, changes: [{ op: 'delete', path: 'data.json' }] })
      assert.equal(onNewest.status, 201, onNewest.text)
    })

    test('a change naming a path the files lack, or that cannot apply, refuses the patch naming it; nothing is stored', async () => {
      const owner = await createUser(server)
      const site = await createSite(server, { owner, files: baseFiles() })
      const refused = async (changes: object[], code: string, field: string, message?: RegExp) => {
        const res = await patch(owner, site.websiteId, { baseVersion: 1, changes })
        assertError(res, 422, code, message)
        assert.deepEqual(Object.keys(res.body.error.fields), [field], JSON.stringify(res.body.error))
        return res
      }
      await refused(
        [{ op: 'delete', path: 'missing.txt' }],
        'VALIDATION_FAILED',
        'changes[0]',
        /Change 1 of 1 \(delete\) names "missing\.txt", which is not a file of version 1/,
      )
      await refused(
        [
          { op: 'delete', path: 'notes.txt' },
          { op: 'edit', path: 'notes.txt', edits: [{ oldText: 'first', newText: '1st' }] },
        ],
        'VALIDATION_FAILED',
        'changes[1]',
      )
      await refused([{ op: 'move', from: 'gone.txt', to: 'here.txt' }], 'VALIDATION_FAILED', 'changes[0]')
      await refused([{ op: 'move', from: 'notes.txt', to: 'style.css' }], 'VALIDATION_FAILED', 'changes[0]')
      // Onto itself: said so, not "delete it first", which would lose the file.
      await refused([{ op: 'move', from: 'notes.txt', to: 'notes.txt' }], 'VALIDATION_FAILED', 'changes[0]', /to is the same path as from/)
      await refused([{ op: 'edit', path: 'logo.png', edits: [{ oldText: 'PNG', newText: 'JPG' }] }], 'VALIDATION_FAILED', 'changes[0]')
      await refused([{ op: 'put', path: 'a.txt', content: 'a', sha256: sha256('a') }], 'VALIDATION_FAILED', 'changes[0]')
      await refused([{ op: 'put', path: 'a.txt' }], 'VALIDATION_FAILED', 'changes[0]')
      await refused(
        [{ op: 'put', path: 'a.txt', sha256: sha256('first\nsecond\n'), contentEncoding: 'base64' }],
        'VALIDATION_FAILED',
        'changes[0].contentEncoding',
      )
      await refused(
        // Bytes by hash are the publish's to check: an edit reads only the base's own.
        [
          { op: 'put', path: 'b.css', sha256: sha256('b { color: #222; }\n') },
          { op: 'edit', path: 'b.css', edits: [{ oldText: '#222', newText: '#000' }] },
        ],
        'VALIDATION_FAILED',
        'changes[1]',
      )
      await refused([{ op: 'rename', path: 'notes.txt' }], 'VALIDATION_FAILED', 'changes[0].op', /"rename"/)
      await refused([{ op: 'delete', path: 'notes.txt', to: 'x' }], 'VALIDATION_FAILED', 'changes[0].to')
      await refused([{ op: 'edit', path: 'notes.txt', edits: [] }], 'VALIDATION_FAILED', 'changes[0].edits')
      await refused(
        [
          {
            op: 'edit',
            path: 'notes.txt',
            edits: [
              { oldText: 'first', newText: '1st' },
              { oldText: 'secnd', newText: '2nd' },
            ],
          },
        ],
        'EDIT_NO_MATCH',
        'changes[0].edits[1].oldText',
        /^Change 1 of 1: Edit 2 of 2: its oldText occurs 0 times in notes\.txt; the closest line is 2: "second"/,
      )
      await refused([{ op: 'edit', path: 'index.html', edits: [{ oldText: 'Home', newText: 'House' }] }], 'EDIT_AMBIGUOUS', 'changes[0].edits[0].oldText')
      assert.equal(await versionCount(owner, site.websiteId), 1, 'nothing stored')
    })

    test('edits that would read more text in all than one request may are refused whole, naming the edit that crossed', async () => {
      const owner = await createUser(server)
      // Each edit reads the whole file: 2 MiB less a little, so the 33rd edit of the request crosses.
      const big = `${'a'.repeat(2 * 1024 * 1024 - 100)}X\n`
      const site = await createSite(server, { owner, files: [...baseFiles(), { path: 'big.txt', content: big }] })
      const swap = { oldText: 'X', newText: 'X' }
      const edits = Array.from({ length: 30 }, () => swap)
      const res = await patch(owner, site.websiteId, {
        baseVersion: 1,
        changes: [
          { op: 'edit', path: 'big.txt', edits },
          { op: 'edit', path: 'big.txt', edits },
        ],
      })
      assertError(res, 422, 'VALIDATION_FAILED', /would read more than 67,108,864 characters of text in all/)
      assert.deepEqual(Object.keys(res.body.error.fields), ['changes[1].edits[2]'])
      assert.equal(await versionCount(owner, site.websiteId), 1)
    })

    test('files with changes, neither, changes or overwrite without baseVersion: VALIDATION_FAILED naming the field', async () => {
      const owner = await createUser(server)
      const site = await createSite(server, { owner, files: baseFiles() })
      const changes = [{ op: 'delete', path: 'notes.txt' }]
      const cases: Array<[object, string]> = [
        [{ baseVersion: 1, files: baseFiles(), changes }, 'changes'],
        [{ baseVersion: 1 }, 'files'],
        [{ message: 'nothing' }, 'files'],
        [{ changes }, 'baseVersion'],
        [{ files: baseFiles(), overwrite: true }, 'overwrite'],
        [{ baseVersion: true, changes }, 'baseVersion'],
        [{ baseVersion: 0, changes }, 'baseVersion'],
      ]
      for (const [body, field] of cases) {
        const res = await patch(owner, site.websiteId, body)
        assertError(res, 422, 'VALIDATION_FAILED')
        assert.ok(Object.keys(res.body.error.fields).includes(field), `${JSON.stringify(body)}: ${res.text}`)
      }
      // A version is a number or an id: a value that is neither is told both.
      const neither = await patch(owner, site.websiteId, { baseVersion: null, changes })
      assert.equal(neither.body.error.fields.baseVersion, 'must be integer, or must be string', neither.text)
      const empty = await patch(owner, site.websiteId, { baseVersion: '', changes })
      assert.equal(empty.body.error.fields.baseVersion, 'must be integer, or must NOT have fewer than 1 characters', empty.text)
      assertError(await patch(owner, site.websiteId, { baseVersion: 7, changes }), 404, 'NOT_FOUND', /^This website has no version 7\./)
      assertError(await patch(owner, site.websiteId, { baseVersion: 'job_unknown', changes }), 404, 'NOT_FOUND')
      assert.equal(await versionCount(owner, site.websiteId), 1)
    })

    test('the patched version is checked whole: removing index.html is PUBLISH_INVALID; a stranger gets 404', async () => {
      const { site, owner, stranger } = await siteWithMembers(server, { files: baseFiles() })
      const invalid = await patch(owner, site.websiteId, { baseVersion: 1, changes: [{ op: 'delete', path: 'index.html' }] })
      assertError(invalid, 422, 'PUBLISH_INVALID')
      assert.deepEqual(
        invalid.body.error.violations.map((v: { code: string }) => v.code),
        ['MISSING_INDEX'],
      )
      const unknownHash = await patch(owner, site.websiteId, { baseVersion: 1, changes: [{ op: 'put', path: 'x.css', sha256: sha256('never published') }] })
      assertError(unknownHash, 422, 'PUBLISH_INVALID')
      assert.equal(unknownHash.body.error.violations[0].code, 'UNKNOWN_HASH')
      assertError(await patch(stranger, site.websiteId, { baseVersion: 1, changes: [{ op: 'delete', path: 'notes.txt' }] }), 404, 'NOT_FOUND')
      assert.equal(await versionCount(owner, site.websiteId), 1)
    })
  })
}
