/**
 * The publishing and inspection operations over real HTTP: createWebsite, listWebsites,
 * getWebsite, createWebsiteVersion, listWebsiteVersions, promote, getJob and suggestSlug; who may
 * see and change a site (owner, editor, stranger); the website limit and the publish rate limit.
 */

import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { assertError, PNG, PNG_BASE64, sha256, siteWithMembers, type TestUser } from '../helpers/factories.ts'
import { type ApiResponse, bundle, SITE_DOMAIN, sharedTestServers, startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

type File = { path: string; content: string; contentEncoding?: 'utf8' | 'base64'; contentType?: string }

const pageUrl = (label: string) => `http://${label}.${SITE_DOMAIN}/`

/** Decoded size of a bundle, as the service counts it. */
const decodedBytes = (files: File[]) => files.reduce((sum, f) => sum + Buffer.from(f.content, f.contentEncoding === 'base64' ? 'base64' : 'utf8').length, 0)

const indexOf = (files: File[]) => Buffer.from(files.find((f) => f.path === 'index.html')!.content)

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/

/** Parses `"publish";r=2;t=60` into {r: 2, t: 60}. */
function rateLimitParams(header: string | null): Record<string, number> {
  assert.ok(header, 'the header is present')
  assert.match(header, /^"publish"(;[a-z]+=\d+)+$/)
  return Object.fromEntries(
    header
      .split(';')
      .slice(1)
      .map((p) => {
        const [k, v] = p.split('=')
        return [k, Number(v)]
      }),
  )
}

/** Server-side helpers bound to one test server. */
function clientFor(getServer: () => TestServer) {
  const createSite = (user: TestUser, body: Record<string, unknown> = {}) =>
    getServer().api('POST', '/v1/websites', { token: user.token, body: { category: 'other', files: bundle(), ...body } })
  const publishVersion = (user: TestUser, websiteId: string, body: Record<string, unknown>) =>
    getServer().api('POST', `/v1/websites/${websiteId}/versions`, { token: user.token, body })
  async function site(user: TestUser, body: Record<string, unknown> = {}) {
    const res = await createSite(user, body)
    assert.equal(res.status, 201, res.text)
    return res.body as { websiteId: string; jobId: string; version: number; slug: string; pageUrl: string; bytesWritten: number }
  }
  const countVersions = async (websiteId: string) =>
    (await getServer().server.db.kysely.selectFrom('versions').select('id').where('website_id', '=', websiteId).execute()).length
  return { createSite, publishVersion, site, countVersions }
}

// The suites that need no settings of their own share a server per store.
const sharedServer = sharedTestServers()

for (const store of STORES) {
  describe(`websites API (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    before(async () => {
      server = await sharedServer(store.name)
    })
    const { createSite, publishVersion, site, countVersions } = clientFor(() => server)

    // ---- createWebsite --------------------------------------------------------------------

    test('createWebsite returns 201 with exactly the PublishWebsiteResult fields', async () => {
      const user = await server.user()
      const files = bundle('Corner Bakery')
      const res = await server.api('POST', '/v1/websites', { token: user.token, body: { name: 'Corner Bakery', category: 'restaurant', files } })
      assert.equal(res.status, 201, res.text)
      assert.deepEqual(Object.keys(res.body).sort(), ['bytesWritten', 'jobId', 'pageUrl', 'slug', 'version', 'warnings', 'websiteId'])
      assert.deepEqual(res.body.warnings, [], 'the site check finds nothing in a clean bundle')
      assert.match(res.body.websiteId, /^web_[A-Za-z0-9]+$/)
      assert.match(res.body.jobId, /^job_[A-Za-z0-9]+$/)
      assert.equal(res.body.version, 1)
      assert.equal(res.body.slug, 'corner-bakery')
      assert.equal(res.body.pageUrl, pageUrl('corner-bakery'))
      assert.equal(res.body.bytesWritten, decodedBytes(files))
    })

    test('bytesWritten counts decoded bytes: UTF-8 bytes of text and decoded bytes of base64 files', async () => {
      const user = await server.user()
      const page: File = {
        path: 'index.html',
        content: '<!doctype html><html><head><title>Crème brûlée</title></head><body><img src="images/dot.png" alt="•"></body></html>',
      }
      const files: File[] = [page, { path: 'images/dot.png', content: PNG_BASE64, contentEncoding: 'base64' }]
      const expected = Buffer.byteLength(page.content, 'utf8') + PNG.length
      assert.notEqual(expected, page.content.length + PNG_BASE64.length, 'the fixture distinguishes bytes from characters')
      const res = await createSite(user, { name: 'Dessert bar', files })
      assert.equal(res.status, 201, res.text)
      assert.equal(res.body.bytesWritten, expected)

      const png = await server.site(res.body.slug, '/images/dot.png')
      assert.equal(png.status, 200)
      assert.equal(png.headers['content-type'], 'image/png')
      assert.deepEqual(png.body, PNG)
    })

    test('createWebsite sends RateLimit and RateLimit-Policy headers', async () => {
      const user = await server.user()
      const res = await createSite(user, { name: 'Headers shop' })
      assert.equal(res.status, 201)
      const policy = rateLimitParams(res.headers.get('ratelimit-policy'))
      const state = rateLimitParams(res.headers.get('ratelimit'))
      assert.equal(policy.q, server.config.publishRatePerMinute)
      assert.equal(policy.w, 60)
      assert.equal(state.r, server.config.publishRatePerMinute - 1, 'the first publish of a user leaves limit - 1')
      assert.ok(state.t !== undefined && state.t > 0 && state.t <= 60)
    })

    test('a new site is served at its page URL at once', async () => {
      const user = await server.user()
      const files = bundle('Served at once')
      const created = await site(user, { name: 'Served at once', files })
      const res = await server.site(created.slug, '/')
      assert.equal(res.status, 200)
      assert.match(String(res.headers['content-type']), /^text\/html/)
      assert.deepEqual(res.body, indexOf(files))
      const css = await server.site(created.slug, '/style.css')
      assert.equal(css.status, 200)
      assert.equal(css.body.toString(), files[1].content)
    })

    test('the slug is derived from the name with accents dropped, and suffixed when taken', async () => {
      const user = await server.user()
      const first = await site(user, { name: 'Café Olé' })
      assert.equal(first.slug, 'cafe-ole')
      assert.equal(first.pageUrl, pageUrl('cafe-ole'))
      const second = await site(user, { name: 'Café Olé' })
      assert.equal(second.slug, 'cafe-ole-2')
      assert.equal(second.pageUrl, pageUrl('cafe-ole-2'))
      const third = await site(await server.user(), { name: 'CAFÉ   olé!' })
      assert.equal(third.slug, 'cafe-ole-3', 'slugs are unique across users')
      assert.equal((await server.site('cafe-ole-2', '/')).status, 200)
    })

    test('concurrent creates with the same name all succeed, each with a slug of its own', async () => {
      const users = await Promise.all(Array.from({ length: 10 }, () => server.user()))
      const results = await Promise.all(users.map((user, i) => createSite(user, { name: 'Rush Hour', files: bundle(`Rush ${i}`) })))
      assert.deepEqual(
        results.map((r) => r.status),
        Array(10).fill(201),
        results.map((r) => r.text).join('\n'),
      )
      const slugs = results.map((r) => r.body.slug as string)
      assert.equal(new Set(slugs).size, 10, `distinct slugs: ${slugs.join(', ')}`)
      assert.ok(slugs.includes('rush-hour'))
      for (const slug of slugs) {
        assert.match(slug, /^rush-hour(-[a-z0-9]+)?$/)
        assert.ok(!slug.includes('--'))
      }
      for (const [i, res] of results.entries()) {
        assert.deepEqual((await server.site(res.body.slug, '/')).body, indexOf(bundle(`Rush ${i}`)), 'each site serves its own bundle')
      }
    })

    test('a derived slug never takes a reserved word', async () => {
      const user = await server.user()
      const created = await site(user, { name: 'Admin' })
      assert.notEqual(created.slug, 'admin')
      assert.match(created.slug, /^admin-/)
    })

    test('a 120-character name is accepted and its derived slug is cut to 50 characters', async () => {
      const user = await server.user()
      const name = 'Long name '.repeat(12)
      assert.equal(name.length, 120)
      const created = await site(user, { name })
      assert.ok(created.slug.length <= 50)
      assert.match(created.slug, /^long-name-[a-z0-9-]*[a-z0-9]$/)
      const got = await server.api('GET', `/v1/websites/${created.websiteId}`, { token: user.token })
      assert.equal(got.body.name, name)
    })

    test('an explicit slug that is taken is 409 SLUG_TAKEN naming an available suggestion', async () => {
      const owner = await server.user()
      const other = await server.user()
      await site(owner, { slug: 'bakery-lane' })
      const res = await createSite(other, { name: 'Bakery', slug: 'bakery-lane' })
      assertError(res, 409, 'SLUG_TAKEN')
      assert.match(res.body.error.message, /"bakery-lane-2"/)
      assert.equal(typeof res.body.error.fields?.slug, 'string')
      assert.match(res.body.error.fields.slug, /bakery-lane-2/)
      // Nothing was created for the refused request...
      const list = await server.api('GET', '/v1/websites', { token: other.token })
      assert.equal(list.body.items.length, 0)
      // ...and the suggestion can really be claimed.
      const retry = await createSite(other, { name: 'Bakery', slug: 'bakery-lane-2' })
      assert.equal(retry.status, 201, retry.text)
      assert.equal(retry.body.slug, 'bakery-lane-2')
    })

    test('a reserved slug is 409 SLUG_TAKEN', async () => {
      const user = await server.user()
      for (const slug of ['api', 'www', 'admin']) {
        const res = await createSite(user, { slug })
        assertError(res, 409, 'SLUG_TAKEN')
        assert.equal(typeof res.body.error.fields?.slug, 'string', slug)
        assert.match(res.body.error.message, new RegExp(`"${slug}-[a-z0-9-]+"`), 'names a suggestion')
      }
      assert.equal((await server.api('GET', '/v1/websites', { token: user.token })).body.items.length, 0)
    })

    test('a malformed slug is 422 VALIDATION_FAILED with fields.slug', async () => {
      const user = await server.user()
      for (const slug of ['my--site', 'MySite', 'ab', 'a'.repeat(51), '1abc', 'my_site', 'my-site-']) {
        const res = await createSite(user, { slug })
        assertError(res, 422, 'VALIDATION_FAILED')
        assert.equal(typeof res.body.error.fields?.slug, 'string', `fields.slug for ${JSON.stringify(slug)}`)
      }
      assert.equal((await server.api('GET', '/v1/websites', { token: user.token })).body.items.length, 0)
    })

    test('slugs of exactly 3 and 50 characters are accepted', async () => {
      const user = await server.user()
      assert.equal((await site(user, { slug: 'abc' })).slug, 'abc')
      const long = `b${'a1'.repeat(24)}z`
      assert.equal(long.length, 50)
      assert.equal((await site(user, { slug: long })).slug, long)
    })

    test('an invalid or missing category is 422 VALIDATION_FAILED with fields.category', async () => {
      const user = await server.user()
      const bad = await createSite(user, { category: 'bakery' })
      assertError(bad, 422, 'VALIDATION_FAILED')
      assert.equal(typeof bad.body.error.fields?.category, 'string')
      const missing = await server.api('POST', '/v1/websites', { token: user.token, body: { name: 'No category', files: bundle() } })
      assertError(missing, 422, 'VALIDATION_FAILED')
      assert.equal(typeof missing.body.error.fields?.category, 'string')
    })

    test('a name longer than 120 characters is 422 VALIDATION_FAILED with fields.name', async () => {
      const user = await server.user()
      const res = await createSite(user, { name: 'n'.repeat(121) })
      assertError(res, 422, 'VALIDATION_FAILED')
      assert.equal(typeof res.body.error.fields?.name, 'string')
    })

    // ---- listWebsites ---------------------------------------------------------------------

    test('listWebsites returns items and the identical websites alias, most recently updated first, with websiteLimits', async () => {
      const user = await server.user()
      const a = await site(user, { name: 'List A', files: bundle('List A') })
      const b = await site(user, { name: 'List B', files: bundle('List B') })
      const c = await site(user, { name: 'List C', files: bundle('List C') })
      // A new live version makes A the most recently updated.
      assert.equal((await publishVersion(user, a.websiteId, { files: bundle('List A v2') })).status, 201)

      const res = await server.api('GET', '/v1/websites', { token: user.token })
      assert.equal(res.status, 200)
      assert.deepEqual(res.body.websites, res.body.items)
      assert.deepEqual(
        res.body.items.map((s: any) => s.id),
        [a.websiteId, c.websiteId, b.websiteId],
      )
      const updated = res.body.items.map((s: any) => s.updatedAt)
      assert.deepEqual([...updated].sort().reverse(), updated)
      assert.deepEqual(res.body.websiteLimits, { count: 3, max: server.config.maxWebsites, canCreate: true, formSubmissions: 0 })

      const first = res.body.items[0]
      assert.equal(first.name, 'List A')
      assert.equal(first.slug, a.slug)
      assert.equal(first.pageUrl, pageUrl(a.slug))
      assert.equal(first.status, 'active')
      assert.equal(first.role, 'owner')
      assert.equal(first.latestJobStatus, 'ready')
      assert.equal(first.paid, false)
      assert.equal(first.subscription, null)
      assert.match(first.currentVersionId, /^job_/)
      assert.match(first.updatedAt, ISO)
      assert.ok(!('ownerName' in first), 'ownerName is only for collaborators')
    })

    test('listWebsites of a new account is empty and may create', async () => {
      const user = await server.user()
      const res = await server.api('GET', '/v1/websites', { token: user.token })
      assert.equal(res.status, 200)
      assert.deepEqual(res.body.items, [])
      assert.deepEqual(res.body.websites, [])
      assert.deepEqual(res.body.websiteLimits, { count: 0, max: server.config.maxWebsites, canCreate: true, formSubmissions: 0 })
    })

    // ---- getWebsite -----------------------------------------------------------------------

    test('getWebsite returns the site with its current version and every version, newest first', async () => {
      const user = await server.user()
      const created = await site(user, { name: 'Full view', category: 'restaurant', description: 'A small place.', files: bundle('v1') })
      const v2 = await publishVersion(user, created.websiteId, { files: bundle('v2'), message: 'Second' })
      const v3 = await publishVersion(user, created.websiteId, { files: bundle('v3'), promote: false })
      assert.equal(v2.status, 201)
      assert.equal(v3.status, 201)

      const res = await server.api('GET', `/v1/websites/${created.websiteId}`, { token: user.token })
      assert.equal(res.status, 200)
      const w = res.body
      assert.equal(w.id, created.websiteId)
      assert.equal(w.name, 'Full view')
      assert.equal(w.slug, created.slug)
      assert.equal(w.status, 'active')
      assert.equal(w.role, 'owner')
      assert.ok(!('ownerName' in w))
      assert.equal(w.category, 'restaurant')
      assert.equal(w.description, 'A small place.')
      assert.equal(w.pageUrl, pageUrl(created.slug))
      assert.equal(w.currentVersionId, v2.body.jobId)
      assert.equal(w.freeChangesUsed, 2, 'versions after the first')
      assert.equal(w.freeChangesLimit, server.config.freeChangesLimit)
      assert.equal(w.passwordProtected, false)
      assert.match(w.createdAt, ISO)
      assert.match(w.updatedAt, ISO)
      assert.ok(w.updatedAt >= w.createdAt)

      const cv = w.currentVersion
      assert.equal(cv.id, v2.body.jobId)
      assert.equal(cv.jobId, v2.body.jobId)
      assert.equal(cv.version, 2)
      assert.equal(cv.kind, 'refinement')
      assert.equal(cv.status, 'ready')
      assert.equal(cv.instruction, 'Second')
      assert.equal(cv.isCurrent, true)
      assert.match(cv.createdAt, ISO)
      assert.deepEqual(
        cv.files.map((f: any) => f.originalName),
        ['index.html', 'style.css'],
      )

      assert.deepEqual(
        w.versions.map((v: any) => v.version),
        [3, 2, 1],
      )
      assert.deepEqual(
        w.versions.map((v: any) => v.isCurrent),
        [false, true, false],
      )
      assert.deepEqual(
        w.versions.map((v: any) => v.id),
        [v3.body.jobId, v2.body.jobId, created.jobId],
      )
    })

    test('a site without a description has description null', async () => {
      const user = await server.user()
      const created = await site(user, { name: 'Plain' })
      const res = await server.api('GET', `/v1/websites/${created.websiteId}`, { token: user.token })
      assert.equal(res.body.description, null)
      assert.equal(res.body.category, 'other')
      assert.equal(res.body.freeChangesUsed, 0)
      assert.equal(res.body.currentVersion.kind, 'initial')
      assert.equal(res.body.currentVersionId, created.jobId)
    })

    test('getWebsite of an unknown id is 404 NOT_FOUND', async () => {
      const user = await server.user()
      assertError(await server.api('GET', '/v1/websites/web_doesNotExist0000000000', { token: user.token }), 404, 'NOT_FOUND')
    })

    // ---- createWebsiteVersion -------------------------------------------------------------

    test('a version published without promote goes live on the very next request', async () => {
      const user = await server.user()
      const v1Files = bundle('Version one')
      const created = await site(user, { name: 'Goes live', files: v1Files })
      assert.deepEqual((await server.site(created.slug, '/')).body, indexOf(v1Files), 'v1 is served (and cached)')

      const v2Files = bundle('Version two')
      const res = await publishVersion(user, created.websiteId, { files: v2Files })
      assert.equal(res.status, 201, res.text)
      assert.equal(res.body.websiteId, created.websiteId)
      assert.match(res.body.jobId, /^job_/)
      assert.notEqual(res.body.jobId, created.jobId)
      assert.equal(res.body.version, 2)
      assert.equal(res.body.isCurrent, true)
      assert.equal(res.body.pageUrl, pageUrl(created.slug))
      assert.equal(res.body.bytesWritten, decodedBytes(v2Files))
      rateLimitParams(res.headers.get('ratelimit'))
      rateLimitParams(res.headers.get('ratelimit-policy'))

      const live = await server.site(created.slug, '/')
      assert.equal(live.status, 200)
      assert.deepEqual(live.body, indexOf(v2Files))
    })

    test('a version published with promote false is stored but not served live; its preview host serves it', async () => {
      const user = await server.user()
      const v1Files = bundle('Live one')
      const created = await site(user, { name: 'Review first', files: v1Files })
      assert.deepEqual((await server.site(created.slug, '/')).body, indexOf(v1Files))

      const v2Files = bundle('Draft two')
      const res = await publishVersion(user, created.websiteId, { files: v2Files, promote: false })
      assert.equal(res.status, 201, res.text)
      assert.equal(res.body.version, 2)
      assert.equal(res.body.isCurrent, false)
      assert.equal(res.body.pageUrl, pageUrl(created.slug))

      const live = await server.site(created.slug, '/')
      assert.deepEqual(live.body, indexOf(v1Files), 'the previous version stays live')
      const preview = await server.site(`${created.slug}--v2`, '/')
      assert.equal(preview.status, 200)
      assert.deepEqual(preview.body, indexOf(v2Files))
      const previewV1 = await server.site(`${created.slug}--v1`, '/')
      assert.deepEqual(previewV1.body, indexOf(v1Files))

      const versions = await server.api('GET', `/v1/websites/${created.websiteId}/versions`, { token: user.token })
      assert.equal(versions.status, 200)
      assert.deepEqual(
        versions.body.versions.map((v: any) => v.id),
        [res.body.jobId, created.jobId],
      )
      const got = await server.api('GET', `/v1/websites/${created.websiteId}`, { token: user.token })
      assert.equal(got.body.currentVersionId, created.jobId)
    })

    test('a preview host probed before its version existed serves that version once it is published', async () => {
      const user = await server.user()
      const created = await site(user, { name: 'Early probe', files: bundle('Probe one') })
      assert.equal((await server.site(`${created.slug}--v2`, '/')).status, 404, 'no version 2 yet')

      const v2Files = bundle('Probe two')
      assert.equal((await publishVersion(user, created.websiteId, { files: v2Files, promote: false })).status, 201)
      const preview = await server.site(`${created.slug}--v2`, '/')
      assert.equal(preview.status, 200)
      assert.deepEqual(preview.body, indexOf(v2Files))
      assert.deepEqual((await server.site(created.slug, '/')).body, indexOf(bundle('Probe one')), 'live is unchanged')
    })

    test('the version message is stored as its instruction; kinds are initial then refinement', async () => {
      const user = await server.user()
      const created = await site(user, { name: 'Changelog' })
      const res = await publishVersion(user, created.websiteId, { files: bundle('Menu'), message: 'Added the menu' })
      assert.equal(res.status, 201)
      const list = await server.api('GET', `/v1/websites/${created.websiteId}/versions`, { token: user.token })
      const [v2, v1] = list.body.versions
      assert.equal(v2.instruction, 'Added the menu')
      assert.equal(v2.kind, 'refinement')
      assert.equal(v1.kind, 'initial')
      assert.ok(v1.instruction === undefined || v1.instruction === null, 'the initial version has no message')
    })

    test('createWebsiteVersion validates its body: bad bundle 422 PUBLISH_INVALID, long message 422 VALIDATION_FAILED, nothing stored', async () => {
      const user = await server.user()
      const created = await site(user, { name: 'Validated' })
      const noIndex = await publishVersion(user, created.websiteId, { files: [{ path: 'about.html', content: '<p>About</p>' }] })
      assertError(noIndex, 422, 'PUBLISH_INVALID')
      assert.ok(noIndex.body.error.violations.some((v: any) => v.code === 'MISSING_INDEX'))
      const long = await publishVersion(user, created.websiteId, { files: bundle(), message: 'm'.repeat(2001) })
      assertError(long, 422, 'VALIDATION_FAILED')
      assert.equal(typeof long.body.error.fields?.message, 'string')
      const empty = await publishVersion(user, created.websiteId, { files: [] })
      assertError(empty, 422, 'VALIDATION_FAILED')
      assert.equal(await countVersions(created.websiteId), 1)
    })

    test('a bundle of 41 files is PUBLISH_INVALID with TOO_MANY_FILES among all its other violations; 40 files are accepted', async () => {
      const user = await server.user()
      const styles = (n: number): File[] => Array.from({ length: n }, (_, i) => ({ path: `css/s${i}.css`, content: `p { margin: ${i}px; }` }))
      const broken: File[] = [{ path: 'page.html', content: '<!doctype html><title>P</title><iframe src="x.html"></iframe>' }, ...styles(40)]
      assert.equal(broken.length, 41)
      const created = await createSite(user, { files: broken })
      assertError(created, 422, 'PUBLISH_INVALID')
      assert.deepEqual(created.body.error.violations.map((v: { code: string }) => v.code).sort(), ['IFRAME', 'MISSING_INDEX', 'TOO_MANY_FILES'])

      const target = await site(user, { name: 'Forty files' })
      const version = await publishVersion(user, target.websiteId, { files: broken })
      assertError(version, 422, 'PUBLISH_INVALID')
      assert.deepEqual(version.body.error.violations.map((v: { code: string }) => v.code).sort(), ['IFRAME', 'MISSING_INDEX', 'TOO_MANY_FILES'])
      assert.equal(await countVersions(target.websiteId), 1)

      const forty: File[] = [bundle()[0], ...styles(39)]
      assert.equal((await publishVersion(user, target.websiteId, { files: forty })).status, 201)
    })

    test('createWebsiteVersion of an unknown site is 404 NOT_FOUND', async () => {
      const user = await server.user()
      assertError(await publishVersion(user, 'web_doesNotExist0000000000', { files: bundle() }), 404, 'NOT_FOUND')
    })

    // ---- listWebsiteVersions --------------------------------------------------------------

    test('listWebsiteVersions lists versions newest first with file metadata', async () => {
      const user = await server.user()
      const v1Files = bundle('One', [{ path: 'images/dot.png', content: PNG_BASE64, contentEncoding: 'base64' }])
      const created = await site(user, { name: 'With files', files: v1Files })
      const v2Page: File = { path: 'index.html', content: '<!doctype html><title>Two</title><p>Été</p>' }
      assert.equal((await publishVersion(user, created.websiteId, { files: [v2Page] })).status, 201)

      const res = await server.api('GET', `/v1/websites/${created.websiteId}/versions`, { token: user.token })
      assert.equal(res.status, 200)
      const [v2, v1] = res.body.versions
      assert.equal(res.body.versions.length, 2)
      assert.equal(v2.version, 2)
      assert.equal(v1.version, 1)
      for (const v of res.body.versions) {
        assert.equal(v.jobId, v.id)
        assert.equal(v.status, 'ready')
        assert.equal(typeof v.isCurrent, 'boolean')
        assert.match(v.createdAt, ISO)
      }
      assert.deepEqual(v2.files, [
        { originalName: 'index.html', contentType: 'text/html', size: Buffer.byteLength(v2Page.content), sha256: sha256(v2Page.content) },
      ])
      const byName = Object.fromEntries(v1.files.map((f: any) => [f.originalName, f]))
      assert.deepEqual(Object.keys(byName).sort(), ['images/dot.png', 'index.html', 'style.css'])
      assert.deepEqual(byName['images/dot.png'], {
        originalName: 'images/dot.png',
        contentType: 'image/png',
        size: PNG.length,
        sha256: sha256(PNG),
      })
      assert.deepEqual(byName['style.css'], {
        originalName: 'style.css',
        contentType: 'text/css',
        size: Buffer.byteLength(v1Files[1].content),
        sha256: sha256(v1Files[1].content),
      })
      assert.equal(byName['index.html'].size, Buffer.byteLength(v1Files[0].content))
    })

    test('listWebsiteVersions of an unknown site is 404 NOT_FOUND', async () => {
      const user = await server.user()
      assertError(await server.api('GET', '/v1/websites/web_doesNotExist0000000000/versions', { token: user.token }), 404, 'NOT_FOUND')
    })

    // ---- promote --------------------------------------------------------------------------

    test('promoting an older version makes it live again (rollback)', async () => {
      const user = await server.user()
      const v1Files = bundle('Original')
      const created = await site(user, { name: 'Rollback', files: v1Files })
      const v2Files = bundle('Broken redesign')
      const v2 = await publishVersion(user, created.websiteId, { files: v2Files })
      assert.deepEqual((await server.site(created.slug, '/')).body, indexOf(v2Files))

      const res = await server.api('POST', `/v1/websites/${created.websiteId}/versions/${created.jobId}/promote`, { token: user.token })
      assert.equal(res.status, 200, res.text)
      assert.equal(res.body.id, created.jobId)
      assert.equal(res.body.version, 1)
      assert.equal(res.body.isCurrent, true)

      assert.deepEqual((await server.site(created.slug, '/')).body, indexOf(v1Files), 'v1 is live again')
      const got = await server.api('GET', `/v1/websites/${created.websiteId}`, { token: user.token })
      assert.equal(got.body.currentVersionId, created.jobId)
      assert.deepEqual(
        got.body.versions.map((v: any) => v.isCurrent),
        [false, true],
      )
      assert.equal(await countVersions(created.websiteId), 2, 'promotion creates no version')

      // And forward again to the stored version.
      const forward = await server.api('POST', `/v1/websites/${created.websiteId}/versions/${v2.body.jobId}/promote`, { token: user.token })
      assert.equal(forward.status, 200)
      assert.deepEqual((await server.site(created.slug, '/')).body, indexOf(v2Files))
    })

    test('promoting a version that was published with promote false makes it live', async () => {
      const user = await server.user()
      const created = await site(user, { name: 'Staged', files: bundle('Staged v1') })
      const v2Files = bundle('Staged v2')
      const v2 = await publishVersion(user, created.websiteId, { files: v2Files, promote: false })
      const res = await server.api('POST', `/v1/websites/${created.websiteId}/versions/${v2.body.jobId}/promote`, { token: user.token })
      assert.equal(res.status, 200)
      assert.deepEqual((await server.site(created.slug, '/')).body, indexOf(v2Files))
    })

    test("promoting another site's version, or an unknown one, is 404 NOT_FOUND", async () => {
      const user = await server.user()
      const mine = await site(user, { name: 'Promote target' })
      const other = await site(user, { name: 'Promote other' })
      const res = await server.api('POST', `/v1/websites/${mine.websiteId}/versions/${other.jobId}/promote`, { token: user.token })
      assertError(res, 404, 'NOT_FOUND')
      const unknown = await server.api('POST', `/v1/websites/${mine.websiteId}/versions/job_doesNotExist00000000000/promote`, { token: user.token })
      assertError(unknown, 404, 'NOT_FOUND')
      const got = await server.api('GET', `/v1/websites/${mine.websiteId}`, { token: user.token })
      assert.equal(got.body.currentVersionId, mine.jobId, 'the live version did not change')
    })

    test('promote takes a version number in place of the version id', async () => {
      const user = await server.user()
      const v1Files = bundle('By number v1')
      const created = await site(user, { name: 'By number', files: v1Files })
      const v2Files = bundle('By number v2')
      assert.equal((await publishVersion(user, created.websiteId, { files: v2Files })).status, 201)
      const promote = (version: string) => server.api('POST', `/v1/websites/${created.websiteId}/versions/${version}/promote`, { token: user.token })

      const res = await promote('1')
      assert.equal(res.status, 200, res.text)
      assert.equal(res.body.id, created.jobId)
      assert.equal(res.body.version, 1)
      assert.equal(res.body.isCurrent, true)
      assert.deepEqual((await server.site(created.slug, '/')).body, indexOf(v1Files), 'v1 is live again')
      assert.equal((await promote('2')).status, 200)
      assert.deepEqual((await server.site(created.slug, '/')).body, indexOf(v2Files))

      const missing = await promote('3')
      assertError(missing, 404, 'NOT_FOUND')
      assert.match(missing.body.error.message, /no version 3/)
      for (const bad of ['0', 'v1', 'job_doesNotExist00000000000']) {
        const res = await promote(bad)
        assertError(res, 404, 'NOT_FOUND')
        assert.match(res.body.error.message, /version id \(job_\.\.\.\) or a version number/, bad)
      }
      const got = await server.api('GET', `/v1/websites/${created.websiteId}`, { token: user.token })
      assert.equal(got.body.currentVersion.version, 2, 'a refused promote changes nothing')
    })

    test('promoting a version with files where a collection created since serves its entries is 409 PROMOTE_CONFLICT', async () => {
      const user = await server.user()
      const v1Files = bundle('Old blog', [
        { path: 'posts-old.html', content: '<!doctype html><title>Old post</title><p>Old file</p>' },
        { path: 'posts/archive.html', content: '<!doctype html><title>Archive</title><p>Archive</p>' },
      ])
      const created = await site(user, { name: 'Shadowed', files: v1Files })
      const v2Files = bundle('New blog')
      assert.equal((await publishVersion(user, created.websiteId, { files: v2Files })).status, 201)
      const collection = await server.api('POST', `/v1/websites/${created.websiteId}/collections`, {
        token: user.token,
        body: { name: 'posts', label: 'Posts', fields: [{ name: 'title', label: 'Title', type: 'text' }] },
      })
      assert.equal(collection.status, 201, collection.text)
      const entry = await server.api('PUT', `/v1/websites/${created.websiteId}/collections/posts/entries/old`, {
        token: user.token,
        body: { data: { title: 'The old entry' } },
      })
      assert.equal(entry.status, 201, entry.text)
      assert.match((await server.site(created.slug, '/posts-old')).body.toString(), /The old entry/)

      for (const version of [created.jobId, '1']) {
        const res = await server.api('POST', `/v1/websites/${created.websiteId}/versions/${version}/promote`, { token: user.token })
        assertError(res, 409, 'PROMOTE_CONFLICT')
        const { message } = res.body.error
        assert.ok(message.includes('"posts-old.html"'), message)
        assert.ok(message.includes('"posts/archive.html"'), message)
        assert.ok(message.includes('collection "posts"'), message)
        assert.ok(message.includes('posts-*'), 'names the paths the collection reserves')
        assert.equal(typeof res.body.error.fields?.versionId, 'string')
      }
      const got = await server.api('GET', `/v1/websites/${created.websiteId}`, { token: user.token })
      assert.equal(got.body.currentVersion.version, 2, 'the live version did not change')
      assert.match((await server.site(created.slug, '/posts-old')).body.toString(), /The old entry/, 'the entry is still served')
      assert.deepEqual((await server.site(created.slug, '/')).body, indexOf(v2Files))

      // A version without such files may still be promoted.
      const v3 = await publishVersion(user, created.websiteId, { files: bundle('Staged'), promote: false })
      assert.equal((await server.api('POST', `/v1/websites/${created.websiteId}/versions/${v3.body.jobId}/promote`, { token: user.token })).status, 200)
    })

    // ---- getJob ---------------------------------------------------------------------------

    test('getJob returns a ready job with pageUrl, attempt and statusUrl', async () => {
      const user = await server.user()
      const created = await site(user, { name: 'Job view' })
      const res = await server.api('GET', `/v1/jobs/${created.jobId}`, { token: user.token })
      assert.equal(res.status, 200)
      assert.equal(res.body.jobId, created.jobId)
      assert.equal(res.body.websiteId, created.websiteId)
      assert.equal(res.body.status, 'ready')
      assert.equal(res.body.pageUrl, pageUrl(created.slug))
      assert.equal(res.body.attempt, 1)
      assert.equal(res.body.statusUrl, `/jobs/${created.jobId}`)
      assert.ok('currentPhase' in res.body)
      assert.ok('progressMessage' in res.body)

      const v2 = await publishVersion(user, created.websiteId, { files: bundle('Job two'), promote: false })
      const job2 = await server.api('GET', `/v1/jobs/${v2.body.jobId}`, { token: user.token })
      assert.equal(job2.status, 200)
      assert.equal(job2.body.status, 'ready', 'API publishes are ready when the response is sent')
      assert.equal(job2.body.websiteId, created.websiteId)
    })

    test('getJob of an unknown job is 404 NOT_FOUND', async () => {
      const user = await server.user()
      assertError(await server.api('GET', '/v1/jobs/job_doesNotExist00000000000', { token: user.token }), 404, 'NOT_FOUND')
    })

    // ---- suggestSlug ----------------------------------------------------------------------

    const suggest = (user: TestUser, value: string) => server.api('GET', `/v1/slugs/suggest?value=${encodeURIComponent(value)}`, { token: user.token })

    const assertClaimable = async (user: TestUser, slug: string) => {
      const res = await createSite(user, { slug })
      assert.equal(res.status, 201, `the suggestion ${slug} can be claimed: ${res.text}`)
    }

    test('suggestSlug of a valid, free slug returns it as available, with no message', async () => {
      const user = await server.user()
      const res = await suggest(user, 'patisserie-du-coin')
      assert.equal(res.status, 200)
      assert.deepEqual(res.body, {
        slug: 'patisserie-du-coin',
        valid: true,
        available: true,
        suggestion: 'patisserie-du-coin',
        pageUrl: pageUrl('patisserie-du-coin'),
      })
      await assertClaimable(user, res.body.suggestion)
    })

    test('suggestSlug of a name that is not itself a slug is invalid and unavailable, says why, and suggests its normalized form', async () => {
      const user = await server.user()
      for (const [value, normalized] of [
        ['My Café!', 'my-cafe'],
        ['Crêperie du Port', 'creperie-du-port'],
        // Letters with no accent to drop are spelled in Latin, not turned into hyphens.
        ['Café Größe', 'cafe-groesse'],
        ['Smørrebrød & Łódź', 'smorrebrod-lodz'],
        ['Æbleskiver', 'aebleskiver'],
      ] as const) {
        const res = await suggest(user, value)
        assert.equal(res.status, 200)
        assert.equal(res.body.slug, normalized, 'slug is the normalized input')
        assert.equal(res.body.valid, false, `${value} is not a well-formed slug`)
        assert.equal(res.body.available, false, 'an invalid input is never available')
        assert.equal(res.body.suggestion, normalized)
        assert.equal(res.body.pageUrl, pageUrl(normalized))
        assert.ok(res.body.message.includes(JSON.stringify(value)), res.body.message)
        assert.match(res.body.message, /not a valid slug/)
        assert.ok(res.body.message.includes(`"${normalized}" is available`), res.body.message)
        await assertClaimable(user, res.body.suggestion)
      }
    })

    test('suggestSlug quotes at most a short part of a long input in its message', async () => {
      const user = await server.user()
      const value = 'Long name '.repeat(12)
      assert.equal(value.length, 120)
      const res = await suggest(user, value)
      assert.equal(res.status, 200)
      assert.equal(res.body.valid, false)
      assert.ok(!res.body.message.includes(value), res.body.message)
      assert.ok(res.body.message.length < 300, res.body.message)
      assert.ok(res.body.slug.length <= 50)
      const tooLong = await suggest(user, 'x'.repeat(120))
      assert.equal(tooLong.body.valid, false)
      assert.match(tooLong.body.message, /3 to 50 characters/)
      assert.ok(!tooLong.body.message.includes('x'.repeat(120)), tooLong.body.message)
    })

    test('suggestSlug of a taken slug suggests a free variant', async () => {
      const user = await server.user()
      await site(user, { slug: 'taken-spot' })
      const res = await suggest(user, 'taken-spot')
      assert.equal(res.status, 200)
      assert.equal(res.body.slug, 'taken-spot')
      assert.equal(res.body.valid, true)
      assert.equal(res.body.available, false)
      assert.equal(res.body.suggestion, 'taken-spot-2')
      assert.equal(res.body.pageUrl, pageUrl('taken-spot-2'))
      assert.match(res.body.message, /taken/)
      assert.match(res.body.message, /taken-spot-2/)
      await assertClaimable(user, res.body.suggestion)
      const again = await suggest(user, 'taken-spot')
      assert.equal(again.body.suggestion, 'taken-spot-3', 'the next suggestion skips the claimed one')
      const named = await suggest(user, 'Taken Spot')
      assert.deepEqual(
        [named.body.slug, named.body.valid, named.body.available, named.body.suggestion],
        ['taken-spot', false, false, 'taken-spot-3'],
        'a name whose normalized form is taken',
      )
    })

    test('suggestSlug of a name whose normalized form is taken says that form is taken and names the suggestion', async () => {
      const user = await server.user()
      await site(user, { slug: 'rosa-s-bakery' })
      const res = await suggest(user, "Rosa's Bakery")
      assert.equal(res.status, 200)
      assert.deepEqual(
        [res.body.slug, res.body.valid, res.body.available, res.body.suggestion, res.body.pageUrl],
        ['rosa-s-bakery', false, false, 'rosa-s-bakery-2', pageUrl('rosa-s-bakery-2')],
      )
      assert.match(res.body.message, /not a valid slug/)
      assert.ok(res.body.message.includes('"rosa-s-bakery" is already taken'), res.body.message)
      assert.ok(res.body.message.includes('"rosa-s-bakery-2" is available'), res.body.message)
      const reserved = await suggest(user, 'Admin')
      assert.ok(reserved.body.message.includes('"admin" is reserved'), reserved.body.message)
      const free = await suggest(user, "Rosa's Bakery Annex")
      assert.ok(!free.body.message.includes('taken'), `a free normalized form is not called taken: ${free.body.message}`)
      await assertClaimable(user, res.body.suggestion)
    })

    test('suggestSlug of a reserved slug is valid but not available', async () => {
      const user = await server.user()
      for (const value of ['admin', 'api']) {
        const res = await suggest(user, value)
        assert.equal(res.status, 200)
        assert.equal(res.body.slug, value)
        assert.equal(res.body.valid, true)
        assert.equal(res.body.available, false)
        assert.notEqual(res.body.suggestion, res.body.slug)
        assert.match(res.body.message, /reserved/)
        assert.equal(res.body.pageUrl, pageUrl(res.body.suggestion))
        await assertClaimable(user, res.body.suggestion)
      }
      const upper = await suggest(user, 'API')
      assert.deepEqual([upper.body.slug, upper.body.valid, upper.body.available], ['api', false, false])
      assert.notEqual(upper.body.suggestion, 'api', 'the suggestion is never a reserved word')
    })

    test('suggestSlug of an invalid input says why and still suggests an available slug', async () => {
      const user = await server.user()
      for (const value of ['12', '--', 'a', '9 lives']) {
        const res = await suggest(user, value)
        assert.equal(res.status, 200, value)
        assert.equal(res.body.valid, false, value)
        assert.equal(res.body.available, false, value)
        assert.equal(typeof res.body.message, 'string', value)
        assert.match(res.body.suggestion, /^[a-z][a-z0-9-]{2,49}$/, value)
        assert.ok(!res.body.suggestion.includes('--'), value)
        assert.equal(res.body.pageUrl, pageUrl(res.body.suggestion))
        await assertClaimable(user, res.body.suggestion)
      }
      assert.equal((await suggest(user, '12')).body.slug, '12')
      assert.equal((await suggest(user, '--')).body.slug, '')
      assert.equal((await suggest(user, 'a')).body.slug, 'a')
    })

    test('suggestSlug of an input with nothing left after normalization says so and still suggests an available slug', async () => {
      const user = await server.user()
      for (const value of ['--', '!!!', '日本']) {
        const res = await suggest(user, value)
        assert.equal(res.status, 200, value)
        assert.deepEqual([res.body.slug, res.body.valid, res.body.available], ['', false, false], value)
        assert.match(res.body.message, /no letters or digits/, value)
        assert.match(res.body.suggestion, /^[a-z][a-z0-9-]{2,49}$/, value)
        await assertClaimable(user, res.body.suggestion)
      }
    })

    test('suggestSlug collapses repeated hyphens in its input, which is not a valid slug itself', async () => {
      const user = await server.user()
      const res = await suggest(user, 'my--shop')
      assert.equal(res.body.slug, 'my-shop')
      assert.equal(res.body.valid, false)
      assert.equal(res.body.available, false)
      assert.match(res.body.message, /--/)
      assert.equal(res.body.suggestion, 'my-shop')
    })

    test('suggestSlug without value, with an empty one, or with more than 120 characters is 422 VALIDATION_FAILED', async () => {
      const user = await server.user()
      const missing = await server.api('GET', '/v1/slugs/suggest', { token: user.token })
      assertError(missing, 422, 'VALIDATION_FAILED')
      assert.equal(typeof missing.body.error.fields?.value, 'string')
      const empty = await server.api('GET', '/v1/slugs/suggest?value=', { token: user.token })
      assertError(empty, 422, 'VALIDATION_FAILED')
      const long = await suggest(user, 'x'.repeat(121))
      assertError(long, 422, 'VALIDATION_FAILED')
      assert.equal(typeof long.body.error.fields?.value, 'string')
      assert.equal((await suggest(user, 'x'.repeat(120))).status, 200)
    })
  })

  describe(`websites API: owners, editors and strangers (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    let members: Awaited<ReturnType<typeof siteWithMembers>>
    before(async () => {
      server = await sharedServer(store.name)
      members = await siteWithMembers(server, { name: 'Alice Studio', category: 'portfolio', files: bundle('Alice') })
    })
    const { publishVersion, countVersions } = clientFor(() => server)

    test("a stranger cannot see or change another user's site: every operation is 404 NOT_FOUND", async () => {
      const { websiteId, jobId } = members.site
      assertError(await server.api('GET', `/v1/websites/${websiteId}`, { token: members.stranger.token }), 404, 'NOT_FOUND')
      assertError(await server.api('GET', `/v1/websites/${websiteId}/versions`, { token: members.stranger.token }), 404, 'NOT_FOUND')
      assertError(await publishVersion(members.stranger, websiteId, { files: bundle('Hijack') }), 404, 'NOT_FOUND')
      assertError(await server.api('POST', `/v1/websites/${websiteId}/versions/${jobId}/promote`, { token: members.stranger.token }), 404, 'NOT_FOUND')
      assertError(await server.api('GET', `/v1/jobs/${jobId}`, { token: members.stranger.token }), 404, 'NOT_FOUND')

      const list = await server.api('GET', '/v1/websites', { token: members.stranger.token })
      assert.deepEqual(list.body.items, [])
      assert.equal(await countVersions(websiteId), 1, 'the refused publish stored nothing')
      assert.equal((await server.site(members.site.slug, '/')).body.toString().includes('Hijack'), false)
    })

    test('the list finds one site by slug for its owner and editors, nobody else; a malformed slug is VALIDATION_FAILED', async () => {
      const { slug, websiteId } = members.site
      const bySlug = (user: TestUser, value: string) => server.api('GET', `/v1/websites?slug=${encodeURIComponent(value)}`, { token: user.token })
      for (const user of [members.owner, members.editor]) {
        const found = await bySlug(user, slug)
        assert.equal(found.status, 200, found.text)
        assert.deepEqual(
          found.body.items.map((item: { id: string }) => item.id),
          [websiteId],
        )
      }
      assert.deepEqual((await bySlug(members.stranger, slug)).body.items, [])
      assert.deepEqual((await bySlug(members.owner, 'no-such-site')).body.items, [])
      const malformed = await bySlug(members.owner, 'Not A Slug!')
      assertError(malformed, 422, 'VALIDATION_FAILED')
      assert.ok(malformed.body.error.fields?.slug, malformed.text)
      assertError(await server.api('GET', '/v1/websites?owner=me', { token: members.owner.token }), 422, 'VALIDATION_FAILED')
    })

    test('the 404 for a hidden site is the same as for a site that does not exist', async () => {
      const hidden = await server.api('GET', `/v1/websites/${members.site.websiteId}`, { token: members.stranger.token })
      const missing = await server.api('GET', '/v1/websites/web_doesNotExist0000000000', { token: members.stranger.token })
      assert.equal(hidden.status, missing.status)
      assert.equal(hidden.body.error.code, missing.body.error.code)
      assert.equal(hidden.body.error.message, missing.body.error.message)
    })

    test('an editor sees the site with role editor and ownerName', async () => {
      const list = await server.api('GET', '/v1/websites', { token: members.editor.token })
      assert.equal(list.status, 200)
      assert.equal(list.body.items.length, 1)
      const summary = list.body.items[0]
      assert.equal(summary.id, members.site.websiteId)
      assert.equal(summary.role, 'editor')
      assert.equal(summary.ownerName, members.owner.email.split('@')[0])

      const got = await server.api('GET', `/v1/websites/${members.site.websiteId}`, { token: members.editor.token })
      assert.equal(got.status, 200)
      assert.equal(got.body.role, 'editor')
      assert.equal(got.body.ownerName, members.owner.email.split('@')[0])
      assert.equal((await server.api('GET', `/v1/websites/${members.site.websiteId}/versions`, { token: members.editor.token })).status, 200)
      assert.equal((await server.api('GET', `/v1/jobs/${members.site.jobId}`, { token: members.editor.token })).status, 200)

      const owner = await server.api('GET', `/v1/websites/${members.site.websiteId}`, { token: members.owner.token })
      assert.equal(owner.body.role, 'owner')
      assert.ok(!('ownerName' in owner.body))
    })

    test('an editor can publish a version, and it goes live', async () => {
      const files = bundle('Edited by Bob')
      const res = await publishVersion(members.editor, members.site.websiteId, { files, message: 'Bob was here' })
      assert.equal(res.status, 201, res.text)
      assert.equal(res.body.isCurrent, true)
      assert.deepEqual((await server.site(members.site.slug, '/')).body, Buffer.from(files[0].content))
      const job = await server.api('GET', `/v1/jobs/${res.body.jobId}`, { token: members.editor.token })
      assert.equal(job.status, 200)
      const forOwner = await server.api('GET', `/v1/websites/${members.site.websiteId}`, { token: members.owner.token })
      assert.equal(forOwner.body.currentVersionId, res.body.jobId)
      assert.equal(forOwner.body.versions[0].instruction, 'Bob was here')
    })

    test('an editor can promote a version', async () => {
      const res = await server.api('POST', `/v1/websites/${members.site.websiteId}/versions/${members.site.jobId}/promote`, { token: members.editor.token })
      assert.equal(res.status, 200, res.text)
      assert.deepEqual((await server.site(members.site.slug, '/')).body, Buffer.from(bundle('Alice')[0].content))
    })

    test("a shared site counts only toward its owner's websiteLimits", async () => {
      const forEditor = await server.api('GET', '/v1/websites', { token: members.editor.token })
      assert.equal(forEditor.body.items.length, 1)
      assert.equal(forEditor.body.websiteLimits.count, 0)
      assert.equal(forEditor.body.websiteLimits.canCreate, true)
      const forOwner = await server.api('GET', '/v1/websites', { token: members.owner.token })
      assert.equal(forOwner.body.websiteLimits.count, 1)
    })
  })

  describe(`websites API: website limit (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    before(async () => {
      server = await startTestServer(store.name, { PLINTH_MAX_WEBSITES: '2' })
    })
    after(() => server?.close())
    const { createSite, site } = clientFor(() => server)

    test('creating a website past PLINTH_MAX_WEBSITES is 403 WEBSITE_LIMIT_REACHED and canCreate turns false', async () => {
      const user = await server.user()
      await site(user, { name: 'One' })
      let list = await server.api('GET', '/v1/websites', { token: user.token })
      assert.deepEqual(list.body.websiteLimits, { count: 1, max: 2, canCreate: true, formSubmissions: 0 })
      await site(user, { name: 'Two' })
      list = await server.api('GET', '/v1/websites', { token: user.token })
      assert.deepEqual(list.body.websiteLimits, { count: 2, max: 2, canCreate: false, formSubmissions: 0 })

      const third = await createSite(user, { name: 'Three' })
      assertError(third, 403, 'WEBSITE_LIMIT_REACHED')
      list = await server.api('GET', '/v1/websites', { token: user.token })
      assert.equal(list.body.items.length, 2, 'nothing was created')
      assert.deepEqual(list.body.websiteLimits, { count: 2, max: 2, canCreate: false, formSubmissions: 0 })
    })

    test('concurrent creates cannot overshoot the website limit together', async () => {
      const user = await server.user()
      const results = await Promise.all(Array.from({ length: 5 }, (_, i) => createSite(user, { name: `Burst ${i}`, files: bundle(`Burst ${i}`) })))
      const statuses = results.map((r) => r.status).sort()
      assert.deepEqual(statuses, [201, 201, 403, 403, 403])
      for (const res of results.filter((r) => r.status === 403)) assertError(res, 403, 'WEBSITE_LIMIT_REACHED')
      const list = await server.api('GET', '/v1/websites', { token: user.token })
      assert.deepEqual(list.body.websiteLimits, { count: 2, max: 2, canCreate: false, formSubmissions: 0 })
    })

    test('the limit is per account: another user may still create, and sites shared with you do not count', async () => {
      const owner = await server.user()
      const a = await site(owner, { name: 'Shared one' })
      await site(owner, { name: 'Shared two' })
      const editor = await server.user()
      await server.server.services.members.share(a.websiteId, editor.email, 'editor')
      await site(editor, { name: 'Own one' })
      await site(editor, { name: 'Own two' })
      const list = await server.api('GET', '/v1/websites', { token: editor.token })
      assert.equal(list.body.items.length, 3)
      assert.deepEqual(list.body.websiteLimits, { count: 2, max: 2, canCreate: false, formSubmissions: 0 })
    })

    test('a user at the limit can still publish new versions of their sites', async () => {
      const user = await server.user()
      const a = await site(user, { name: 'Full A' })
      await site(user, { name: 'Full B' })
      const res = await server.api('POST', `/v1/websites/${a.websiteId}/versions`, { token: user.token, body: { files: bundle('More') } })
      assert.equal(res.status, 201)
    })
  })

  describe(`websites API: publish rate limit (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    before(async () => {
      server = await startTestServer(store.name, { PLINTH_PUBLISH_RATE_PER_MINUTE: '3' })
    })
    after(() => server?.close())
    const { createSite, publishVersion, site, countVersions } = clientFor(() => server)

    const assertRateLimited = (res: ApiResponse) => {
      assertError(res, 429, 'RATE_LIMITED')
      const retryAfter = res.headers.get('retry-after')
      assert.match(retryAfter ?? '', /^[1-9]\d*$/, 'Retry-After is a positive whole number of seconds')
      assert.ok(Number(retryAfter) <= 60)
      assert.deepEqual(rateLimitParams(res.headers.get('ratelimit-policy')), { q: 3, w: 60 })
      const state = rateLimitParams(res.headers.get('ratelimit'))
      assert.equal(state.r, 0)
      assert.ok(state.t !== undefined && state.t >= 1 && state.t <= 60)
    }

    test('the 4th publish in a minute (createWebsite and createWebsiteVersion together) is 429 RATE_LIMITED and stores nothing', async () => {
      const user = await server.user()
      const first = await createSite(user, { name: 'Busy' })
      assert.equal(first.status, 201)
      assert.equal(rateLimitParams(first.headers.get('ratelimit')).r, 2)
      const second = await publishVersion(user, first.body.websiteId, { files: bundle('Two') })
      assert.equal(second.status, 201)
      assert.equal(rateLimitParams(second.headers.get('ratelimit')).r, 1)
      const third = await publishVersion(user, first.body.websiteId, { files: bundle('Three') })
      assert.equal(third.status, 201)
      assert.equal(rateLimitParams(third.headers.get('ratelimit')).r, 0)

      const fourth = await publishVersion(user, first.body.websiteId, { files: bundle('Four') })
      assertRateLimited(fourth)
      assert.equal(await countVersions(first.body.websiteId), 3, 'no version was stored')
      assert.notEqual((await server.site(first.body.slug, '/')).body.toString().includes('Four'), true)

      const newSite = await createSite(user, { name: 'Another' })
      assertRateLimited(newSite)
      const list = await server.api('GET', '/v1/websites', { token: user.token })
      assert.equal(list.body.items.length, 1, 'no website was created')
    })

    test('another user is not limited by the first one', async () => {
      const busy = await server.user()
      for (let i = 0; i < 3; i++) await site(busy, { name: `Busy ${i}` })
      assertRateLimited(await createSite(busy, { name: 'Busy 3' }))

      const other = await server.user()
      const res = await createSite(other, { name: 'Calm' })
      assert.equal(res.status, 201)
      assert.equal(rateLimitParams(res.headers.get('ratelimit')).r, 2)
    })

    test('concurrent publishes cannot overshoot the rate limit together', async () => {
      const user = await server.user()
      const creates = await Promise.all(Array.from({ length: 6 }, (_, i) => createSite(user, { name: `Burst ${i}`, files: bundle(`Burst ${i}`) })))
      assert.deepEqual(creates.map((r) => r.status).sort(), [201, 201, 201, 429, 429, 429])
      for (const res of creates.filter((r) => r.status === 429)) assertRateLimited(res)
      assert.equal((await server.api('GET', '/v1/websites', { token: user.token })).body.items.length, 3)

      const other = await server.user()
      const created = await site(other, { name: 'Burst versions' })
      const versions = await Promise.all(Array.from({ length: 5 }, (_, i) => publishVersion(other, created.websiteId, { files: bundle(`Burst v${i}`) })))
      assert.deepEqual(versions.map((r) => r.status).sort(), [201, 201, 429, 429, 429])
      assert.equal(await countVersions(created.websiteId), 3)
      const numbers = versions
        .filter((r) => r.status === 201)
        .map((r) => r.body.version)
        .sort()
      assert.deepEqual(numbers, [2, 3], 'version numbers stay consecutive')
    })

    test('a rejected (422) publish does not use up the quota', async () => {
      const user = await server.user()
      const created = await site(user, { name: 'Careful' })
      const invalidBundle = await publishVersion(user, created.websiteId, { files: [{ path: 'about.html', content: '<p>no index</p>' }] })
      assertError(invalidBundle, 422, 'PUBLISH_INVALID')
      const invalidSite = await createSite(user, { name: 'Broken', files: [{ path: 'page.html', content: '<p>no index</p>' }] })
      assertError(invalidSite, 422, 'PUBLISH_INVALID')
      const invalidSchema = await createSite(user, { name: 'Wrong category', category: 'bakery' })
      assertError(invalidSchema, 422, 'VALIDATION_FAILED')

      const second = await publishVersion(user, created.websiteId, { files: bundle('Second') })
      assert.equal(second.status, 201)
      assert.equal(rateLimitParams(second.headers.get('ratelimit')).r, 1, 'only the successful publishes counted')
      const third = await publishVersion(user, created.websiteId, { files: bundle('Third') })
      assert.equal(third.status, 201)
      assertRateLimited(await publishVersion(user, created.websiteId, { files: bundle('Fourth') }))
    })
  })
}
