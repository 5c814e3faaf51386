/**
 * The dashboard over real HTTP, on every store: what owners, editors and strangers see and may
 * do (promote, editors, delete), and that every refused action changes nothing.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { INVITATIONS_PER_ACCOUNT } from '../../src/core/limits.ts'
import { createSite, createVersion } from '../helpers/factories.ts'
import { bundle, startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'
import { alertText, captured, uniqueEmail, WebVisitor } from '../helpers/web.ts'

for (const store of STORES) {
  describe(`web dashboard (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    let owner: WebVisitor
    let ownerToken: string
    let editor: WebVisitor
    let editorEmail: string
    let stranger: WebVisitor

    before(async () => {
      server = await startTestServer(store.name)
      owner = new WebVisitor(server)
      await owner.signUp(uniqueEmail('owner'))
      ownerToken = await owner.mintToken('publisher')
      editor = new WebVisitor(server)
      editorEmail = uniqueEmail('editor')
      await editor.signUp(editorEmail)
      stranger = new WebVisitor(server)
      await stranger.signUp(uniqueEmail('stranger'))
    })
    after(async () => server?.close())

    async function publishSite(name: string) {
      const created = await createSite(server, { owner: { token: ownerToken }, name, files: bundle('One') })
      await createVersion(server, { token: ownerToken }, created.websiteId, { message: 'Second draft', files: bundle('Two') })
      return { id: created.websiteId, slug: created.slug, v1: created.jobId }
    }

    test('the dashboard lists the site with its live version; its page shows versions, publisher and message', async () => {
      const site = await publishSite('Listed Site')
      const list = await owner.get('/dashboard')
      assert.match(list.text, new RegExp(`<a href="/dashboard/sites/${site.id}">Listed Site</a>`))
      assert.match(list.text, /<td[^>]*>v2<\/td>/)
      const page = await owner.get(`/dashboard/sites/${site.id}`)
      assert.equal(page.status, 200)
      assert.match(page.text, /<td[^>]*>Second draft<\/td>/)
      assert.match(page.text, /owner-[a-z0-9]+/, 'who published it')
      assert.match(page.text, /--v1\.plinth\.test:8080\//, 'a preview link per version')
      assert.match(page.text, /Make v1 live/)
    })

    test('promoting v1 from the dashboard rolls the live site back', async () => {
      const site = await publishSite('Rollback Site')
      assert.match((await server.site(site.slug)).body.toString(), /Two/)
      await owner.get(`/dashboard/sites/${site.id}`)
      const promoted = await owner.post(`/dashboard/sites/${site.id}/promote`, { versionId: site.v1 })
      assert.equal(promoted.status, 303)
      const page = await owner.get(promoted.headers.get('location')!)
      assert.match(page.text, /The version is live now\./)
      assert.match((await server.site(site.slug)).body.toString(), /One/)
    })

    test('the owner adds and removes an editor, who then sees the site but may not delete it', async () => {
      const site = await publishSite('Shared Site')
      assert.equal((await editor.get(`/dashboard/sites/${site.id}`)).status, 404, 'not shared yet')

      await owner.get(`/dashboard/sites/${site.id}`)
      const added = await owner.post(`/dashboard/sites/${site.id}/editors`, { email: editorEmail.toUpperCase() })
      assert.equal(added.status, 303)
      // Already signed in: opening the site's page (or the dashboard) takes the invitation up.
      const editorView = await editor.get(`/dashboard/sites/${site.id}`)
      assert.equal(editorView.status, 200)
      assert.doesNotMatch(editorView.text, /Delete this site/, 'no delete form for an editor')
      assert.doesNotMatch(editorView.text, /Add an editor/, 'no people management for an editor')
      const refused = await editor.post(`/dashboard/sites/${site.id}/delete`, { confirmSlug: site.slug })
      assert.equal(refused.status, 403)
      assert.equal((await server.site(site.slug)).status, 200, 'the site is still served')
      const refusedAdd = await editor.post(`/dashboard/sites/${site.id}/editors`, { email: uniqueEmail('friend') })
      assert.equal(refusedAdd.status, 403)

      const ownerPage = await owner.get(`/dashboard/sites/${site.id}`)
      const userId = captured(/name="userId" value="(usr_[A-Za-z0-9]+)"/, ownerPage.text)
      const removed = await owner.post(`/dashboard/sites/${site.id}/editors/remove`, { userId })
      assert.equal(removed.status, 303)
      assert.equal((await editor.get(`/dashboard/sites/${site.id}`)).status, 404, 'no longer shared')
    })

    test('adding an editor answers the same whether or not the email has an account; the person who signs up with it edits the site', async () => {
      const site = await publishSite('Invited Site')
      const unknownEmail = uniqueEmail('newcomer')
      const knownEmail = uniqueEmail('known')
      await new WebVisitor(server).signUp(knownEmail)
      const add = async (email: string) => {
        await owner.get(`/dashboard/sites/${site.id}`)
        const response = await owner.post(`/dashboard/sites/${site.id}/editors`, { email })
        assert.equal(response.status, 303, response.text.slice(0, 200))
        const location = response.headers.get('location')!
        const page = await owner.get(location)
        const notice = /<div class="notice" role="status"><p>([^<]*)<\/p>/.exec(page.text)?.[1]
        return { location: location.replace(encodeURIComponent(email), 'EMAIL'), notice: notice?.replace(email, 'EMAIL'), page }
      }
      const unknown = await add(unknownEmail)
      const known = await add(knownEmail)
      assert.deepEqual({ location: unknown.location, notice: unknown.notice }, { location: known.location, notice: known.notice }, 'the same answer')
      assert.equal(known.notice, 'EMAIL will be able to edit this site once they sign in, or sign up, with this email.')
      for (const email of [unknownEmail, knownEmail]) {
        assert.match(known.page.text, new RegExp(`<li>${email} <span class="muted">invited `), `${email} is listed as invited`)
      }

      // A notice names only an email the site lists.
      const forged = await owner.get(`/dashboard/sites/${site.id}?invited=${encodeURIComponent('evil@example.com')}`)
      assert.doesNotMatch(forged.text, /evil@example\.com/)

      // The newcomer signs up with the invited email: an editor at once, over the web and the API.
      const newcomer = new WebVisitor(server)
      await newcomer.signUp(unknownEmail)
      assert.match((await newcomer.get('/dashboard')).text, /Invited Site/)
      const token = await newcomer.mintToken('newcomer')
      const listed = await server.api('GET', '/v1/websites', { token })
      assert.deepEqual(
        listed.body.items.map((w: { id: string; role: string }) => [w.id, w.role]),
        [[site.id, 'editor']],
      )
      const ownerPage = await owner.get(`/dashboard/sites/${site.id}`)
      assert.doesNotMatch(ownerPage.text, new RegExp(`<li>${unknownEmail} <span class="muted">invited `), 'no longer pending')
      assert.match(ownerPage.text, new RegExp(`${unknownEmail} · editor`))

      // The owner withdraws the other invitation: signing in then gives nothing.
      const withdrawn = await owner.post(`/dashboard/sites/${site.id}/invitations/remove`, { email: knownEmail })
      assert.equal(withdrawn.status, 303)
      const knownVisitor = new WebVisitor(server)
      await knownVisitor.signIn(knownEmail)
      assert.equal((await knownVisitor.get(`/dashboard/sites/${site.id}`)).status, 404)
      const again = await owner.post(`/dashboard/sites/${site.id}/invitations/remove`, { email: knownEmail })
      assert.equal(again.status, 404)
    })

    test('the editor form refuses a bad email next to the field and changes nothing', async () => {
      const site = await publishSite('Careful Site')
      await owner.get(`/dashboard/sites/${site.id}`)
      const bad = await owner.post(`/dashboard/sites/${site.id}/editors`, { email: 'not an email' })
      assert.equal(bad.status, 422)
      assert.match(alertText(bad.text) ?? '', /email/)
      assert.doesNotMatch((await owner.get(`/dashboard/sites/${site.id}`)).text, /<h3>Invited<\/h3>/)
    })

    test('the editor form is rate limited per owner: a 429 page with Retry-After, and nothing invited', async () => {
      const busy = new WebVisitor(server)
      await busy.signUp(uniqueEmail('busy'))
      const token = await busy.mintToken('busy')
      const created = await server.api('POST', '/v1/websites', { token, body: { name: 'Busy Site', category: 'other', files: bundle('B') } })
      assert.equal(created.status, 201, created.text)
      const path = `/dashboard/sites/${created.body.websiteId}`
      for (let i = 0; i < INVITATIONS_PER_ACCOUNT; i++) {
        await busy.get(path)
        assert.equal((await busy.post(`${path}/editors`, { email: uniqueEmail(`guess${i}`) })).status, 303)
      }
      await busy.get(path)
      const extra = uniqueEmail('extra')
      const refused = await busy.post(`${path}/editors`, { email: extra })
      assert.equal(refused.status, 429)
      assert.ok(Number(refused.headers.get('retry-after')) > 0)
      assert.match(refused.text, /Too many editors invited\. Try again in \d+ minutes?\./)
      assert.doesNotMatch((await busy.get(path)).text, new RegExp(extra))
    })

    test("a version's page shows what making it live would change, escaped, before its promote button", async () => {
      const created = await createSite(server, {
        owner: { token: ownerToken },
        name: 'Diff Site',
        files: [
          { path: 'index.html', content: '<!doctype html>\n<title>One</title>\n<h1>One & only</h1>\n' },
          { path: 'old.css', content: 'p { color: red; }' },
          { path: 'about.html', content: '<p>About</p>' },
        ],
      })
      const stored = await createVersion(server, { token: ownerToken }, created.websiteId, {
        promote: false,
        message: 'New heading',
        files: [
          { path: 'index.html', content: '<!doctype html>\n<title>One</title>\n<h1>Two <script>alert(1)</script></h1>\n' },
          { path: 'pages/about.html', content: '<p>About</p>' },
          { path: 'new.js', content: 'console.log(2)' },
        ],
      })
      const site = await owner.get(`/dashboard/sites/${created.websiteId}`)
      assert.match(site.text, new RegExp(`<a href="/dashboard/sites/${created.websiteId}/versions/2">v2</a>`), 'the versions table leads to it')

      const page = await editor.get(`/dashboard/sites/${created.websiteId}/versions/2`)
      assert.equal(page.status, 404, 'not yet an editor')
      const path = `/dashboard/sites/${created.websiteId}/versions/2`
      const res = await owner.get(path)
      assert.equal(res.status, 200, res.text)
      assert.match(res.text, /Changes from the live version, v1/)
      assert.match(res.text, /Making v2 live changes 4 files/)
      assert.match(res.text, /<code>new\.js<\/code> <span class="muted">added, 14 bytes<\/span>/)
      assert.match(res.text, /<code>old\.css<\/code> <span class="muted">removed, 17 bytes<\/span>/)
      assert.match(res.text, /<code>pages\/about\.html<\/code> <span class="muted">moved from <code>about\.html<\/code>, 12 bytes<\/span>/)
      assert.match(res.text, /<code>index\.html<\/code> <span class="muted">changed, 55 → 74 bytes<\/span>/)
      assert.match(res.text, /<span class="diff-del">-&lt;h1&gt;One &amp; only&lt;\/h1&gt;<\/span>/)
      assert.match(res.text, /<span class="diff-add">\+&lt;h1&gt;Two &lt;script&gt;alert\(1\)&lt;\/script&gt;&lt;\/h1&gt;<\/span>/)
      assert.doesNotMatch(res.text, /<script>alert/, 'the diff is escaped')
      const diffAt = res.text.indexOf('class="diff"')
      const buttonAt = res.text.indexOf('Make v2 live</button>')
      assert.ok(diffAt > 0 && buttonAt > diffAt, 'the diff comes before the promote button')

      const promoted = await owner.post(`/dashboard/sites/${created.websiteId}/promote`, { versionId: stored.jobId })
      assert.equal(promoted.status, 303)
      const live = await owner.get(path)
      assert.match(live.text, /This is the live version\./)
      assert.doesNotMatch(live.text, /Make v2 live/)
      const older = await owner.get(`/dashboard/sites/${created.websiteId}/versions/1`)
      assert.match(older.text, /Changes from the live version, v2/)
      assert.match(older.text, /<span class="diff-add">\+&lt;h1&gt;One &amp; only&lt;\/h1&gt;<\/span>/)
      assert.equal((await owner.get(`/dashboard/sites/${created.websiteId}/versions/3`)).status, 404)
      assert.equal((await owner.get(`/dashboard/sites/${created.websiteId}/versions/x`)).status, 404)
      assert.equal((await stranger.get(path)).status, 404)
    })

    test("a diff's lines that read like its file names once prefixed are shown as the lines removed and added they are", async () => {
      const created = await createSite(server, {
        owner: { token: ownerToken },
        name: 'Signature Site',
        files: [{ path: 'index.html', content: '<h1>Hello</h1>\n<p>Thanks.\n-- Rosa</p>\n' }],
      })
      await createVersion(server, { token: ownerToken }, created.websiteId, {
        promote: false,
        files: [{ path: 'index.html', content: '<h1>Hello</h1>\n<p>Thanks.\n++ Rosa &amp; Marco</p>\n' }],
      })
      const res = await owner.get(`/dashboard/sites/${created.websiteId}/versions/2`)
      assert.equal(res.status, 200, res.text)
      assert.match(res.text, /<span class="diff-meta">--- a\/index\.html<\/span>/)
      assert.match(res.text, /<span class="diff-meta">\+\+\+ b\/index\.html<\/span>/)
      assert.match(res.text, /<span class="diff-del">--- Rosa&lt;\/p&gt;<\/span>/)
      assert.match(res.text, /<span class="diff-add">\+\+\+ Rosa &amp;amp; Marco&lt;\/p&gt;<\/span>/)
    })

    test('a stranger sees nothing of a site and can change nothing', async () => {
      const site = await publishSite('Private Site')
      assert.equal((await stranger.get(`/dashboard/sites/${site.id}`)).status, 404)
      assert.doesNotMatch((await stranger.get('/dashboard')).text, /Private Site/)
      const promote = await stranger.post(`/dashboard/sites/${site.id}/promote`, { versionId: site.v1 })
      assert.equal(promote.status, 404)
      const remove = await stranger.post(`/dashboard/sites/${site.id}/delete`, { confirmSlug: site.slug })
      assert.equal(remove.status, 404)
      assert.match((await server.site(site.slug)).body.toString(), /Two/, 'still live, still v2')
    })

    test('deleting needs the slug typed; then the site, its URL and its slug are gone', async () => {
      const site = await publishSite('Doomed Site')
      await owner.get(`/dashboard/sites/${site.id}`)
      const wrong = await owner.post(`/dashboard/sites/${site.id}/delete`, { confirmSlug: 'not-the-slug' })
      assert.equal(wrong.status, 422)
      assert.match(alertText(wrong.text) ?? '', new RegExp(`Type the site&#39;s address, ${site.slug}`))
      assert.equal((await server.site(site.slug)).status, 200, 'nothing was deleted')

      const deleted = await owner.post(`/dashboard/sites/${site.id}/delete`, { confirmSlug: site.slug })
      assert.equal(deleted.status, 303)
      assert.equal(deleted.headers.get('location'), '/dashboard?done=deleted')
      const list = await owner.get('/dashboard?done=deleted')
      assert.match(list.text, /The site was deleted/)
      assert.doesNotMatch(list.text, /Doomed Site/)
      assert.equal((await server.site(site.slug)).status, 404)
      assert.equal((await owner.get(`/dashboard/sites/${site.id}`)).status, 404)
      const again = await server.api('POST', '/v1/websites', {
        token: ownerToken,
        body: { name: 'Reborn', slug: site.slug, category: 'other', files: bundle() },
      })
      assert.equal(again.status, 201, 'the slug is free again')
    })

    test('collections and their entries can be browsed', async () => {
      const site = await publishSite('Content Site')
      const collection = await server.api('POST', `/v1/websites/${site.id}/collections`, {
        token: ownerToken,
        body: { name: 'posts', label: 'Posts', fields: [{ name: 'title', label: 'Title', type: 'text', required: true }] },
      })
      assert.equal(collection.status, 201, collection.text)
      const entries = await server.api('POST', `/v1/websites/${site.id}/collections/posts/entries/batch`, {
        token: ownerToken,
        body: { entries: [{ slug: 'hello-world', data: { title: 'Hello <world>' } }] },
      })
      assert.equal(entries.status, 200, entries.text)
      const page = await owner.get(`/dashboard/sites/${site.id}`)
      assert.match(page.text, new RegExp(`href="/dashboard/sites/${site.id}/collections/posts">Posts</a>`))
      const browse = await owner.get(`/dashboard/sites/${site.id}/collections/posts`)
      assert.equal(browse.status, 200)
      assert.match(browse.text, /<code>title<\/code>/)
      assert.match(browse.text, /hello-world/)
      assert.match(browse.text, /Hello &lt;world&gt;/, 'values are escaped')
      assert.equal((await owner.get(`/dashboard/sites/${site.id}/collections/nope`)).status, 404)
    })

    test('signed out, every dashboard page sends the browser to sign in and back', async () => {
      const visitor = new WebVisitor(server)
      const response = await visitor.get('/dashboard/sites/web_anything')
      assert.equal(response.status, 303)
      assert.equal(response.headers.get('location'), `/sign-in?next=${encodeURIComponent('/dashboard/sites/web_anything')}`)
    })
  })
}
