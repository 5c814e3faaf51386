/**
 * A job's status page over real HTTP, on every store: the `statusUrl` getJob answers leads to it
 * on the web site; the site's owner and editors see the job's status, site, version, message,
 * publisher and time with links to the preview, the live site and the dashboard; anyone else
 * gets the same 404 as for an unknown job; a signed-out browser is sent to sign in and back.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createSite, createVersion } from '../helpers/factories.ts'
import { bundle, startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'
import { uniqueEmail, type WebResponse, WebVisitor } from '../helpers/web.ts'

const PASSWORD = 'correct horse battery'

/** A page's text without what differs from one response to the next (the CSRF token). */
const stable = (page: WebResponse) => page.text.replace(/name="_csrf" value="[^"]+"/g, 'name="_csrf" value=""')

for (const store of STORES) {
  describe(`job status page (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    let owner: WebVisitor
    let ownerEmail: string
    let ownerToken: string
    let editor: WebVisitor
    let editorEmail: string
    let stranger: WebVisitor
    let site: { id: string; slug: string; v1: string; v2: string }

    before(async () => {
      server = await startTestServer(store.name)
      owner = new WebVisitor(server)
      ownerEmail = uniqueEmail('owner')
      await owner.signUp(ownerEmail)
      ownerToken = await owner.mintToken('publisher')
      editor = new WebVisitor(server)
      editorEmail = uniqueEmail('editor')
      await editor.signUp(editorEmail)
      stranger = new WebVisitor(server)
      await stranger.signUp(uniqueEmail('stranger'))

      const created = await createSite(server, { owner: { token: ownerToken }, name: 'Job <Site>', files: bundle('One') })
      const second = await createVersion(server, { token: ownerToken }, created.websiteId, { message: 'Second <draft>', files: bundle('Two') })
      site = { id: created.websiteId, slug: created.slug, v1: created.jobId, v2: second.jobId }
    })
    after(async () => server?.close())

    /** The statusUrl getJob answers for a job, asked with the owner's token. */
    const statusUrlOf = async (jobId: string): Promise<string> => {
      const job = await server.api('GET', `/v1/jobs/${jobId}`, { token: ownerToken })
      assert.equal(job.status, 200, job.text)
      return job.body.statusUrl
    }

    test("getJob's statusUrl is the job's page on the web site, which the owner sees with everything about the publish", async () => {
      const statusUrl = await statusUrlOf(site.v2)
      assert.equal(statusUrl, `/jobs/${site.v2}`)
      const page = await owner.get(statusUrl)
      assert.equal(page.status, 200, page.text)
      assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8')
      assert.equal(page.headers.get('cache-control'), 'no-store')
      const html = page.text
      assert.match(html, /<h1>Publish of Job &lt;Site&gt;, v2<\/h1>/, 'the site, escaped, and the version number')
      assert.match(html, /Published <span class="muted">\(<code>ready<\/code>\)<\/span>/, 'the status')
      assert.match(html, /v2 <strong class="badge">live<\/strong>/, 'the version, live')
      assert.match(html, /<td>Second &lt;draft&gt;<\/td>/, 'the message, escaped')
      assert.ok(html.includes(ownerEmail), 'who published it')

      const versions = await server.api('GET', `/v1/websites/${site.id}/versions`, { token: ownerToken })
      const v2 = versions.body.versions.find((v: { id: string }) => v.id === site.v2)
      const when = `${v2.createdAt.slice(0, 10)} ${v2.createdAt.slice(11, 16)}`
      assert.ok(html.includes(`<time datetime="${v2.createdAt}">${when}</time> UTC`), `when (${when})`)

      assert.ok(html.includes(`<a href="${v2.previewUrl}">Preview v2</a>`), 'a link to the preview')
      const website = await server.api('GET', `/v1/websites/${site.id}`, { token: ownerToken })
      assert.ok(html.includes(`<a href="${website.body.pageUrl}">The live site</a>`), 'a link to the live site')
      assert.ok(html.includes(`<a href="/dashboard/sites/${site.id}">`), "a link to the site's dashboard page")
      assert.equal((await owner.get(`/dashboard/sites/${site.id}`)).status, 200, 'which exists')
      assert.ok(html.includes(site.v2), 'the job id')
    })

    test('a version that is not live says so and points to where it can be made live', async () => {
      const page = await owner.get(await statusUrlOf(site.v1))
      assert.equal(page.status, 200)
      assert.match(page.text, /<h1>Publish of Job &lt;Site&gt;, v1<\/h1>/)
      assert.doesNotMatch(page.text, /badge">live/)
      assert.match(page.text, /serving another version/)
      assert.match(page.text, /where this version can be made live/)
      assert.match(page.text, /<td>—<\/td>/, 'no message was given')
    })

    test("an editor sees the job's page once the site is shared, and not before", async () => {
      const statusUrl = await statusUrlOf(site.v2)
      assert.equal((await editor.get(statusUrl)).status, 404, 'not shared yet')
      await owner.get(`/dashboard/sites/${site.id}`)
      assert.equal((await owner.post(`/dashboard/sites/${site.id}/editors`, { email: editorEmail })).status, 303)
      // An invitation to an existing account takes effect when that person next opens the dashboard.
      await editor.get('/dashboard')
      const page = await editor.get(statusUrl)
      assert.equal(page.status, 200)
      assert.match(page.text, /Publish of Job &lt;Site&gt;, v2/)
    })

    test('a stranger gets exactly the 404 of an unknown job', async () => {
      const strangers = await stranger.get(`/jobs/${site.v2}`)
      const unknown = await stranger.get('/jobs/job_00000000000000000000000000')
      assert.equal(strangers.status, 404)
      assert.equal(unknown.status, 404)
      assert.match(strangers.text, /<h1>Not found<\/h1>/)
      assert.match(strangers.text, /Job not found\./)
      assert.doesNotMatch(strangers.text, /Job &lt;Site&gt;|Second/, 'nothing of the site shows')
      assert.equal(stable(strangers), stable(unknown), 'the same page')
      for (const odd of [`/jobs/job_${'x'.repeat(200)}`, '/jobs/%E0%A4%A', "/jobs/'%20OR%201=1", '/jobs/web_x']) {
        assert.equal((await owner.get(odd)).status, 404, odd)
      }
    })

    test('signed out, the job page sends the browser to sign in and back to it', async () => {
      const statusUrl = await statusUrlOf(site.v2)
      const visitor = new WebVisitor(server)
      const signedOut = await visitor.get(statusUrl)
      assert.equal(signedOut.status, 303)
      const location = signedOut.headers.get('location')
      assert.equal(location, `/sign-in?next=${encodeURIComponent(statusUrl)}`)
      await visitor.get(location)
      const signedIn = await visitor.post('/sign-in', { email: ownerEmail, password: PASSWORD, next: statusUrl })
      assert.equal(signedIn.status, 303)
      assert.equal(signedIn.headers.get('location'), statusUrl)
      assert.equal((await visitor.get(statusUrl)).status, 200)
    })
  })
}
