/**
 * A site's traffic page in Chromium with JavaScript off: after a scripted set of visits, the
 * charts of the last 7 and 30 days are SVG images named by their title and description, their
 * figures are in tables beside them, and the 404 list names the page whose link led there; the
 * page (loaded again with scripts, which axe needs) passes axe with no serious or critical violation. A stranger's request for it is the
 * not-found page. One store (SQLite): the HTTP suites cover PostgreSQL.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { browserSkip, launchChromium, seriousAxeViolations } from '../helpers/browser.ts'
import { createSite, createUser } from '../helpers/factories.ts'
import { startTestServer, TEST_PASSWORD, type TestServer } from '../helpers/server.ts'
import { scriptedVisits, SITE_FILES, TRAFFIC_ENV, visit } from '../traffic/visits.ts'

async function signIn(page: Page, server: TestServer, email: string): Promise<void> {
  await page.goto(`${server.config.siteUrl}/sign-in`)
  await page.getByLabel('Email').fill(email)
  await page.getByLabel('Password').fill(TEST_PASSWORD)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(`${server.config.siteUrl}/dashboard`)
}

describe('the traffic page in Chromium', { skip: browserSkip }, () => {
  let server: TestServer
  let browser: Browser
  let page: Page
  let site: Awaited<ReturnType<typeof createSite>>
  let owner: Awaited<ReturnType<typeof createUser>>

  before(async () => {
    server = await startTestServer('sqlite', TRAFFIC_ENV)
    owner = await createUser(server)
    site = await createSite(server, { owner, name: 'Counted', files: SITE_FILES })
    await visit(server, site.slug, scriptedVisits(site.slug))
    await server.server.traffic.flush()
    browser = await launchChromium([`--host-resolver-rules=MAP api.plinth.test:8080 127.0.0.1:${new URL(server.url).port}`])
    // No script: the charts are drawn by the server.
    page = await (await browser.newContext({ javaScriptEnabled: false })).newPage()
    await signIn(page, server, owner.email)
  })
  after(async () => {
    await browser?.close()
    await server?.close()
  })

  test('shows the charts with text alternatives, the top lists and the 404s with their referrers', async () => {
    await page.goto(`${server.config.siteUrl}/dashboard/sites/${site.websiteId}`)
    await page.getByRole('link', { name: 'See the traffic' }).click()
    await page.waitForURL(`${server.config.siteUrl}/dashboard/sites/${site.websiteId}/traffic`)
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Traffic')

    for (const days of [7, 30]) {
      const chart = page.getByRole('img', { name: `Page views and visitors, last ${days} days` })
      assert.equal(await chart.count(), 1)
      const description = await chart.getAttribute('aria-labelledby')
      assert.ok(description)
      const desc = await page.locator(`[id="${description.split(' ')[1]}"]`).textContent()
      assert.match(desc ?? '', /3 page views and 2 visitors in all; the busiest day was \d{4}-\d{2}-\d{2}, with 3 page views\./)
      // The bars: one per day, each with a title giving its figures.
      assert.equal(await chart.evaluate((svg) => svg.querySelectorAll('g > title + rect.views').length), days)
      // The same figures as a table, in a disclosure that opens without script.
      await page.getByText(`Last ${days} days as a table`).click()
      const table = page.getByRole('table', { name: `Page views and visitors, last ${days} days, by day` })
      assert.equal(await table.locator('tbody tr').count(), days)
    }
    const today = new Date().toISOString().slice(0, 10)
    const row = page.getByRole('table', { name: 'Page views and visitors, last 7 days, by day' }).getByRole('row', { name: new RegExp(today) })
    assert.deepEqual((await row.locator('td').allInnerTexts()).slice(0, 3), ['3', '2', '9'])

    const paths = page.getByRole('table', { name: 'Most viewed pages, last 30 days' })
    assert.deepEqual(await paths.locator('tbody tr').allInnerTexts(), ['/\t2', '/about\t1'])
    const referrers = page.getByRole('table', { name: 'Sites whose links brought page views, last 30 days' })
    assert.deepEqual(await referrers.locator('tbody tr').allInnerTexts(), ['news.example.com\t1', 'www.search.example\t1'])
    const missing = page.getByRole('table', { name: 'Paths answered 404, last 30 days' })
    assert.equal(await missing.locator('tbody tr').count(), 1)
    const link = missing.getByRole('link')
    assert.equal(await link.getAttribute('href'), `http://${site.slug}.plinth.test:8080/about`)
    assert.match(await missing.locator('tbody tr').innerText(), /\/missing-page\s+2\s+http:\/\/.*\/about \(1\)/)

    // axe runs as a script: on the same page, in a context that runs scripts.
    const scripted = await (await browser.newContext()).newPage()
    try {
      await signIn(scripted, server, owner.email)
      await scripted.goto(`${server.config.siteUrl}/dashboard/sites/${site.websiteId}/traffic`)
      await scripted.getByText('Last 7 days as a table').click()
      assert.deepEqual(await seriousAxeViolations(scripted), [])
    } finally {
      await scripted.close()
    }
  })

  test("a stranger gets the not-found page for another's site", async () => {
    const stranger = await createUser(server)
    const other = await (await browser.newContext({ javaScriptEnabled: false })).newPage()
    try {
      await signIn(other, server, stranger.email)
      const res = await other.goto(`${server.config.siteUrl}/dashboard/sites/${site.websiteId}/traffic`)
      assert.equal(res?.status(), 404)
    } finally {
      await other.close()
    }
  })
})
