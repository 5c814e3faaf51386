/**
 * The draft tools over real HTTP, with the SDK's v2 and 1.x clients (1.x checks every result
 * against the tool's outputSchema) on every store: a site built and changed in a draft, read back
 * by line range, its files listed, moved and deleted, published (with VERSION_CONFLICT, then
 * overwrite) or discarded; edits that match nowhere or several times refused with the REST
 * envelope; a stranger meets NOT_FOUND everywhere.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createSite, createUser, createVersion, PNG, PNG_BASE64, sha256, type TestUser } from '../helpers/factories.ts'
import { CLIENTS, call, connect, type McpClient } from '../helpers/mcp.ts'
import { sharedTestServers, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

const page = (title: string, body = '') =>
  `<!doctype html>\n<html lang="en">\n<head><title>${title}</title><link rel="stylesheet" href="site.css"></head>\n<body>\n<h1>${title}</h1>\n${body}</body>\n</html>\n`
const CSS = 'body { margin: 0; }\nh1 { color: #333; }\np { color: #555; }\n'

const sharedServer = sharedTestServers()
for (const store of STORES) {
  for (const kind of CLIENTS) {
    describe(`draft tools over MCP (${store.name}, ${kind} client)`, { skip: store.skip }, () => {
      let server: TestServer
      let owner: TestUser
      let client: McpClient

      before(async () => {
        server = await sharedServer(store.name)
        owner = await createUser(server)
        client = await connect(server, owner.token, { client: kind })
      })
      after(() => client?.close())

      /** A tool call that must succeed: its result. */
      const ok = async (name: string, args: Record<string, unknown>) => {
        const result = await call(client, name, args)
        assert.equal(result.isError, false, `${name}: ${JSON.stringify(result.data)}`)
        return result.data
      }

      /** A new site of the owner and a draft of its live version. */
      async function draftOfNewSite() {
        const site = await createSite(server, { owner, files: [{ path: 'index.html', content: page('Placeholder') }] })
        const draft = await ok('start_draft', { websiteId: site.websiteId })
        return { site, draft, args: { websiteId: site.websiteId, draftId: draft.draftId as string } }
      }

      it('builds a site in a draft: writes, reads by range, lists, moves, deletes, then publishes it', async () => {
        const { site, draft, args } = await draftOfNewSite()
        assert.match(draft.draftId, /^drf_[a-z0-9]+$/)
        assert.equal(draft.baseVersion, 1)
        assert.equal(draft.previewUrl, `http://${site.slug}--d${draft.draftId.slice(4)}.plinth.test:8080/`)
        assert.deepEqual(draft.files, [{ path: 'index.html', size: Buffer.byteLength(page('Placeholder')), change: 'unchanged' }])

        const home = page('Rosa', '<p>Bread, daily.</p>\n<p><a href="about.html">About</a></p>\n')
        const written = await ok('write_file', { ...args, path: 'index.html', content: home })
        assert.deepEqual(written, { path: 'index.html', size: Buffer.byteLength(home), sha256: sha256(home), contentType: 'text/html' }, 'no content echoed')
        await ok('write_file', { ...args, path: 'site.css', content: CSS })
        await ok('write_file', { ...args, path: 'about.html', content: page('About') })
        const image = await ok('write_file', { ...args, path: 'img/dot.png', content: PNG_BASE64, contentEncoding: 'base64' })
        assert.deepEqual([image.sha256, image.contentType], [sha256(PNG), 'image/png'])
        // Bytes already in a draft are written again by their hash alone.
        const copy = await ok('write_file', { ...args, path: 'img/copy.png', sha256: image.sha256 })
        assert.equal(copy.size, PNG.length)

        const lines = await ok('read_file', { ...args, path: 'index.html', offset: 5, limit: 2 })
        assert.deepEqual(lines.lines, { from: 5, to: 6, total: home.split('\n').length - 1 })
        assert.equal(lines.content, '<h1>Rosa</h1>\n<p>Bread, daily.</p>\n')
        const rest = await server.api('GET', `/v1/websites/${args.websiteId}/drafts/${args.draftId}/files/index.html?offset=5&limit=2`, { token: owner.token })
        assert.deepEqual(lines, rest.body, 'the same answer as REST')
        const binary = await ok('read_file', { ...args, path: 'img/dot.png' })
        assert.deepEqual([binary.contentEncoding, binary.content], ['base64', PNG_BASE64])

        const moved = await ok('move_file', { ...args, from: 'img/copy.png', to: 'img/spare.png' })
        assert.deepEqual(moved, { path: 'img/spare.png', size: PNG.length, sha256: sha256(PNG), contentType: 'image/png' })
        assert.deepEqual(await ok('delete_file', { ...args, path: 'img/spare.png' }), { deleted: true, path: 'img/spare.png' })
        const gone = await call(client, 'delete_file', { ...args, path: 'img/spare.png' })
        assert.equal(gone.data.error.code, 'NOT_FOUND')

        const listed = await ok('list_files', args)
        assert.equal(listed.draftId, args.draftId)
        assert.deepEqual(
          listed.files.map((f: any) => [f.path, f.change]),
          [
            ['about.html', 'added'],
            ['img/dot.png', 'added'],
            ['index.html', 'changed'],
            ['site.css', 'added'],
          ],
        )
        assert.ok(
          listed.files.every((f: any) => Object.keys(f).sort().join() === 'change,path,size'),
          'compact: no hash, no type, no content',
        )

        const published = await ok('publish_draft', { ...args, message: 'Built in a draft' })
        assert.deepEqual([published.version, published.isCurrent], [2, true])
        assert.equal((await server.site(site.slug)).body.toString(), home)
        assert.deepEqual((await server.site(site.slug, '/img/dot.png')).body, PNG)
        assert.equal((await call(client, 'list_files', args)).data.error.code, 'NOT_FOUND', 'the draft is gone')
        const fromVersion = await ok('read_file', { websiteId: args.websiteId, versionId: published.jobId, path: 'site.css' })
        assert.deepEqual([fromVersion.content, fromVersion.sha256], [CSS, sha256(CSS)])
        const byNumber = await ok('read_file', { websiteId: args.websiteId, versionId: '1', path: 'index.html' })
        assert.equal(byNumber.content, page('Placeholder'))
      })

      it('edits a text file when each oldText occurs once, and refuses none or several as REST does, changing nothing', async () => {
        const { args } = await draftOfNewSite()
        const text = page('Menu', '<p>Bread</p>\n<p>Cake</p>\n<p>Cake</p>\n')
        await ok('write_file', { ...args, path: 'menu.html', content: text })

        const edited = await ok('edit_file', {
          ...args,
          path: 'menu.html',
          edits: [
            { oldText: '<p>Bread</p>', newText: '<p>Sourdough</p>' },
            { oldText: '<h1>Menu</h1>', newText: '<h1>Our menu</h1>' },
          ],
        })
        const after = text.replace('<p>Bread</p>', '<p>Sourdough</p>').replace('<h1>Menu</h1>', '<h1>Our menu</h1>')
        assert.deepEqual(edited, { path: 'menu.html', size: Buffer.byteLength(after), sha256: sha256(after), contentType: 'text/html' })

        const restPath = `/v1/websites/${args.websiteId}/drafts/${args.draftId}/files/menu.html`
        for (const [edits, code] of [
          [[{ oldText: '<p>Rye</p>', newText: '<p>Spelt</p>' }], 'EDIT_NO_MATCH'],
          [
            [
              { oldText: '<p>Sourdough</p>', newText: 'x' },
              { oldText: '<p>Cake</p>', newText: '<p>Pie</p>' },
            ],
            'EDIT_AMBIGUOUS',
          ],
        ] as const) {
          const refused = await call(client, 'edit_file', { ...args, path: 'menu.html', edits })
          assert.equal(refused.isError, true)
          assert.equal(refused.data.error.code, code)
          const rest = await server.api('PATCH', restPath, { token: owner.token, body: { edits } })
          assert.equal(rest.status, 422)
          assert.deepEqual(refused.data, rest.body, `${code}: the same envelope as REST`)
        }
        const none = await call(client, 'edit_file', { ...args, path: 'menu.html', edits: [{ oldText: '<p>Rye</p>', newText: '' }] })
        assert.match(none.data.error.message, /menu\.html/)
        assert.equal((await ok('read_file', { ...args, path: 'menu.html' })).sha256, sha256(after), 'nothing changed')
      })

      it('refuses a file that breaks a rule with PUBLISH_INVALID and writes nothing', async () => {
        const { args } = await draftOfNewSite()
        const refused = await call(client, 'write_file', { ...args, path: 'x.html', content: '<script src="https://cdn.example.com/x.js"></script>' })
        assert.equal(refused.data.error.code, 'PUBLISH_INVALID')
        assert.deepEqual(
          refused.data.error.violations.map((v: any) => [v.code, v.path]),
          [['EXTERNAL_URL', 'x.html']],
        )
        assert.deepEqual(
          (await ok('list_files', args)).files.map((f: any) => f.path),
          ['index.html'],
        )
        const both = await call(client, 'write_file', { ...args, path: 'a.css', content: 'p {}', sha256: sha256('p {}') })
        assert.equal(both.data.error.code, 'VALIDATION_FAILED')
      })

      it('refuses to publish over a newer version (VERSION_CONFLICT) unless told to overwrite; discards a draft', async () => {
        const { site, args } = await draftOfNewSite()
        await ok('write_file', { ...args, path: 'index.html', content: page('From the draft') })
        await createVersion(server, owner, site.websiteId, { files: [{ path: 'index.html', content: page('Meanwhile') }] })

        const conflict = await call(client, 'publish_draft', args)
        assert.equal(conflict.isError, true)
        assert.equal(conflict.data.error.code, 'VERSION_CONFLICT')
        const rest = await server.api('POST', `/v1/websites/${args.websiteId}/drafts/${args.draftId}/publish`, { token: owner.token, body: {} })
        assert.equal(rest.status, 409)
        assert.deepEqual(conflict.data, rest.body, 'the same envelope as REST')
        assert.match(conflict.data.error.fields.baseVersion, /\b2\b/, 'the newer version is named')
        assert.match((await server.site(site.slug)).body.toString(), /Meanwhile/)

        const overwritten = await ok('publish_draft', { ...args, overwrite: true, promote: false })
        assert.deepEqual([overwritten.version, overwritten.isCurrent], [3, false])
        assert.match((await server.site(`${site.slug}--v3`)).body.toString(), /From the draft/)

        const other = await ok('start_draft', { websiteId: site.websiteId, baseVersion: 1 })
        assert.equal(other.baseVersion, 1)
        assert.deepEqual(await ok('discard_draft', { websiteId: site.websiteId, draftId: other.draftId }), { discarded: true, draftId: other.draftId })
        const again = await call(client, 'discard_draft', { websiteId: site.websiteId, draftId: other.draftId })
        assert.equal(again.data.error.code, 'NOT_FOUND')
      })

      it('reads a file of exactly one of a draft and a version', async () => {
        const { args } = await draftOfNewSite()
        for (const given of [{ websiteId: args.websiteId }, { ...args, versionId: '1' }]) {
          const refused = await call(client, 'read_file', { ...given, path: 'index.html' })
          assert.equal(refused.data.error.code, 'VALIDATION_FAILED', JSON.stringify(given))
          assert.ok('draftId' in refused.data.error.fields)
        }
      })

      it("answers NOT_FOUND to a stranger for every draft tool, and leaves the owner's draft alone", async () => {
        const { args } = await draftOfNewSite()
        const stranger = await createUser(server)
        const theirs = await connect(server, stranger.token, { client: kind })
        try {
          for (const [tool, extra] of [
            ['start_draft', { draftId: undefined }],
            ['list_files', {}],
            ['read_file', { path: 'index.html' }],
            ['read_file', { draftId: undefined, versionId: '1', path: 'index.html' }],
            ['write_file', { path: 'index.html', content: 'defaced' }],
            ['edit_file', { path: 'index.html', edits: [{ oldText: 'Placeholder', newText: 'Defaced' }] }],
            ['delete_file', { path: 'index.html' }],
            ['move_file', { from: 'index.html', to: 'gone.html' }],
            ['publish_draft', {}],
            ['discard_draft', {}],
          ] as const) {
            const result = await call(theirs, tool, JSON.parse(JSON.stringify({ ...args, ...extra })))
            assert.equal(result.isError, true, tool)
            assert.equal(result.data.error.code, 'NOT_FOUND', `${tool}: ${JSON.stringify(result.data)}`)
          }
        } finally {
          await theirs.close()
        }
        const still = await ok('list_files', args)
        assert.deepEqual(
          still.files.map((f: any) => [f.path, f.change]),
          [['index.html', 'unchanged']],
        )
      })
    })
  }
}
