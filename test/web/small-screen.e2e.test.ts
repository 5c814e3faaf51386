/**
 * The dashboard on a phone (390 px wide) in real Chromium: the site list, a site with several
 * versions (two not live, one with a long message) and a version's page with its changes, its
 * people, its drop area and its custom domains, and the token list. On each page the document does not scroll
 * sideways and every button lies wholly within the viewport's width, so every action is
 * reachable without scrolling sideways; and the button that makes an older version live is
 * clicked and rolls the site back; axe-core finds no serious or critical violation at that
 * width. With PLINTH_SMALL_SCREEN_SHOTS=<dir> the pages are also saved there as full-page PNGs.
 * One store (SQLite): the HTTP suites cover PostgreSQL.
 */
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { browserSkip, launchChromium, seriousAxeViolations } from '../helpers/browser.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'
import { WebVisitor } from '../helpers/web.ts'

const PHONE = { width: 390, height: 844 }
const PASSWORD = 'correct horse battery'
const shotDir = process.env.PLINTH_SMALL_SCREEN_SHOTS

describe('the dashboard at 390 px wide in Chromium', { skip: browserSkip }, () => {
  let server: TestServer
  let browser: Browser
  let page: Page
  let site: string
  const website = { id: '', slug: '', name: 'Boulangerie et pâtisserie du vieux port de Marseille' }
  const owner = { email: 'owner-with-a-rather-long-address@small-screen.example.com', token: '' }
  const editorEmail = 'editor.with.an.even.longer.address.than.the.owner@small-screen.example.com'
  const domain = 'www.a-rather-long-custom-domain-name-for-a-bakery.example'

  before(async () => {
    server = await startTestServer('sqlite')
    site = server.config.siteUrl
    owner.token = (await server.user(owner.email)).token
    await server.user(editorEmail)

    const publish = async (body: object, websiteId?: string) => {
      const res = await server.api('POST', websiteId ? `/v1/websites/${websiteId}/versions` : '/v1/websites', { token: owner.token, body })
      assert.equal(res.status, 201, res.text)
      return res.body
    }
    // A long unbroken line, which the version page's diff must wrap rather than widen the page with.
    const v1 = `<h1>v1</h1>\n<p>${'an-unbroken-line-of-text-'.repeat(24)}</p>\n`
    const first = await publish({ name: website.name, category: 'other', files: [{ path: 'index.html', content: v1 }] })
    website.id = first.websiteId
    website.slug = first.slug
    const message = 'A long message about the new spring menu, the opening hours over the holidays and the new photographs'
    await publish({ message, files: [{ path: 'index.html', content: '<h1>v2</h1>' }] }, website.id)
    await publish({ message: 'Third', files: [{ path: 'index.html', content: '<h1>v3</h1>' }] }, website.id)

    // The editor and the domain, added through the dashboard's own forms.
    const visitor = new WebVisitor(server)
    assert.equal((await visitor.signIn(owner.email, PASSWORD)).status, 303)
    const sitePage = `/dashboard/sites/${website.id}`
    assert.equal((await visitor.submit(sitePage, `${sitePage}/editors`, { email: editorEmail })).status, 303)
    assert.equal((await visitor.submit(`${sitePage}/domains`, `${sitePage}/domains`, { domain })).status, 303)
    // The invited editor signs in once, which makes the invitation a membership.
    assert.equal((await new WebVisitor(server).signIn(editorEmail, PASSWORD)).status, 303)

    browser = await launchChromium([`--host-resolver-rules=MAP api.plinth.test:8080 127.0.0.1:${new URL(server.url).port}`])
    page = await (await browser.newContext({ viewport: PHONE })).newPage()
    await page.goto(`${site}/sign-in`)
    await page.getByLabel('Email').fill(owner.email)
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(`${site}/dashboard`)
  })
  after(async () => {
    await browser?.close()
    await server?.close()
  })

  /** Opens a page of the web site at 390 px and checks that nothing, and no button, sticks out sideways. */
  async function checkNarrow(pathname: string, name: string): Promise<void> {
    const response = await page.goto(site + pathname)
    assert.equal(response?.status(), 200, `GET ${pathname}`)
    if (shotDir) {
      mkdirSync(shotDir, { recursive: true })
      await page.screenshot({ path: path.join(shotDir, `${name}.png`), fullPage: true })
    }
    const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth)
    assert.ok(scrollWidth <= PHONE.width, `${name}: the document is ${scrollWidth} px wide, wider than ${PHONE.width} px`)
    const buttons = page.locator('button, input[type="submit"]')
    const count = await buttons.count()
    assert.ok(count > 0, `${name} has buttons`)
    for (let i = 0; i < count; i++) {
      const button = buttons.nth(i)
      const box = await button.boundingBox()
      const label = (await button.innerText()) || (await button.getAttribute('value'))
      assert.ok(box, `${name}: the button "${label}" is shown`)
      assert.ok(
        box.x >= 0 && box.x + box.width <= PHONE.width,
        `${name}: the button "${label}" spans ${box.x} to ${box.x + box.width} px, outside 0 to ${PHONE.width}`,
      )
    }
    // The cards are still tables to assistive technology, and nothing else broke at this width.
    assert.deepEqual(await seriousAxeViolations(page), [], `${name}: axe-core violations at ${PHONE.width} px`)
  }

  test('the site list fits the width of a phone', async () => {
    await checkNarrow('/dashboard', 'dashboard')
    await page.getByRole('link', { name: website.name }).waitFor()
    // The drop area of a new site: its folder picker and its .zip form.
    await page.getByRole('button', { name: 'Choose a folder' }).waitFor()
    await page.getByRole('button', { name: 'Publish the .zip' }).waitFor()
  })

  test('a site with three versions and an editor fits, with every version and person action within reach', async () => {
    await checkNarrow(`/dashboard/sites/${website.id}`, 'site')
    for (const label of [
      'Make v1 live',
      'Make v2 live',
      'Choose a folder',
      'Publish the .zip',
      `Remove ${editorEmail}`,
      'Add editor',
      'Set password',
      'Delete site',
    ]) {
      await page.getByRole('button', { name: label }).waitFor()
    }
    assert.equal(await page.getByRole('button', { name: 'Make v3 live' }).count(), 0, 'the live version has no button')
  })

  test('making v2 live from a phone rolls the site back', async () => {
    await page.getByRole('button', { name: 'Make v2 live' }).click()
    await page.waitForURL(`${site}/dashboard/sites/${website.id}?done=promoted`)
    assert.equal(await page.getByRole('status').innerText(), 'The version is live now.')
    const live = await server.site(website.slug)
    assert.equal(live.body.toString(), '<h1>v2</h1>')
    await checkNarrow(`/dashboard/sites/${website.id}?done=promoted`, 'site after a rollback')
    await page.getByRole('button', { name: 'Make v3 live' }).waitFor()
  })

  test("a version's page fits, its changes from the live version wrapped and its promote button within reach", async () => {
    await checkNarrow(`/dashboard/sites/${website.id}/versions/1`, 'version')
    await page.getByText('Changes from the live version, v2').waitFor()
    await page.locator('.diff-add', { hasText: 'an-unbroken-line' }).waitFor()
    await page.getByRole('button', { name: 'Make v1 live' }).waitFor()
  })

  test('the custom domains page with a pending domain fits, its Verify and Remove buttons within reach', async () => {
    await checkNarrow(`/dashboard/sites/${website.id}/domains`, 'domains')
    await page.getByRole('button', { name: `Verify ${domain}` }).waitFor()
    await page.getByRole('button', { name: `Remove ${domain}` }).waitFor()
  })

  test('the token list fits, its Revoke button within reach', async () => {
    await checkNarrow('/mcp', 'tokens')
    await page
      .getByRole('button', { name: /^Revoke/ })
      .first()
      .waitFor()
  })
})
