/**
 * The web site for people in real Chromium, as a person uses it: sign up, mint a token, publish
 * over REST with it, then on the dashboard see the versions, roll back, invite, add and remove an editor,
 * read a collection, protect the site with a password and unlock it as a visitor, add a custom
 * domain, revoke the token, delete the site, and sign out, in and out everywhere. Every
 * page visited is checked with axe-core (no serious or critical violation) and at a phone's width
 * (no horizontal scroll of the document), and none breaks the page's Content-Security-Policy.
 * Four pages are also saved as screenshots: to docs/screenshots/ with PLINTH_SCREENSHOTS=1
 * (`npm run screenshots`), else to a temp dir. One store (SQLite): the HTTP suites cover PostgreSQL.
 */
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { browserSkip, launchChromium, seriousAxeViolations } from '../helpers/browser.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'

const DESKTOP = { width: 1280, height: 800 }
const PHONE = { width: 390, height: 844 }
const PASSWORD = 'correct horse battery staple'
const SHOTS = ['landing', 'docs', 'token', 'dashboard'] as const

const keepShots = process.env.PLINTH_SCREENSHOTS === '1'

/**
 * How Chromium reaches the web site. The test server listens on 127.0.0.1 with a random port, but
 * is configured (test/helpers/server.ts) with PLINTH_BASE_URL = site URL = http://api.plinth.test:8080
 * and sites under plinth.test:8080. Chromium is told to resolve exactly those host:port pairs to
 * the real address (`--host-resolver-rules`, which maps a `host:port` pattern to another host and
 * port), so the browser uses the configured `server.config.siteUrl` as a person would: its pages
 * are on the origin the server names as its own (the `Origin` of form POSTs and the /mcp origin
 * check see exactly that), their Host `api.plinth.test:8080` is not a published-site host, and
 * links to published sites ({slug}.plinth.test:8080) open too. (Browsing `server.url`,
 * 127.0.0.1:port, works as well today: form POSTs pass because their Origin names the request's
 * own Host, and GET /mcp because Chromium sends no Origin on navigations, even after a 303 from a
 * POST; but that is a fallback, not the origin the server is configured with.)
 */
const launchMapped = (port: string): Promise<Browser> =>
  launchChromium([`--host-resolver-rules=MAP api.plinth.test:8080 127.0.0.1:${port}, MAP *.plinth.test:8080 127.0.0.1:${port}`])

