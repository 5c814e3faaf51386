/**
 * A site's webhooks page in Chromium, for its owner: adding a webhook shows its secret once, a
 * publish shows up in the delivery log, a delivery is sent again and a webhook removed, all
 * through the page's own forms; markup typed into the description is shown as text; the page
 * passes axe with no serious or critical violation. An editor gets the owner-only page, and a
 * form sent without its CSRF token is refused. One store (SQLite): the HTTP suites cover PostgreSQL.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { addEditor, createSite, createUser } from '../helpers/factories.ts'
import { browserSkip, launchChromium, seriousAxeViolations } from '../helpers/browser.ts'
import { startTestServer, TEST_PASSWORD, type TestServer } from '../helpers/server.ts'
import { WebVisitor } from '../helpers/web.ts'
import { Receiver } from '../webhooks/receiver.ts'

describe('the webhooks page in Chromium', { skip: browserSkip }, () => {
  let server: TestServer
  let receiver: Receiver
  let browser: Browser
  let page: Page
  let websiteId: string
  let owner: Awaited<ReturnType<typeof createUser>>
  let editorEmail: string

  before(async () => {
    receiver = await Receiver.start()
    server = await startTestServer('sqlite', { PLINTH_FETCH_ALLOW_HOSTS: '127.0.0.1', PLINTH_WEBHOOK_POLL_MS: '20', PLINTH_WEBHOOK_RETRY_SCHEDULE: '0.05' })
    owner = await createUser(server)
    websiteId = (await createSite(server, { owner, name: 'Hooked' })).websiteId
    editorEmail = (await addEditor(server, websiteId)).email
    browser = await launchChromium([`--host-resolver-rules=MAP api.plinth.test:8080 127.0.0.1:${new URL(server.url).port}`])
    page = await (await browser.newContext()).newPage()
    await page.goto(`${server.config.siteUrl}/sign-in`)
    await page.getByLabel('Email').fill(owner.email)
    await page.getByLabel('Password').fill(TEST_PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(`${server.config.siteUrl}/dashboard`)
  })
  after(async () => {
    await browser?.close()
    await server?.close()
    await receiver?.close()
  })

  test('the owner adds a webhook, sees a delivery, sends it again and removes the webhook', async () => {
    const pageUrl = `${server.config.siteUrl}/dashboard/sites/${websiteId}/webhooks`
    await page.goto(`${server.config.siteUrl}/dashboard/sites/${websiteId}`)
    await page.getByRole('link', { name: 'Manage webhooks' }).click()
    await page.waitForURL(pageUrl)
    assert.deepEqual(await seriousAxeViolations(page), [])

    // A refused URL is said next to the form, and what was typed stays.
    await page.getByLabel('URL').fill('https://10.0.0.1/in')
    await page.getByLabel('version.published').check()
    await page.getByRole('button', { name: 'Add webhook' }).click()
    assert.match(await page.getByRole('alert').innerText(), /public address/)
    assert.equal(await page.getByLabel('URL').inputValue(), 'https://10.0.0.1/in')

    await page.getByLabel('URL').fill(`${receiver.origin}/page`)
    await page.getByLabel('Description').fill('<b>build</b> & deploy')
    await page.getByRole('button', { name: 'Add webhook' }).click()
    const secret = await page.getByLabel(/Signing secret for/).inputValue()
    assert.match(secret, /^whsec_/)
    assert.ok((await page.content()).includes('&lt;b&gt;build&lt;/b&gt; &amp; deploy'), 'the description is escaped')
    assert.deepEqual(await seriousAxeViolations(page), [])

    const published = await server.api('POST', `/v1/websites/${websiteId}/versions`, {
      token: owner.token,
      body: { files: [{ path: 'index.html', content: '<!doctype html><title>v2</title>' }] },
    })
    assert.equal(published.status, 201)
    await receiver.waitFor('/page', 1)
    await page.goto(pageUrl)
    const table = page.getByRole('region', { name: `Deliveries to ${receiver.origin}/page` })
    await table.getByText('delivered').waitFor()
    assert.ok(!(await page.content()).includes(secret.slice(6)), 'the secret is not shown again')
    assert.deepEqual(await seriousAxeViolations(page), [])

    await table.getByRole('button', { name: /Send again/ }).click()
    await page.getByText('will be sent again').waitFor()
    await receiver.waitFor('/page', 2)
    const got = receiver.to('/page')
    assert.equal(got[0]!.headers['webhook-id'], got[1]!.headers['webhook-id'])

    await page.getByRole('button', { name: `Remove ${receiver.origin}/page` }).click()
    await page.getByText('The webhook was removed').waitFor()
    assert.equal(await page.getByText('This site has no webhook.').count(), 1)
  })

  test('editors get the owner-only page, and a form without its CSRF token is refused', async () => {
    const editor = new WebVisitor(server)
    assert.equal((await editor.signIn(editorEmail, TEST_PASSWORD)).status, 303)
    const refused = await editor.get(`/dashboard/sites/${websiteId}/webhooks`)
    assert.equal(refused.status, 403)
    assert.match(refused.text, /Only the site&#39;s owner can manage webhooks|Only the site's owner can manage webhooks/)

    const visitor = new WebVisitor(server)
    assert.equal((await visitor.signIn(owner.email, TEST_PASSWORD)).status, 303)
    const forged = await visitor.post(`/dashboard/sites/${websiteId}/webhooks`, { _csrf: null, url: `${receiver.origin}/forged`, events: 'site.deleted' })
    assert.equal(forged.status, 403)
    const listed = await server.api('GET', `/v1/websites/${websiteId}/webhooks`, { token: owner.token })
    assert.deepEqual(listed.body.items, [], 'nothing was added')
  })
})
