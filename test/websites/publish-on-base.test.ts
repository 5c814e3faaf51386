/**
 * Publishing on a base version (what drafts and patches do): refused with VERSION_CONFLICT while
 * a newer version exists, naming it and the files it changed, unless `overwrite`; nothing is
 * stored by a refused publish.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { AppError } from '../../src/core/errors.ts'
import type { Principal } from '../../src/core/principal.ts'
import { createSite, createUser, createVersion } from '../helpers/factories.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

const page = (text: string) => [{ path: 'index.html', content: `<!doctype html><title>${text}</title><p>${text}</p>` }]

for (const store of STORES) {
  describe(`publishing on a base version (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    before(async () => {
      server = await startTestServer(store.name)
    })
    after(() => server?.close())

    test('a newer version than the base is VERSION_CONFLICT, unless overwrite', async () => {
      const user = await createUser(server)
      const site = await createSite(server, { owner: user, files: page('one') })
      await createVersion(server, user, site.websiteId, { files: [...page('two'), { path: 'new.css', content: 'p{}' }] })
      const principal: Principal = { userId: user.id, email: user.email, name: null, tokenId: user.tokenId, access: 'both', capabilities: null, sites: null }
      const publishing = server.server.services.publishing
      const refused = await publishing
        .publishVersion(principal, site.websiteId, { files: page('three') }, { number: 1, overwrite: false })
        .catch((error: unknown) => error)
      assert.ok(refused instanceof AppError)
      assert.equal(refused.code, 'VERSION_CONFLICT')
      assert.match(refused.message, /^Version 1 is not the newest: version 2 was published since, changing index\.html, new\.css\./)
      assert.deepEqual(Object.keys(refused.fields ?? {}), ['baseVersion'])
      const versions = await server.api('GET', `/v1/websites/${site.websiteId}/versions`, { token: user.token })
      assert.equal(versions.body.versions.length, 2, 'a refused publish stores no version')

      const onNewest = await publishing.publishVersion(principal, site.websiteId, { files: page('three') }, { number: 2, overwrite: false })
      assert.equal(onNewest.result.version, 3)
      const overwritten = await publishing.publishVersion(principal, site.websiteId, { files: page('four') }, { number: 1, overwrite: true })
      assert.equal(overwritten.result.version, 4)
    })
  })
}
