/**
 * A draft's preview host, `{slug}--d{token}.{site_domain}`, over real HTTP: it serves the draft's
 * files as they are at each moment (no change waits for a cache), with the rules of a version's
 * preview: the draft's own `_redirects` and `_headers`, the site's content pages, the site's
 * password page, the same security and cache headers, noindex. Once the draft is discarded,
 * published or expired, or when the host names another site's draft, it is the site-not-found
 * page; the live host never serves the draft.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { draftLabel } from '../../src/core/site-address.ts'
import { FIELDS } from '../helpers/content.ts'
import { createSite, createUser, type TestUser } from '../helpers/factories.ts'
import { SITE_DOMAIN, startTestServer, type SiteResponse, type TestServer } from '../helpers/server.ts'
import { cookieOf, unlockSite } from '../helpers/site-unlock.ts'
import { STORES } from '../helpers/stores.ts'

const page = (title: string) => `<!doctype html><html lang="en"><head><title>${title}</title></head><body><h1>${title}</h1></body></html>`
const text = (res: SiteResponse) => res.body.toString()

for (const store of STORES) {
  describe(`draft preview host (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    before(async () => {
      server = await startTestServer(store.name)
    })
    after(() => server?.close())

    /** A site of its own (home page `Live`) with a draft of it, calls on that draft, and its preview host. */
    async function draftOfNewSite(owner?: TestUser) {
      const user = owner ?? (await createUser(server))
      const site = await createSite(server, { owner: user, files: [{ path: 'index.html', content: page('Live') }] })
      const created = await server.api('POST', `/v1/websites/${site.websiteId}/drafts`, { token: user.token })
      assert.equal(created.status, 201, created.text)
      const draftId = created.body.draftId as string
      const base = `/v1/websites/${site.websiteId}/drafts/${draftId}`
      const call = async (method: string, suffix: string, body?: unknown) => {
        const res = await server.api(method, base + suffix, { token: user.token, ...(body === undefined ? {} : { body }) })
        assert.ok(res.status < 300, `${method} ${suffix}: ${res.status} ${res.text}`)
        return res
      }
      const label = draftLabel(site.slug, draftId)
      assert.equal(created.body.previewUrl, `http://${label}.${SITE_DOMAIN}/`)
      return {
        owner: user,
        site,
        draftId,
        label,
        call,
        put: (path: string, content: string) => call('PUT', `/files/${path}`, { content }),
        edit: (path: string, oldText: string, newText: string) => call('PATCH', `/files/${path}`, { edits: [{ oldText, newText }] }),
        preview: (path = '/', options: Parameters<TestServer['site']>[2] = {}) => server.site(label, path, options),
      }
    }

    test("serves the draft's files from its start and each change at once, with a version preview's headers; the live host keeps the live version", async () => {
      const draft = await draftOfNewSite()
      const first = await draft.preview()
      assert.equal(first.status, 200)
      assert.match(text(first), /Live/, "the base version's files")
      const versionPreview = await server.site(`${draft.site.slug}--v1`, '/')
      for (const name of ['cache-control', 'x-robots-tag', 'content-security-policy', 'x-content-type-options', 'referrer-policy', 'content-type']) {
        assert.equal(first.headers[name], versionPreview.headers[name], name)
      }
      assert.equal(first.headers['x-robots-tag'], 'noindex')
      assert.equal(first.headers['cache-control'], 'public, max-age=0, must-revalidate')

      await draft.put('index.html', page('Draft one'))
      const written = await draft.preview()
      assert.match(text(written), /Draft one/)
      assert.notEqual(written.headers.etag, first.headers.etag)
      const revalidated = await draft.preview('/', { headers: { 'if-none-match': String(first.headers.etag) } })
      assert.equal(revalidated.status, 200, 'the old ETag no longer matches')
      assert.equal((await draft.preview('/', { headers: { 'if-none-match': String(written.headers.etag) } })).status, 304)

      await draft.edit('index.html', '<h1>Draft one', '<h1>Draft two')
      assert.match(text(await draft.preview()), /Draft two/)
      await draft.put('about.html', page('About the draft'))
      assert.match(text(await draft.preview('/about')), /About the draft/)
      await draft.call('POST', '/moves', { from: 'about.html', to: 'team.html' })
      assert.equal((await draft.preview('/about')).status, 404)
      assert.match(text(await draft.preview('/team')), /About the draft/)
      await draft.call('DELETE', '/files/team.html')
      const missing = await draft.preview('/team')
      assert.equal(missing.status, 404)
      assert.equal(missing.headers['x-robots-tag'], 'noindex')

      const live = await server.site(draft.site.slug, '/')
      assert.match(text(live), /Live/)
      assert.equal(live.headers['x-robots-tag'], undefined)
      assert.equal((await server.site(draft.site.slug, '/about')).status, 404)
    })

    test("the draft's own _redirects and _headers apply on its host, read again when they change, and are not served", async () => {
      const draft = await draftOfNewSite()
      await draft.put('_redirects', '/old /new 301\n/app/* /index.html 200\n')
      await draft.put('_headers', '/*\n  X-Draft: one\n')
      const moved = await draft.preview('/old')
      assert.equal(moved.status, 301)
      assert.equal(moved.headers.location, '/new')
      assert.equal(moved.headers['x-robots-tag'], 'noindex')
      const rewritten = await draft.preview('/app/settings')
      assert.equal(rewritten.status, 200)
      assert.match(text(rewritten), /Live/)
      assert.equal(rewritten.headers['x-draft'], 'one')
      for (const path of ['/_redirects', '/_headers']) assert.equal((await draft.preview(path)).status, 404, path)

      await draft.edit('_redirects', '/old /new 301', '/old /newer 302')
      await draft.edit('_headers', 'X-Draft: one', 'X-Draft: two')
      const changed = await draft.preview('/old')
      assert.equal(changed.status, 302)
      assert.equal(changed.headers.location, '/newer')
      assert.equal((await draft.preview('/')).headers['x-draft'], 'two')

      const live = await server.site(draft.site.slug, '/old')
      assert.equal(live.status, 404, "the live version has no rules: the draft's are its own")
      assert.equal(live.headers['x-draft'], undefined)
    })

    test("content pages show the site's live entries through the draft's own templates, and follow entry changes", async () => {
      const draft = await draftOfNewSite()
      const { websiteId } = draft.site
      const token = draft.owner.token
      const collection = await server.api('POST', `/v1/websites/${websiteId}/collections`, { token, body: { name: 'posts', label: 'Posts', fields: FIELDS } })
      assert.equal(collection.status, 201, collection.text)
      const putEntry = async (title: string) => {
        const res = await server.api('PUT', `/v1/websites/${websiteId}/collections/posts/entries/hello`, { token, body: { data: { title } } })
        assert.ok(res.status === 200 || res.status === 201, res.text)
      }
      await putEntry('Hello entry')
      const entry = await draft.preview('/posts-hello')
      assert.equal(entry.status, 200)
      assert.match(text(entry), /Hello entry/)
      assert.match(text(await draft.preview('/posts')), /Hello entry/)
      assert.match(
        text(await draft.preview('/posts.json')),
        new RegExp(`http://${draft.label}\\.${SITE_DOMAIN.replace('.', '\\.')}/posts-hello`),
        "feeds link to the draft's host",
      )

      const template = (mark: string) =>
        `<!doctype html><html lang="en"><head><title>{{ entry.title }}</title></head><body><h1>${mark} {{ entry.title }}</h1></body></html>`
      await draft.put('_templates/posts.html', template('Draft template'))
      assert.match(text(await draft.preview('/posts-hello')), /Draft template Hello entry/)
      await draft.edit('_templates/posts.html', 'Draft template', 'Edited template')
      assert.match(text(await draft.preview('/posts-hello')), /Edited template Hello entry/, 'the edited template at once')
      await putEntry('Changed entry')
      assert.match(text(await draft.preview('/posts-hello')), /Edited template Changed entry/, 'the changed entry at once')

      const live = text(await server.site(draft.site.slug, '/posts-hello'))
      assert.match(live, /Changed entry/)
      assert.doesNotMatch(live, /Edited template/, "the live site renders with its own (default) template, not the draft's")
    })

    test("a protected site's draft answers its password page until the visitor unlocks the site", async () => {
      const draft = await draftOfNewSite()
      await draft.put('index.html', page('Secret draft'))
      assert.equal((await draft.preview()).status, 200, 'open, and so cached, before the password')
      const password = 'draft preview password'
      const set = await server.api('PUT', `/v1/websites/${draft.site.websiteId}/password`, { token: draft.owner.token, body: { password } })
      assert.equal(set.status, 204, set.text)

      for (const path of ['/', '/missing']) {
        const locked = await draft.preview(path)
        assert.equal(locked.status, 401, path)
        assert.equal(locked.headers['cache-control'], 'no-store')
        assert.doesNotMatch(text(locked), /Secret draft/)
        assert.match(text(locked), /<form method="post" action="\/\.plinth\/unlock">/)
      }
      assert.equal((await unlockSite(server, draft.label, 'not the password')).status, 401)
      const unlocked = await unlockSite(server, draft.label, password, { next: '/' })
      assert.equal(unlocked.status, 303)
      assert.equal(unlocked.headers.location, '/')
      const cookie = cookieOf(unlocked)
      assert.match(cookie, /^plinth_unlock=/)
      assert.match(text(await draft.preview('/', { headers: { cookie } })), /Secret draft/)
      const liveCookie = cookieOf(await unlockSite(server, draft.site.slug, password))
      assert.match(text(await draft.preview('/', { headers: { cookie: liveCookie } })), /Secret draft/, "the site's cookie, wherever it was set")

      const removed = await server.api('DELETE', `/v1/websites/${draft.site.websiteId}/password`, { token: draft.owner.token })
      assert.equal(removed.status, 204, removed.text)
      assert.match(text(await draft.preview()), /Secret draft/, 'open again at once')
    })

    test('the host names nothing once the draft is discarded, published or expired, or when it names another site', async () => {
      const owner = await createUser(server)
      const discarded = await draftOfNewSite(owner)
      const other = await draftOfNewSite(owner)
      assert.equal((await discarded.preview()).status, 200)
      const token = discarded.draftId.slice('drf_'.length)
      const siteNotFound = async (label: string, why: string) => {
        const res = await server.site(label, '/')
        assert.equal(res.status, 404, `${label}: ${why}`)
        assert.match(text(res), /Site not found/, `${label}: ${why}`)
      }
      await siteNotFound(`${other.site.slug}--d${token}`, "another site's slug with this draft's token")
      await siteNotFound(`${discarded.site.slug}--d${other.draftId.slice('drf_'.length)}`, "this slug with another site's draft")
      await siteNotFound(`${discarded.site.slug}--d${token.slice(0, -1)}`, 'a token one character short')

      await discarded.call('DELETE', '')
      await siteNotFound(discarded.label, 'discarded')

      const published = await draftOfNewSite(owner)
      await published.put('index.html', page('Published draft'))
      assert.equal((await published.preview()).status, 200)
      const result = await published.call('POST', '/publish', {})
      assert.equal(result.status, 201)
      await siteNotFound(published.label, 'published')
      assert.match(text(await server.site(published.site.slug, '/')), /Published draft/)

      const expired = await draftOfNewSite(owner)
      assert.equal((await expired.preview()).status, 200)
      await server.server.db.kysely
        .updateTable('drafts')
        .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
        .where('id', '=', expired.draftId)
        .execute()
      assert.ok((await server.server.services.drafts.sweepExpired()) >= 1)
      await siteNotFound(expired.label, 'expired and swept')

      const unswept = await draftOfNewSite(owner)
      await server.server.db.kysely
        .updateTable('drafts')
        .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
        .where('id', '=', unswept.draftId)
        .execute()
      await siteNotFound(unswept.label, 'expired, not swept yet')

      const deleted = await draftOfNewSite(owner)
      assert.equal((await deleted.preview()).status, 200)
      const gone = await server.api('DELETE', `/v1/websites/${deleted.site.websiteId}`, { token: owner.token })
      assert.equal(gone.status, 204, gone.text)
      await siteNotFound(deleted.label, 'its site deleted')
    })

    test("any spelling of the draft's host serves it; malformed and foreign ones answer the site-not-found page; it gets no certificate of its own", async () => {
      const draft = await draftOfNewSite()
      await draft.put('spelled.html', page('Spelled draft'))
      const { port } = new URL(server.url)
      const [domain] = SITE_DOMAIN.split(':') as [string]
      for (const host of [`${draft.label.toUpperCase()}.${SITE_DOMAIN.toUpperCase()}`, `${draft.label}.${domain}.`, `${draft.label}.${domain}:${port}`]) {
        assert.match(text(await server.site(draft.label, '/spelled.html', { headers: { host } })), /Spelled draft/, host)
      }
      const token = draft.draftId.slice('drf_'.length)
      for (const host of [
        `${draft.site.slug}--d.${SITE_DOMAIN}`,
        `${draft.site.slug}--d${token}!.${SITE_DOMAIN}`,
        `${draft.site.slug}--d${'a'.repeat(21)}.${SITE_DOMAIN}`,
        `${draft.site.slug}--d${token}--v1.${SITE_DOMAIN}`,
        `${draft.site.slug}--v1--d${token}.${SITE_DOMAIN}`,
        `ab--d${token}.${SITE_DOMAIN}`,
        `x.${draft.label}.${SITE_DOMAIN}`,
        `${draft.label}.elsewhere.example`,
        `${draft.label}`,
      ]) {
        // A host that names no site is the API's or the web site's, which have no such page.
        const res = await server.site(draft.label, '/spelled.html', { headers: { host } })
        assert.ok(res.status === 404 || res.status === 400, `${host}: ${res.status}`)
        assert.doesNotMatch(text(res), /Spelled draft/, host)
      }
      assert.equal((await draft.preview('/', { method: 'POST' })).status, 405)
      assert.equal((await draft.preview('/', { headers: { 'service-worker': 'script' } })).status, 403)
      assert.match(text(await draft.preview('/spelled.html')), /Spelled draft/, 'still serving')
      const ask = await server.api('GET', `/tls/ask?domain=${encodeURIComponent(`${draft.label}.${domain}`)}`)
      assert.equal(ask.status, 404, 'the wildcard certificate covers previews')
    })
  })
}
