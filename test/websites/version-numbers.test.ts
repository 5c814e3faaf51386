/**
 * Version numbers a caller writes, on every store: a number past the largest a version can have
 * (the databases' 32-bit integer) names no version, in a path, in a body (as a number or as
 * digits) and in a preview host, and is answered 404 NOT_FOUND like any unknown version, never
 * 500; nothing changes. The largest possible number itself is looked up as usual.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { VERSION_NUMBER_MAX } from '../../src/core/ids.ts'
import { parseSiteLabel } from '../../src/core/site-address.ts'
import { assertError, siteWithPreview } from '../helpers/factories.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

const PAST_MAX = String(VERSION_NUMBER_MAX + 1)
const FUTURE = new Date(Date.now() + 24 * 60 * 60 * 1000).toISOString()

test('a preview host label carries any version number up to the largest, and no further', () => {
  assert.deepEqual(parseSiteLabel(`bakery--v${VERSION_NUMBER_MAX}`), { slug: 'bakery', version: VERSION_NUMBER_MAX })
  assert.equal(parseSiteLabel(`bakery--v${PAST_MAX}`), null)
  assert.equal(parseSiteLabel('bakery--v99999999999999999999'), null)
  assert.equal(parseSiteLabel('bakery--v02'), null)
})

for (const store of STORES) {
  describe(`version numbers past the largest (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    before(async () => {
      server = await startTestServer(store.name)
    })
    after(() => server?.close())

    test('every operation that names a version answers 404 NOT_FOUND for one, and changes nothing', async () => {
      const { owner, site } = await siteWithPreview(server)
      const w = `/v1/websites/${site.websiteId}`
      const calls: Array<[method: 'GET' | 'POST', path: string, body?: unknown]> = [
        ['GET', `${w}/versions/${PAST_MAX}/files/index.html`],
        ['GET', `${w}/versions/99999999999999999999/files/index.html`],
        ['GET', `${w}/versions/1/diff/${PAST_MAX}`],
        ['GET', `${w}/versions/${PAST_MAX}/diff/1`],
        ['POST', `${w}/versions/${PAST_MAX}/promote`, {}],
        ['POST', `${w}/versions/${PAST_MAX}/promote`, { promoteAt: FUTURE }],
        ['POST', `${w}/versions/${PAST_MAX}/promotion-request`, {}],
        ['POST', `${w}/drafts`, { baseVersion: Number(PAST_MAX) }],
        ['POST', `${w}/drafts`, { baseVersion: PAST_MAX }],
        ['POST', `${w}/drafts`, { baseVersion: 1e300 }],
        ['POST', `${w}/versions`, { baseVersion: Number(PAST_MAX), changes: [{ op: 'delete', path: 'style.css' }] }],
      ]
      for (const [method, path, body] of calls) {
        const res = await server.api(method, path, { token: owner.token, ...(body === undefined ? {} : { body }) })
        assertError(res, 404, 'NOT_FOUND', /^This website has no version \d/)
      }
      const listed = await server.api('GET', `${w}/versions`, { token: owner.token })
      assert.deepEqual(
        listed.body.versions.map((v: { version: number }) => v.version),
        [2, 1],
      )
      for (const kind of ['drafts', 'schedules']) {
        assert.deepEqual((await server.api('GET', `${w}/${kind}`, { token: owner.token })).body.items, [], `no ${kind}`)
      }
    })

    test('the largest possible number is looked up, and an unknown id is named', async () => {
      const { owner, site } = await siteWithPreview(server)
      const w = `/v1/websites/${site.websiteId}`
      assertError(
        await server.api('GET', `${w}/versions/${VERSION_NUMBER_MAX}/files/index.html`, { token: owner.token }),
        404,
        'NOT_FOUND',
        new RegExp(`^This website has no version ${VERSION_NUMBER_MAX}\\.`),
      )
      assertError(
        await server.api('POST', `${w}/versions/job_unknown/promote`, { token: owner.token, body: {} }),
        404,
        'NOT_FOUND',
        /^Version "job_unknown" not found: give a version id \(job_\.\.\.\) or a version number/,
      )
      const read = await server.api('GET', `${w}/versions/2/files/index.html`, { token: owner.token })
      assert.equal(read.status, 200, read.text)
    })

    test('a preview host with a number past the largest names no site, and the site stays served', async () => {
      const { site } = await siteWithPreview(server)
      const titleOf = (body: Buffer) => /<title>([^<]*)<\/title>/.exec(body.toString())?.[1]
      const past = await server.site(`${site.slug}--v${PAST_MAX}`)
      const malformed = await server.site(`${site.slug}--v0`)
      assert.deepEqual([past.status, titleOf(past.body)], [malformed.status, titleOf(malformed.body)], 'answered as a host that names no site')
      assert.equal(titleOf((await server.site(`${site.slug}--v2`)).body), 'Two')
      assert.equal(titleOf((await server.site(site.slug)).body), 'One')
    })
  })
}
