/**
 * A site's form settings and the erasure of a visitor's submissions in Chromium, on a phone
 * (390 px wide), through the forms page's own forms: the owner chooses a daily digest and a 30-day
 * retention, which the API then reports; a malformed address is refused next to its field; a
 * visitor's submissions are erased by address. The page never scrolls sideways and passes axe
 * with no serious or critical violation, also while it shows an error. One store (SQLite): the
 * HTTP suites cover PostgreSQL.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { browserSkip, launchChromium, seriousAxeViolations } from '../helpers/browser.ts'
import { postForm, restaurantBundle, urlencoded } from '../helpers/forms.ts'
import { startTestServer, TEST_PASSWORD, type TestServer } from '../helpers/server.ts'

const PHONE = { width: 390, height: 844 }

describe('the form settings in Chromium at 390 px wide', { skip: browserSkip }, () => {
  let server: TestServer
  let browser: Browser
  let page: Page
  let owner: { email: string; token: string }
  let websiteId: string
  let slug: string

  before(async () => {
    server = await startTestServer('sqlite')
    owner = await server.user('owner-of-a-small-restaurant@form-settings.example.com')
    const created = await server.api('POST', '/v1/websites', { token: owner.token, body: { category: 'restaurant', files: restaurantBundle() } })
    assert.equal(created.status, 201, created.text)
    ;({ websiteId, slug } = created.body)
    for (const data of [
      { name: 'Ada', email: 'ada@example.com' },
      { name: 'Bob', email: 'bob@example.com' },
    ]) {
      assert.equal((await postForm(server, slug, '/_forms/booking', urlencoded(data), { accept: 'application/json' })).status, 201)
    }
    browser = await launchChromium([`--host-resolver-rules=MAP api.plinth.test:8080 127.0.0.1:${new URL(server.url).port}`])
    page = await (await browser.newContext({ viewport: PHONE })).newPage()
    await page.goto(`${server.config.siteUrl}/sign-in`)
    await page.getByLabel('Email').fill(owner.email)
    await page.getByLabel('Password').fill(TEST_PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(`${server.config.siteUrl}/dashboard`)
  })
  after(async () => {
    await browser?.close()
    await server?.close()
  })

  /** Nothing sticks out sideways and axe finds nothing serious. */
  async function checkPage(name: string): Promise<void> {
    const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth)
    assert.ok(scrollWidth <= PHONE.width, `${name}: the document is ${scrollWidth} px wide`)
    assert.deepEqual(await seriousAxeViolations(page), [], `${name}: axe-core violations`)
  }

  test('the owner sets a daily digest and 30 days of retention through the page', async () => {
    const formsUrl = `${server.config.siteUrl}/dashboard/sites/${websiteId}/forms`
    await page.goto(`${server.config.siteUrl}/dashboard/sites/${websiteId}`)
    await page.getByRole('link', { name: 'See the form inbox' }).click()
    await page.waitForURL(formsUrl)
    await page.getByText('no mail server set up').waitFor()
    await checkPage('forms page')

    // A malformed address: said next to the field, the typed text kept, nothing saved.
    await page.getByLabel('E-mail submissions to').fill('bookings@example.com\nnot-an-address')
    await page.getByRole('button', { name: 'Save settings' }).click()
    await page.getByRole('alert').waitFor()
    assert.match(await page.locator('#notify-error').innerText(), /not-an-address/)
    assert.equal(await page.getByLabel('E-mail submissions to').getAttribute('aria-invalid'), 'true')
    assert.equal(await page.getByLabel('E-mail submissions to').inputValue(), 'bookings@example.com\nnot-an-address')
    await checkPage('forms page with an error')
    const settingsUrl = `/v1/websites/${websiteId}/form-settings`
    assert.deepEqual((await server.api('GET', settingsUrl, { token: owner.token })).body, { notify: null, retentionDays: null, notifyMode: 'each' })

    await page.getByLabel('E-mail submissions to').fill('bookings@example.com')
    await page.getByLabel('One digest a day').check()
    await page.getByLabel('For a limited time').check()
    await page.getByLabel('Days to keep').fill('30')
    await page.getByRole('button', { name: 'Save settings' }).click()
    await page.waitForURL(`${formsUrl}?done=settings`)
    assert.equal(await page.getByRole('status').innerText(), 'The form settings are saved.')
    assert.ok(await page.getByLabel('One digest a day').isChecked())
    assert.equal(await page.getByLabel('Days to keep').inputValue(), '30')
    await checkPage('forms page after saving')
    const settings = await server.api('GET', settingsUrl, { token: owner.token })
    assert.deepEqual(settings.body, { notify: ['bookings@example.com'], retentionDays: 30, notifyMode: 'daily' })
  })

  test("the owner erases a visitor's submissions by address", async () => {
    await page.getByLabel("The visitor's e-mail address").fill('ada@example.com')
    await page.getByRole('button', { name: 'Erase their submissions' }).click()
    await page.waitForURL(/\?erased=1$/)
    assert.match(await page.getByRole('status').innerText(), /Deleted 1 submission sent from that address/)
    await checkPage('forms page after an erasure')
    const left = await server.api('GET', `/v1/websites/${websiteId}/forms/booking/submissions`, { token: owner.token })
    assert.deepEqual(
      left.body.items.map((s: { data: { name: string } }) => s.data.name),
      ['Bob'],
    )
  })
})
