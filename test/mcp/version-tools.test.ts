/**
 * Patches and comparisons over MCP, with the SDK's v2 and 1.x clients on every store:
 * publish_version with baseVersion and changes makes the version REST makes, refuses what REST
 * refuses with the same envelope, and diff_versions answers what REST's comparison answers.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createSite, createUser, type TestUser } from '../helpers/factories.ts'
import { CLIENTS, call, connect, type McpClient } from '../helpers/mcp.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

const page = (title: string) => `<!doctype html>\n<html lang="en">\n<head><title>${title}</title></head>\n<body>\n<h1>${title}</h1>\n</body>\n</html>\n`

for (const store of STORES) {
  for (const kind of CLIENTS) {
    describe(`version tools over MCP (${store.name}, ${kind} client)`, { skip: store.skip }, () => {
      let server: TestServer
      let owner: TestUser
      let client: McpClient

      before(async () => {
        server = await startTestServer(store.name)
        owner = await createUser(server)
        client = await connect(server, owner.token, { client: kind })
      })
      after(async () => {
        await client?.close()
        await server?.close()
      })

      it('lists publish_version with baseVersion and changes, each change a oneOf told apart by op', async () => {
        const { tools } = await client.listTools()
        const publish = tools.find((t) => t.name === 'publish_version')
        assert.ok(publish)
        const properties = publish.inputSchema.properties as Record<string, any>
        assert.ok(properties.baseVersion && properties.changes && properties.overwrite)
        const ops = properties.changes.items.oneOf.map((branch: any) => branch.properties.op.const)
        assert.deepEqual(ops, ['put', 'delete', 'move', 'edit'])
        assert.deepEqual(properties.changes.items.discriminator, { propertyName: 'op' })
        assert.ok(tools.some((t) => t.name === 'diff_versions'))
      })

      it('publishes a patch, then compares it with its base', async () => {
        const site = await createSite(server, {
          owner,
          files: [
            { path: 'index.html', content: page('Bakery') },
            { path: 'hours.txt', content: 'Mon 8-6\nTue 8-6\n' },
          ],
        })
        const patched = await call(client, 'publish_version', {
          websiteId: site.websiteId,
          baseVersion: 1,
          changes: [
            { op: 'edit', path: 'hours.txt', edits: [{ oldText: 'Tue 8-6', newText: 'Tue closed' }] },
            { op: 'put', path: 'menu.html', content: page('Menu') },
            { op: 'move', from: 'index.html', to: 'home.html' },
            { op: 'put', path: 'index.html', content: page('Bakery, again') },
          ],
        })
        assert.equal(patched.isError, false, JSON.stringify(patched.data))
        assert.equal(patched.data.version, 2)
        assert.match((await server.site(site.slug, '/hours.txt')).body.toString(), /Tue closed/)

        const compared = await call(client, 'diff_versions', { websiteId: site.websiteId, from: '1', to: patched.data.jobId })
        assert.equal(compared.isError, false, JSON.stringify(compared.data))
        assert.deepEqual(compared.data.from, { kind: 'version', id: site.jobId, version: 1 })
        assert.deepEqual(
          compared.data.files.map((f: any) => [f.path, f.status, f.previousPath ?? null]),
          [
            // The comparison is of the two sets of files: index.html is still there, with other bytes.
            ['home.html', 'added', null],
            ['hours.txt', 'changed', null],
            ['index.html', 'changed', null],
            ['menu.html', 'added', null],
          ],
        )
        assert.match(compared.data.files[1].diff, /-Tue 8-6\n\+Tue closed\n/)
        const rest = await server.api('GET', `/v1/websites/${site.websiteId}/versions/1/diff/${patched.data.jobId}`, { token: owner.token })
        assert.deepEqual(compared.data, rest.body, 'the same answer as REST')

        // Version numbers may be given as numbers, as agents write them.
        const byNumber = await call(client, 'diff_versions', { websiteId: site.websiteId, from: 1, to: 2 })
        assert.equal(byNumber.isError, false, JSON.stringify(byNumber.data))
        assert.deepEqual(byNumber.data, compared.data)
        const read = await call(client, 'read_file', { websiteId: site.websiteId, versionId: 2, path: 'hours.txt' })
        assert.equal(read.isError, false, JSON.stringify(read.data))
        assert.match(read.data.content, /Tue closed/)
        const rolledBack = await call(client, 'promote_version', { websiteId: site.websiteId, versionId: 1 })
        assert.equal(rolledBack.isError, false, JSON.stringify(rolledBack.data))
        assert.equal(rolledBack.data.version, 1)
        for (const versionId of [0, -1, 1.5]) {
          const refused = await call(client, 'promote_version', { websiteId: site.websiteId, versionId })
          assert.equal(refused.isError, true, String(versionId))
          assert.equal(refused.data.error.code, 'VALIDATION_FAILED', String(versionId))
        }
      })

      it('refuses what REST refuses, with the same envelope: a stale base, a bad change, files with changes', async () => {
        const site = await createSite(server, { owner, files: [{ path: 'index.html', content: page('One') }] })
        const next = await call(client, 'publish_version', {
          websiteId: site.websiteId,
          baseVersion: 1,
          changes: [{ op: 'put', path: 'a.css', content: 'p {}' }],
        })
        assert.equal(next.isError, false)
        const cases = [
          { baseVersion: 1, changes: [{ op: 'delete', path: 'a.css' }] },
          { baseVersion: 2, changes: [{ op: 'delete', path: 'b.css' }] },
          { baseVersion: 2, changes: [{ op: 'edit', path: 'index.html', edits: [{ oldText: 'Two', newText: 'Three' }] }] },
          { baseVersion: 2, files: [{ path: 'index.html', content: page('x') }], changes: [{ op: 'delete', path: 'a.css' }] },
          { baseVersion: 2, changes: [{ op: 'copy', from: 'a.css', to: 'b.css' }] },
        ]
        const codes = []
        for (const args of cases) {
          const result = await call(client, 'publish_version', { websiteId: site.websiteId, ...args })
          assert.equal(result.isError, true, JSON.stringify(result.data))
          const rest = await server.api('POST', `/v1/websites/${site.websiteId}/versions`, { token: owner.token, body: args })
          assert.deepEqual(result.data, rest.body, JSON.stringify(args))
          codes.push(result.data.error.code)
        }
        assert.deepEqual(codes, ['VERSION_CONFLICT', 'VALIDATION_FAILED', 'EDIT_NO_MATCH', 'VALIDATION_FAILED', 'VALIDATION_FAILED'])
      })
    })
  }
}
