/**
 * A table booking from end to end, in real Chromium: an agent publishes a restaurant site with a
 * booking form over REST; a visitor opens the booking page on the site's own host, fills in every
 * field (a file too), sends it and lands on the thank-you page, which passes axe-core and breaks
 * no Content-Security-Policy rule; the owner signs in, finds the booking in the dashboard's inbox
 * and downloads the CSV; and an agent's MCP client, with the forms toolset, lists the form and the
 * booking. One store (SQLite): the HTTP suites cover PostgreSQL.
 */
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { after, before, describe, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { browserSkip, launchChromium, seriousAxeViolations } from '../helpers/browser.ts'
import { BOOKING_PAGE } from '../helpers/forms.ts'
import { call, connect } from '../helpers/mcp.ts'
import { startTestServer, TEST_PASSWORD, type TestServer } from '../helpers/server.ts'

/** The booking page without `_next`: a booking lands on the built-in thank-you page. */
const BOOK_PAGE = BOOKING_PAGE.replace(/\s*<input type="hidden" name="_next"[^>]*>/, '')
const HOME = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Chez Plinth</title></head>
<body><main><h1>Chez Plinth</h1><p><a href="/book.html">Book a table</a></p></main></body></html>`

describe('a table booking in Chromium', { skip: browserSkip }, () => {
  let server: TestServer
  let browser: Browser
  /** Console messages that report a Content-Security-Policy violation. */
  const cspErrors: string[] = []

  before(async () => {
    server = await startTestServer('sqlite')
    // Chromium reaches the configured hosts (api.plinth.test:8080, {slug}.plinth.test:8080) at the test server.
    const port = new URL(server.url).port
    browser = await launchChromium([`--host-resolver-rules=MAP api.plinth.test:8080 127.0.0.1:${port}, MAP *.plinth.test:8080 127.0.0.1:${port}`])
  })
  after(async () => {
    await browser?.close()
    await server?.close()
  })

  async function newPage(): Promise<Page> {
    const page = await (await browser.newContext({ acceptDownloads: true })).newPage()
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) cspErrors.push(message.text())
    })
    return page
  }

  test('published by an agent, booked by a visitor, read by the owner on the dashboard, in the CSV and over MCP', async () => {
    const owner = await server.user('owner@chez-plinth.example')
    const home = await server.api('POST', '/v1/websites', {
      token: owner.token,
      body: {
        category: 'restaurant',
        name: 'Chez Plinth',
        files: [
          { path: 'index.html', content: HOME },
          { path: 'book.html', content: BOOK_PAGE },
        ],
      },
    })
    assert.equal(home.status, 201, home.text)
    const { websiteId } = home.body as { websiteId: string }
    assert.deepEqual(
      home.body.forms.map((f: { name: string; fields: Array<{ name: string }> }) => [f.name, f.fields.map((field) => field.name)]),
      [['booking', ['name', 'email', 'date', 'party', 'notes', 'menu']]],
    )
    const pageUrl = home.body.pageUrl as string

    // A visitor books a table.
    const visitor = await newPage()
    await visitor.goto(pageUrl)
    await visitor.getByRole('link', { name: 'Book a table' }).click()
    await visitor.waitForURL(new URL('/book.html', pageUrl).href)
    await visitor.getByLabel('Name').fill('Ada Lovelace')
    await visitor.getByLabel('E-mail').fill('ada@example.com')
    await visitor.getByLabel('Date').fill('2026-12-24')
    await visitor.getByLabel('Guests').selectOption('4')
    await visitor.getByLabel('Notes').fill('A table by the window, please.\nOne guest is vegetarian.')
    await visitor.getByLabel('Menu wishes (a file)').setInputFiles({ name: 'wishes.txt', mimeType: 'text/plain', buffer: Buffer.from('No shellfish.\n') })
    await visitor.getByRole('button', { name: 'Book' }).click()
    await visitor.waitForURL(new URL('/_forms/booking/thanks', pageUrl).href)
    assert.equal(await visitor.getByRole('heading', { level: 1 }).textContent(), 'Thank you')
    assert.deepEqual(await seriousAxeViolations(visitor), [], 'the thank-you page passes axe-core')
    await visitor.getByRole('link', { name: 'Back to the site' }).click()
    await visitor.waitForURL(pageUrl)
    assert.deepEqual(cspErrors.splice(0), [], 'nothing the visitor did was refused by the site policy')

    // The owner reads it on the dashboard and exports the CSV.
    const dashboard = await newPage()
    await dashboard.goto(`${server.config.siteUrl}/sign-in`)
    await dashboard.getByLabel('Email').fill(owner.email)
    await dashboard.getByLabel('Password').fill(TEST_PASSWORD)
    await dashboard.getByRole('button', { name: 'Sign in' }).click()
    await dashboard.waitForURL(`${server.config.siteUrl}/dashboard`)
    await dashboard.goto(`${server.config.siteUrl}/dashboard/sites/${websiteId}`)
    await dashboard.getByRole('link', { name: 'See the form inbox' }).click()
    await dashboard.getByRole('link', { name: 'booking' }).click()
    await dashboard.waitForURL(`${server.config.siteUrl}/dashboard/sites/${websiteId}/forms/booking`)
    const row = dashboard.locator('table.inbox tbody tr')
    assert.equal(await row.count(), 1)
    const cells = await row.first().locator('td.value').allTextContents()
    for (const value of ['Ada Lovelace', 'ada@example.com', '2026-12-24', '4'])
      assert.ok(cells.includes(value), `the inbox shows ${value}: ${cells.join(' | ')}`)
    assert.ok(cells.some((cell) => cell.includes('One guest is vegetarian.')))
    assert.match((await row.first().textContent()) ?? '', /wishes\.txt \(14 bytes\)/)
    assert.deepEqual(await seriousAxeViolations(dashboard), [], 'the inbox passes axe-core')
    const [download] = await Promise.all([dashboard.waitForEvent('download'), dashboard.getByRole('link', { name: 'Export as CSV' }).click()])
    assert.match(download.suggestedFilename(), /booking\.csv$/)
    const csv = await readFile(await download.path(), 'utf8')
    const [header, ...lines] = csv.split('\r\n')
    assert.equal(header, 'id,createdAt,spam,name,email,date,party,notes,menu,files')
    // The notes hold a line break (a browser sends it as CRLF): the record is quoted across lines.
    assert.match(
      lines.join('\r\n'),
      /^sub_[A-Za-z0-9]+,[^,]+,no,Ada Lovelace,ada@example\.com,2026-12-24,4,"A table by the window, please\.\r\nOne guest is vegetarian\.",,wishes\.txt \(http:\/\/[^)]+\/files\/0\)\r\n$/,
    )

    // An agent lists it over MCP, with the forms toolset.
    const mcp = await connect(server, owner.token, { toolsets: 'forms' })
    try {
      const forms = await call(mcp, 'list_forms', { websiteId })
      assert.equal(forms.isError, false)
      assert.deepEqual(
        forms.data.items.map((f: { name: string; submissions: number }) => [f.name, f.submissions]),
        [['booking', 1]],
      )
      const submissions = await call(mcp, 'list_form_submissions', { websiteId, name: 'booking' })
      assert.equal(submissions.isError, false)
      const [booking] = submissions.data.items
      assert.deepEqual(booking.data, {
        name: 'Ada Lovelace',
        email: 'ada@example.com',
        date: '2026-12-24',
        party: '4',
        notes: 'A table by the window, please.\r\nOne guest is vegetarian.',
      })
      assert.deepEqual(
        booking.files.map((f: { filename: string; size: number }) => [f.filename, f.size]),
        [['wishes.txt', 14]],
      )
    } finally {
      await mcp.close()
    }
  })
})