describe('the web site in Chromium', { skip: browserSkip }, () => {
  let server: TestServer
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let site: string
  let shotDir: string
  /** Console messages of the current page that report a Content-Security-Policy violation. */
  const cspErrors: string[] = []
  const checked: string[] = []

  // Each run has a store of its own; fixed names keep the screenshots the same from run to run.
  const email = 'ada@example.com'
  const tokenName = 'Browser test agent'
  let token = ''
  let website = { id: '', slug: '', name: 'Browser Test Site' }

  before(async () => {
    shotDir = keepShots ? path.resolve(import.meta.dirname, '../../docs/screenshots') : mkdtempSync(path.join(os.tmpdir(), 'plinth-shots-'))
    server = await startTestServer('sqlite')
    site = server.config.siteUrl
    browser = await launchMapped(new URL(server.url).port)
    context = await browser.newContext({ viewport: DESKTOP })
    page = await context.newPage()
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) cspErrors.push(message.text())
    })
  })
  after(async () => {
    await browser?.close()
    await server?.close()
    if (shotDir && !keepShots) rmSync(shotDir, { recursive: true, force: true })
  })

  /** Opens a path of the web site and checks the answer's status. */
  async function open(pathname: string, status = 200): Promise<void> {
    const response = await page.goto(site + pathname)
    assert.equal(response?.status(), status, `GET ${pathname}`)
  }

  /**
   * The checks every visited page gets: axe-core finds no serious or critical violation, a phone's
   * width (390 px) gives the document no horizontal scroll (tables scroll inside their
   * `.table-wrap`), and nothing was refused by the page's Content-Security-Policy.
   */
  async function checkPage(name: string): Promise<void> {
    checked.push(name)
    assert.deepEqual(await seriousAxeViolations(page), [], `${name} (${page.url()}): axe-core violations`)

    await page.setViewportSize(PHONE)
    try {
      const layout = await page.evaluate(() => {
        const width = window.innerWidth
        // What sticks out on the right, outside the scroll containers meant for wide content.
        const culprits = [...document.querySelectorAll('body *')]
          .filter((el) => el.getBoundingClientRect().right > width + 0.5)
          .filter((el) => !el.closest('.table-wrap') || ['absolute', 'fixed'].includes(getComputedStyle(el).position))
          .slice(0, 8)
          .map((el) => `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${el.className ? `.${String(el.className).split(' ').join('.')}` : ''}`)
        return { scrollWidth: document.documentElement.scrollWidth, innerWidth: width, culprits }
      })
      assert.ok(
        layout.scrollWidth <= layout.innerWidth,
        `${name}: the document scrolls sideways on a phone (${layout.scrollWidth} > ${layout.innerWidth} px); too wide: ${layout.culprits.join(', ')}`,
      )
    } finally {
      await page.setViewportSize(DESKTOP)
    }
    assert.deepEqual(cspErrors.splice(0), [], `${name}: Content-Security-Policy violations`)
  }

  /** A full-page PNG of the current page at 1280x800. */
  async function screenshot(name: (typeof SHOTS)[number]): Promise<void> {
    mkdirSync(shotDir, { recursive: true })
    const file = path.join(shotDir, `${name}.png`)
    await page.screenshot({ path: file, fullPage: true })
    const bytes = readFileSync(file)
    assert.ok(bytes.length > 1000, `${file} is not empty`)
    assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], `${file} is a PNG`)
  }

  /** The notice (role=status) of the page. */
  const notice = () => page.getByRole('status')

  test('public pages: landing, docs, sign-in, the token page signed out, and the 404 page', async () => {
    await open('/')
    assert.equal(await page.title(), 'Plinth')
    await checkPage('landing')
    await screenshot('landing')

    await open('/docs')
    await checkPage('docs index')
    await page.getByRole('navigation', { name: 'Documentation' }).getByRole('link', { name: 'Getting started' }).click()
    await page.waitForURL(`${site}/docs/getting-started`)
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Getting started')
    assert.equal(await page.locator('.toc a[aria-current="page"]').innerText(), 'Getting started')
    await checkPage('docs page')
    await screenshot('docs')
    // The other pages of the guide hold the widest content (tables, long examples): checked too.
    const others = await page.locator('.toc a').evaluateAll((links) => links.map((a) => a.getAttribute('href') ?? ''))
    for (const href of others.filter((h) => h !== '/docs' && h !== '/docs/getting-started')) {
      await open(href)
      await checkPage(`docs page ${href}`)
    }

    await open('/sign-in')
    await checkPage('sign-in')

    await open('/mcp')
    await page.getByRole('link', { name: 'Sign in to create a token' }).waitFor()
    await checkPage('token page, signed out')

    await open('/no-such-page', 404)
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Not found')
    await checkPage('404')
  })

  test('signing up lands on the empty dashboard', async () => {
    await open('/sign-up')
    await checkPage('sign-up')
    await page.getByLabel('Name', { exact: false }).fill('Ada Lovelace')
    await page.getByLabel('Email', { exact: true }).fill(email)
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign up' }).click()
    await page.waitForURL(`${site}/dashboard`)
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Your sites')
    await page.getByText('You have no sites yet.').waitFor()
    await checkPage('dashboard, empty')
  })

  test('a token made on the token page publishes a site and a second version over REST', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Tokens' }).click()
    await page.waitForURL(`${site}/mcp`)
    await checkPage('token page, signed in')
    await page.getByLabel('Name', { exact: true }).fill(tokenName)
    await page.getByRole('radio', { name: 'REST API and MCP' }).check()
    await page.getByLabel('Expires').selectOption({ label: 'In 30 days' })
    await page.getByRole('button', { name: 'Create token' }).click()
    await page.getByRole('heading', { name: 'Your new token' }).waitFor()
    token = (await page.locator('#token-value').innerText()).trim()
    assert.match(token, /^plinth_[A-Za-z0-9_-]{20,}$/)
    assert.match(await page.locator('main').innerText(), /REST API and MCP · expires \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/)
    for (const id of ['claude-config', 'cursor-config', 'vscode-config', 'curl-example']) {
      assert.ok((await page.locator(`#${id}`).innerText()).includes(token), `the ${id} snippet carries the token`)
    }
    await checkPage('token created')
    await screenshot('token')
    // Reloading the page of the new token lists the tokens: it does not send the form again.
    await page.reload()
    await page.getByRole('heading', { name: 'Access tokens' }).waitFor()
    assert.equal(new URL(page.url()).pathname, '/mcp')
    assert.equal(await page.getByRole('row').filter({ hasText: tokenName }).count(), 1, 'one token, not a second one made by the reload')

    const created = await server.api('POST', '/v1/websites', {
      token,
      body: { name: website.name, category: 'other', files: [{ path: 'index.html', content: '<h1>v1</h1>' }] },
    })
    assert.equal(created.status, 201, created.text)
    website = { ...website, id: created.body.websiteId, slug: created.body.slug }
    const second = await server.api('POST', `/v1/websites/${website.id}/versions`, {
      token,
      body: { message: 'Second', files: [{ path: 'index.html', content: '<h1>v2</h1>' }] },
    })
    assert.equal(second.status, 201, second.text)
    assert.equal((await server.site(website.slug)).body.toString(), '<h1>v2</h1>')

    // A collection with one entry, for the collection page.
    const collection = await server.api('POST', `/v1/websites/${website.id}/collections`, {
      token,
      body: { name: 'posts', label: 'Posts', fields: [{ name: 'title', label: 'Title', type: 'text', required: true }] },
    })
    assert.equal(collection.status, 201, collection.text)
    const entry = await server.api('PUT', `/v1/websites/${website.id}/collections/posts/entries/hello`, { token, body: { data: { title: 'Hello from REST' } } })
    assert.equal(entry.status, 201, entry.text)
  })

  test('the dashboard lists the site; its page shows both versions, who published them, and the collection', async () => {
    await open('/dashboard')
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: website.name }) })
    assert.match(await row.innerText(), new RegExp(`${website.slug}\\s+v2\\s+owner`))
    await checkPage('dashboard with a site')

    await row.getByRole('link', { name: website.name }).click()
    await page.waitForURL(`${site}/dashboard/sites/${website.id}`)
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), website.name)
    const versions = page.getByRole('region', { name: 'Versions' }).getByRole('row')
    assert.equal(await versions.count(), 3, 'a header row and two versions')
    assert.match(await versions.nth(1).innerText(), /^v2 live\s+Second\s+Ada Lovelace\s/)
    assert.match(await versions.nth(2).innerText(), /^v1\s+—\s+Ada Lovelace\s/)
    await page.getByRole('link', { name: 'Posts' }).waitFor()
    await checkPage('site page')
    await screenshot('dashboard')
  })

  test('making v1 live rolls the live site back', async () => {
    await page.getByRole('button', { name: 'Make v1 live' }).click()
    await page.waitForURL(`${site}/dashboard/sites/${website.id}?done=promoted`)
    assert.equal(await notice().innerText(), 'The version is live now.')
    const versions = page.getByRole('region', { name: 'Versions' }).getByRole('row')
    assert.match(await versions.nth(2).innerText(), /^v1 live/)
    await page.getByRole('button', { name: 'Make v2 live' }).waitFor()
    await checkPage('site page after a rollback')

    const live = await server.site(website.slug)
    assert.equal(live.status, 200)
    assert.equal(live.body.toString(), '<h1>v1</h1>')
    // The page's "Live at" link opens the published site, rolled back, in the browser too.
    const liveUrl = await page.getByText('Live at').getByRole('link').getAttribute('href')
    assert.equal(liveUrl, `http://${website.slug}.${server.config.siteDomain}/`)
    const sitePage = await context.newPage()
    try {
      await sitePage.goto(liveUrl)
      assert.equal(await sitePage.locator('h1').innerText(), 'v1')
    } finally {
      await sitePage.close()
    }
  })

  test('an editor is invited by email, listed, takes the invitation up, and is removed', async () => {
    await page.getByLabel('Add an editor by email').fill('nobody@example')
    await page.getByRole('button', { name: 'Add editor' }).click()
    await page.getByRole('alert').filter({ hasText: 'email' }).waitFor()
    assert.equal(await page.getByLabel('Add an editor by email').inputValue(), 'nobody@example', 'the form keeps what was typed')
    await checkPage('site page with an editor error')

    const invite = async (email: string) => {
      await page.getByLabel('Add an editor by email').fill(email)
      await page.getByRole('button', { name: 'Add editor' }).click()
      await page.waitForURL(`${site}/dashboard/sites/${website.id}?invited=${encodeURIComponent(email)}`)
      assert.equal(await notice().innerText(), `${email} will be able to edit this site once they sign in, or sign up, with this email.`)
    }
    await invite('nobody@example.com')
    await checkPage('site page with an invitation')
    await page.getByRole('button', { name: 'Withdraw the invitation of nobody@example.com' }).click()
    await page.waitForURL(`${site}/dashboard/sites/${website.id}?done=invitation-removed`)
    assert.equal(await notice().innerText(), 'The invitation was withdrawn.')

    const editor = await server.user('grace@example.com')
    await invite(editor.email)
    // Grace signs in: the invitation is taken up.
    await server.server.services.members.acceptInvitations(editor)
    await page.reload()
    const people = page.locator('ul.people > li')
    assert.match(await people.filter({ hasText: editor.email }).innerText(), /editor/)
    await checkPage('site page with an editor')

    await page.getByRole('button', { name: `Remove ${editor.email}` }).click()
    await page.waitForURL(`${site}/dashboard/sites/${website.id}?done=editor-removed`)
    assert.equal(await notice().innerText(), 'The editor was removed.')
    assert.equal(await people.filter({ hasText: editor.email }).count(), 0)
    assert.equal(await people.count(), 1, 'only the owner is left')
  })

  test('the collection page shows its fields and entries', async () => {
    await page.getByRole('link', { name: 'Posts' }).click()
    await page.waitForURL(`${site}/dashboard/sites/${website.id}/collections/posts`)
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Posts')
    assert.match(await page.getByRole('region', { name: 'Fields' }).getByRole('table').innerText(), /title\s+Title\s+text\s+yes/)
    assert.match(await page.getByRole('region', { name: 'Entries' }).getByRole('table').innerText(), /hello\s+Hello from REST/)
    await checkPage('collection page')
  })

  test('a site password set on the dashboard; a visitor unlocks the site with it; it is removed again', async () => {
    await open(`/dashboard/sites/${website.id}`)
    await page.getByLabel('Protect with a password').fill('short')
    await page.getByLabel('Protect with a password').evaluate((input: HTMLInputElement) => input.removeAttribute('minlength'))
    await page.getByRole('button', { name: 'Set password' }).click()
    await page.getByRole('alert').filter({ hasText: '8 to 200 characters' }).waitFor()
    await checkPage('site page with a password error')
    await page.getByLabel('Protect with a password').fill('open sesame please')
    await page.getByRole('button', { name: 'Set password' }).click()
    await page.waitForURL(`${site}/dashboard/sites/${website.id}?done=password-set`)
    assert.match(await notice().innerText(), /The password is set/)
    await page.getByText('Visitors must enter a password to see this site').waitFor()
    await checkPage('site page with a password')

    // A visitor, in a browser of their own (no cookie of the owner's).
    const visitorContext = await browser.newContext({ viewport: DESKTOP })
    const visitor = await visitorContext.newPage()
    visitor.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) cspErrors.push(message.text())
    })
    const saved = page
    try {
      const liveUrl = `http://${website.slug}.${server.config.siteDomain}/`
      const locked = await visitor.goto(liveUrl)
      assert.equal(locked?.status(), 401)
      assert.equal(await visitor.getByRole('heading', { level: 1 }).innerText(), 'This site is protected')
      page = visitor
      await checkPage('site password page')
      await visitor.getByLabel('Password').fill('wrong password')
      await visitor.getByRole('button', { name: 'Unlock' }).click()
      await visitor.getByRole('alert').filter({ hasText: 'That password is not right' }).waitFor()
      await checkPage('site password page with an error')
      await visitor.getByLabel('Password').fill('open sesame please')
      await visitor.getByRole('button', { name: 'Unlock' }).click()
      await visitor.waitForURL(liveUrl)
      assert.equal(await visitor.locator('h1').innerText(), 'v1', 'the site itself, once unlocked')
      const cookies = await visitorContext.cookies(liveUrl)
      assert.equal(cookies.length, 1)
      assert.equal(cookies[0]!.httpOnly, true)
      assert.equal(cookies[0]!.sameSite, 'Lax')
      assert.equal(cookies[0]!.domain, `${website.slug}.plinth.test`, 'a cookie of this host alone')
    } finally {
      page = saved
      await visitorContext.close()
    }

    await page.getByRole('button', { name: 'Remove the password' }).click()
    await page.waitForURL(`${site}/dashboard/sites/${website.id}?done=password-removed`)
    assert.match(await notice().innerText(), /open to everyone/)
    assert.equal((await server.site(website.slug)).status, 200)
  })

  test('the custom domains page: a domain added shows the TXT record to create', async () => {
    await open(`/dashboard/sites/${website.id}`)
    await page.getByRole('link', { name: 'Manage custom domains' }).click()
    await page.waitForURL(`${site}/dashboard/sites/${website.id}/domains`)
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Custom domains')
    await checkPage('custom domains page')
    await page.getByLabel('Domain name').fill('www.browser-test.example')
    await page.getByRole('button', { name: 'Add domain' }).click()
    await page.getByText('_plinth-challenge.www.browser-test.example').waitFor()
    assert.match(await page.locator('main').innerText(), /pending: waiting for its TXT record/)
    await checkPage('custom domains page with a pending domain')
    await page.getByRole('button', { name: 'Remove www.browser-test.example' }).click()
    await page.getByText('This site has no custom domain.').waitFor()
  })

  test('a token limited on the token page to reading one site reads it, and nothing more', async () => {
    const other = await server.api('POST', '/v1/websites', {
      token,
      body: { name: 'Other Site', category: 'other', files: [{ path: 'index.html', content: '<p>o</p>' }] },
    })
    assert.equal(other.status, 201, other.text)
    await open('/mcp')
    await page.getByLabel('Name', { exact: true }).fill('Read one site')
    for (const label of [/^Preview:/, /^Promote:/, /^Content:/, /^Forms:/, /^Manage:/]) await page.getByRole('checkbox', { name: label }).uncheck()
    assert.equal(await page.getByRole('checkbox', { name: /^Read:/ }).isChecked(), true, 'every capability starts ticked')
    await page.getByRole('checkbox', { name: new RegExp(website.name) }).check()
    await checkPage('token page with scope choices')
    await page.getByRole('button', { name: 'Create token' }).click()
    await page.getByRole('heading', { name: 'Your new token' }).waitFor()
    const limited = (await page.locator('#token-value').innerText()).trim()
    assert.match(await page.locator('main').innerText(), /may do: read · 1 site/)

    assert.equal((await server.api('GET', `/v1/websites/${website.id}`, { token: limited })).status, 200)
    assert.equal((await server.api('GET', `/v1/websites/${other.body.websiteId}`, { token: limited })).status, 404)
    const publish = await server.api('POST', `/v1/websites/${website.id}/versions`, { token: limited, body: { files: [{ path: 'index.html', content: 'x' }] } })
    assert.equal(publish.status, 403)
    assert.equal(publish.body.error.code, 'TOKEN_NOT_ALLOWED')
    assert.equal((await server.api('DELETE', `/v1/websites/${other.body.websiteId}`, { token })).status, 204)

    await open('/mcp')
    const row = page.getByRole('row').filter({ hasText: 'Read one site' })
    assert.match(await row.innerText(), new RegExp(`read\\s+${website.name}`))
    // Nothing ticked is refused on the page, and makes no token.
    await page.getByLabel('Name', { exact: true }).fill('Nothing')
    for (const box of await page.getByRole('checkbox', { name: /:/ }).all()) await box.uncheck()
    await page.getByRole('button', { name: 'Create token' }).click()
    await page.getByRole('alert').waitFor()
    assert.match(await page.getByRole('alert').innerText(), /tick at least one/i)
    await checkPage('token page refusing a scope')
    assert.equal(await page.getByRole('row').filter({ hasText: 'Nothing' }).count(), 0)
  })

  test('a revoked token is refused by the REST API', async () => {
    assert.equal((await server.api('GET', '/v1/websites', { token })).status, 200, 'the token works before')
    await open('/mcp')
    const row = page.getByRole('row').filter({ hasText: tokenName })
    assert.match(await row.innerText(), /REST API and MCP.*active/s)
    await checkPage('token page with a token')
    await row.getByRole('button', { name: `Revoke ${tokenName}` }).click()
    await page.waitForURL(`${site}/mcp?revoked=1`)
    assert.match(await notice().innerText(), /The token was revoked/)
    assert.match(await row.innerText(), /revoked/)
    assert.equal(await row.getByRole('button').count(), 0, 'no Revoke button on a revoked token')
    const refused = await server.api('GET', '/v1/websites', { token })
    assert.equal(refused.status, 401, refused.text)
  })

  test('deleting the site takes its slug typed; it leaves the dashboard and its address answers 404', async () => {
    await open(`/dashboard/sites/${website.id}`)
    const confirm = page.getByLabel(`Type ${website.slug} to confirm`)
    await confirm.fill('not-the-slug')
    await page.getByRole('button', { name: 'Delete site' }).click()
    await page
      .getByRole('alert')
      .filter({ hasText: `Type the site's address, ${website.slug}, to delete it.` })
      .waitFor()
    assert.equal((await server.site(website.slug)).status, 200, 'a wrong slug deletes nothing')
    await checkPage('site page with a deletion error')

    await page.getByLabel(`Type ${website.slug} to confirm`).fill(website.slug)
    await page.getByRole('button', { name: 'Delete site' }).click()
    await page.waitForURL(`${site}/dashboard?done=deleted`)
    assert.match(await notice().innerText(), /The site was deleted/)
    assert.equal(await page.getByRole('link', { name: website.name }).count(), 0)
    await page.getByText('You have no sites yet.').waitFor()
    assert.equal((await server.site(website.slug)).status, 404)
  })

  test('signing out, in again, and out everywhere', async () => {
    await open('/account')
    assert.match(await page.locator('main').innerText(), /Signed in as ada@example\.com \(Ada Lovelace\)/)
    await checkPage('account')

    await page.getByRole('button', { name: 'Sign out', exact: true }).click()
    await page.waitForURL(`${site}/`)
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Sign in' }).waitFor()
    await open('/dashboard')
    assert.equal(page.url(), `${site}/sign-in?next=%2Fdashboard`, 'signed out: the dashboard asks to sign in')

    // Signing in from the token page comes back to it.
    await open('/mcp')
    await page.getByRole('link', { name: 'Sign in to create a token' }).click()
    await page.waitForURL(`${site}/sign-in?next=%2Fmcp`)
    await page.getByLabel('Email', { exact: true }).fill(email)
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(`${site}/mcp`)
    await page.getByRole('heading', { name: 'Create a token' }).waitFor()

    // A second browser signed in to the same account is signed out everywhere too.
    const other = await browser.newContext()
    try {
      const otherPage = await other.newPage()
      await otherPage.goto(`${site}/sign-in`)
      await otherPage.getByLabel('Email', { exact: true }).fill(email)
      await otherPage.getByLabel('Password', { exact: true }).fill(PASSWORD)
      await otherPage.getByRole('button', { name: 'Sign in' }).click()
      await otherPage.waitForURL(`${site}/dashboard`)

      await open('/account')
      await page.getByRole('button', { name: 'Sign out everywhere' }).click()
      await page.waitForURL(`${site}/sign-in`)
      await open('/dashboard')
      assert.equal(page.url(), `${site}/sign-in?next=%2Fdashboard`)
      await otherPage.goto(`${site}/account`)
      assert.equal(otherPage.url(), `${site}/sign-in?next=%2Faccount`, 'the other browser is signed out too')
    } finally {
      await other.close()
    }
  })

  test('every page was checked and the four screenshots were written', () => {
    const required = [
      'landing',
      'docs index',
      'docs page',
      'sign-up',
      'sign-in',
      'token page, signed out',
      'token page, signed in',
      'token created',
      'dashboard, empty',
      'dashboard with a site',
      'site page',
      'collection page',
      'site page with a password',
      'site password page',
      'custom domains page',
      'custom domains page with a pending domain',
      'account',
      '404',
    ]
    assert.deepEqual(
      required.filter((name) => !checked.includes(name)),
      [],
      'pages not checked',
    )
    for (const name of SHOTS) assert.ok(readFileSync(path.join(shotDir, `${name}.png`)).length > 1000, name)
  })
})
