/**
 * The e-mail of a promotion request, through the instance's SMTP server: the site's owner and its
 * editors are told, with the note (escaped in the HTML part), the preview and the dashboard link;
 * the requester's second ask for the same version sends nothing more. One store: the REST suites
 * cover PostgreSQL.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { addEditor, createSite, createUser, createVersion } from '../helpers/factories.ts'
import { bundle, startTestServer, type TestServer } from '../helpers/server.ts'
import { TestSmtp } from '../helpers/smtp.ts'

describe('the e-mail of a promotion request', () => {
  let server: TestServer
  let smtp: TestSmtp
  before(async () => {
    smtp = await TestSmtp.start()
    server = await startTestServer('sqlite', { PLINTH_SMTP_URL: smtp.url, PLINTH_MAIL_FROM: 'Plinth <plinth@plinth.test>' })
  })
  after(async () => {
    await server?.close()
    await smtp?.close()
  })

  test("the owner and editors are told, with the note, the preview and the dashboard's link", async () => {
    const owner = await createUser(server, { email: 'owner-prq@example.com' })
    const site = await createSite(server, { owner, name: 'Mail Bakery', files: bundle('One') })
    const editor = await addEditor(server, site.websiteId, await createUser(server, { email: 'editor-prq@example.com' }))
    const preview = await createVersion(server, owner, site.websiteId, { files: bundle('Two'), promote: false })
    const path = `/v1/websites/${site.websiteId}/versions/${preview.jobId}/promotion-request`
    const asked = await server.api('POST', path, { token: editor.token, body: { note: 'New <b>prices</b>' } })
    assert.equal(asked.status, 201, asked.text)
    await server.api('POST', path, { token: editor.token })
    await server.server.approvals.mail.settled()
    assert.equal(smtp.received.length, 1, 'one message, to everyone at once')
    const [message] = smtp.received
    assert.deepEqual([...message!.to].sort(), ['editor-prq@example.com', 'owner-prq@example.com'])
    assert.equal(message!.from, 'plinth@plinth.test')
    const raw = message!.raw.replace(/=\r\n/g, '')
    assert.match(raw, /^Subject: Version 2 of Mail Bakery is waiting for approval$/m)
    assert.ok(raw.includes(`/dashboard/sites/${site.websiteId}/promotion-requests/${asked.body.requestId}`), raw)
    assert.ok(raw.includes(`${site.slug}--v2`), raw)
    assert.ok(raw.includes('New &lt;b&gt;prices&lt;/b&gt;'), 'the note is escaped in the HTML part')
  })
})
