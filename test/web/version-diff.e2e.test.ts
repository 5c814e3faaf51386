/**
 * A version's changes from the live one on the dashboard, in real Chromium. A site is published
 * as v1, then v2 is stored without being made live, differing from v1 in every way a file can:
 * one added, one removed, one moved (the same bytes at a new path), a text file changed (lines
 * with markup and entities, a removed line that starts with `-- ` and so reads like a diff's file
 * header once prefixed, a long unbroken line) and a PNG changed. v2's page must list each with
 * its status, paths and sizes, show the text change as the unified diff's lines and the PNG with
 * none, before the promote button; log no console error and break nothing of its
 * Content-Security-Policy; agree with the same comparison over REST; and at a phone's width
 * (390 px) keep the diff inside the page. One store (SQLite): the HTTP suites cover PostgreSQL.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { WEB_CONTENT_SECURITY_POLICY } from '../../src/http/page-headers.ts'
import { PNG } from '../helpers/factories.ts'
import { browserSkip, launchChromium } from '../helpers/browser.ts'
import { startTestServer, TEST_PASSWORD, type TestServer } from '../helpers/server.ts'

const DESKTOP = { width: 1280, height: 800 }
const PHONE = { width: 390, height: 844 }
const LONG = 'an-unbroken-line-of-text-'.repeat(16)

const page1 = `<!doctype html>
<html lang="en">
<head>
<title>Rosa's Bakery</title>
<link rel="stylesheet" href="style.css">
</head>
<body>
<h1>Rosa's Bakery</h1>
<p>Fresh bread every morning. <a href="about.html">About us</a></p>
<p>Thanks for visiting.
-- Rosa</p>
</body>
</html>
`
const page2 = `<!doctype html>
<html lang="en">
<head>
<title>Rosa's Bakery</title>
<link rel="stylesheet" href="css/site.css">
</head>
<body>
<h1>Rosa's Bakery &amp; Café</h1>
<p>Fresh bread every morning. <a href="news.html">News</a></p>
<p class="note">${LONG}</p>
<p>Thanks for visiting.
-- Rosa &amp; Marco</p>
</body>
</html>
`
/** v2's index.html against v1's, as a unified diff with 3 lines of context. */
const EXPECTED_DIFF: Array<[kind: string, text: string]> = [
  ['meta', '--- a/index.html'],
  ['meta', '+++ b/index.html'],
  ['hunk', '@@ -2,12 +2,13 @@'],
  ['ctx', ' <html lang="en">'],
  ['ctx', ' <head>'],
  ['ctx', " <title>Rosa's Bakery</title>"],
  ['del', '-<link rel="stylesheet" href="style.css">'],
  ['add', '+<link rel="stylesheet" href="css/site.css">'],
  ['ctx', ' </head>'],
  ['ctx', ' <body>'],
  ['del', "-<h1>Rosa's Bakery</h1>"],
  ['del', '-<p>Fresh bread every morning. <a href="about.html">About us</a></p>'],
  ['add', "+<h1>Rosa's Bakery &amp; Café</h1>"],
  ['add', '+<p>Fresh bread every morning. <a href="news.html">News</a></p>'],
  ['add', `+<p class="note">${LONG}</p>`],
  ['ctx', ' <p>Thanks for visiting.'],
  ['del', '--- Rosa</p>'],
  ['add', '+-- Rosa &amp; Marco</p>'],
  ['ctx', ' </body>'],
  ['ctx', ' </html>'],
]

const css = 'body { font-family: Georgia, serif; color: #3b2a1a; }\n'
const about = '<!doctype html>\n<title>About</title>\n<h1>About us</h1>\n'
const news = '<!doctype html>\n<title>News</title>\n<h1>News</h1>\n<p>Rye on Saturdays.</p>\n'
/** A 2x2 PNG: other bytes than the 1x1 one of v1. */
const PNG_2X2 = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGM4YaOhUXGCQWNBwIcTGgAkngWNAKdfEgAAAABJRU5ErkJggg==', 'base64')
const bytes = (text: string) => Buffer.byteLength(text)

/** Each file v2 changes, as the page lists it (path order) and REST reports it. */
const EXPECTED_CHANGES = [
  { path: 'about.html', status: 'removed', sizeBefore: bytes(about), shown: `about.html removed, ${bytes(about)} bytes` },
  {
    path: 'css/site.css',
    status: 'moved',
    previousPath: 'style.css',
    sizeBefore: bytes(css),
    sizeAfter: bytes(css),
    shown: `css/site.css moved from style.css, ${bytes(css)} bytes`,
  },
  {
    path: 'index.html',
    status: 'changed',
    sizeBefore: bytes(page1),
    sizeAfter: bytes(page2),
    shown: `index.html changed, ${bytes(page1)} → ${bytes(page2)} bytes`,
  },
  {
    path: 'logo.png',
    status: 'changed',
    sizeBefore: PNG.length,
    sizeAfter: PNG_2X2.length,
    shown: `logo.png changed, ${PNG.length} → ${PNG_2X2.length} bytes`,
  },
  { path: 'news.html', status: 'added', sizeAfter: bytes(news), shown: `news.html added, ${bytes(news)} bytes` },
]

describe("a version's changes on the dashboard, in Chromium", { skip: browserSkip }, () => {
  let server: TestServer
  let browser: Browser
  let page: Page
  let site: string
  let token: string
  let websiteId: string
  /** Console errors, uncaught exceptions and CSP violations of the page, as they happen. */
  const problems: string[] = []

  before(async () => {
    server = await startTestServer('sqlite')
    site = server.config.siteUrl
    const owner = await server.user('rosa@version-diff.example')
    token = owner.token
    const publish = async (path: string, body: object) => {
      const res = await server.api('POST', path, { token, body })
      assert.equal(res.status, 201, res.text)
      return res.body
    }
    const first = await publish('/v1/websites', {
      name: "Rosa's Bakery",
      category: 'other',
      files: [
        { path: 'index.html', content: page1 },
        { path: 'style.css', content: css },
        { path: 'about.html', content: about },
        { path: 'logo.png', content: PNG.toString('base64'), contentEncoding: 'base64' },
      ],
    })
    websiteId = first.websiteId
    await publish(`/v1/websites/${websiteId}/versions`, {
      promote: false,
      message: 'News page, new stylesheet path, new logo',
      files: [
        { path: 'index.html', content: page2 },
        { path: 'css/site.css', content: css },
        { path: 'news.html', content: news },
        { path: 'logo.png', content: PNG_2X2.toString('base64'), contentEncoding: 'base64' },
      ],
    })

    browser = await launchChromium([`--host-resolver-rules=MAP api.plinth.test:8080 127.0.0.1:${new URL(server.url).port}`])
    page = await (await browser.newContext({ viewport: DESKTOP })).newPage()
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`)
    })
    page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`))
    // Reported to the page itself too, in case a violation is not logged to the console.
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (event) => console.error(`CSP violation: ${event.violatedDirective} ${event.blockedURI}`))
    })
    await page.goto(`${site}/sign-in`)
    await page.getByLabel('Email').fill(owner.email)
    await page.getByLabel('Password').fill(TEST_PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(`${site}/dashboard`)
    problems.length = 0
  })
  after(async () => {
    await browser?.close()
    await server?.close()
  })

  const versionPath = () => `/dashboard/sites/${websiteId}/versions/2`
  const changes = () => page.locator('section[aria-labelledby="changes-title"]')

  /** The lines of a file's diff as the page shows them: each one's kind (its class) and text. */
  const shownDiff = (path: string) =>
    changes()
      .locator('h3', { hasText: path })
      .locator('xpath=following-sibling::*[1]')
      .evaluate((el) =>
        el.matches('pre.diff') ? [...el.querySelectorAll('span')].map((span) => [span.className.replace(/^diff-/, ''), span.textContent ?? '']) : null,
      )

  test("v2's page lists every change with its status, paths and sizes, before the promote button", async () => {
    const response = await page.goto(site + versionPath())
    assert.equal(response?.status(), 200)
    assert.equal(response?.headers()['content-security-policy'], WEB_CONTENT_SECURITY_POLICY)
    await changes().getByRole('heading', { name: 'Changes from the live version, v1' }).waitFor()
    assert.equal(await changes().locator('p').first().innerText(), 'Making v2 live changes 5 files:')
    const listed = await changes()
      .locator('ul.changes li')
      .evaluateAll((items) => items.map((li) => (li.textContent ?? '').replace(/\s+/g, ' ').trim()))
    assert.deepEqual(
      listed,
      EXPECTED_CHANGES.map((c) => c.shown),
    )
    // Only changed files get a section of their own: the text and the PNG.
    assert.deepEqual(await changes().locator('h3').allInnerTexts(), ['index.html', 'logo.png'])

    const promote = page.getByRole('button', { name: 'Make v2 live' })
    await promote.waitFor()
    const diffBeforeButton = await page
      .locator('pre.diff')
      .evaluate((diff, button) => Boolean(diff.compareDocumentPosition(button as Node) & Node.DOCUMENT_POSITION_FOLLOWING), await promote.elementHandle())
    assert.ok(diffBeforeButton, 'the diff comes before the promote button')
  })

  test('the text change is shown as its unified diff, line by line, its markup as text', async () => {
    assert.deepEqual(await shownDiff('index.html'), EXPECTED_DIFF)
    // The lines' markup is text: none of it became an element of the page.
    assert.equal(await page.locator('pre.diff *:not(code):not(span)').count(), 0)
    assert.equal(await page.locator('pre.diff').count(), 1, 'one diff: the text file')
    // The stylesheet applied (it is the page's own, as its CSP allows): added and removed lines are tinted apart.
    // (Mapped inline: a function named inside the page's callback would not survive the TypeScript transform.)
    const [add, del, ctx] = await page.evaluate(() =>
      ['.diff-add', '.diff-del', '.diff-ctx'].map((selector) => getComputedStyle(document.querySelector(selector)!).backgroundColor),
    )
    const tints = { add, del, ctx }
    assert.notEqual(tints.add, tints.ctx, 'added lines are tinted')
    assert.notEqual(tints.del, tints.ctx, 'removed lines are tinted')
    assert.notEqual(tints.add, tints.del, 'added and removed lines are told apart')
  })

  test('the PNG is a changed binary: its sizes and no text diff', async () => {
    assert.equal(await shownDiff('logo.png'), null, 'no diff follows its heading')
    const note = changes().locator('h3', { hasText: 'logo.png' }).locator('xpath=following-sibling::*[1]')
    assert.equal(await note.innerText(), 'Not text: preview the version to see it.')
  })

  test('the page logged no console error and broke nothing of its Content-Security-Policy', () => {
    assert.deepEqual(problems, [])
  })

  test('REST compares the same versions alike', async () => {
    const res = await server.api('GET', `/v1/websites/${websiteId}/versions/1/diff/2`, { token })
    assert.equal(res.status, 200, res.text)
    assert.equal(res.body.from.version, 1)
    assert.equal(res.body.to.version, 2)
    const files = res.body.files as Array<Record<string, unknown>>
    assert.deepEqual(
      files.map(({ path, status, previousPath, sizeBefore, sizeAfter }) => ({ path, status, previousPath, sizeBefore, sizeAfter })),
      EXPECTED_CHANGES.map(({ path, status, previousPath, sizeBefore, sizeAfter }) => ({ path, status, previousPath, sizeBefore, sizeAfter })),
    )
    const text = files.find((f) => f.path === 'index.html')
    assert.equal(text?.diff, `${EXPECTED_DIFF.map(([, line]) => line).join('\n')}\n`, 'the lines the page shows are the diff REST gives')
    const png = files.find((f) => f.path === 'logo.png')
    assert.equal(png?.diff, undefined, 'a binary has no text diff')
    assert.equal(png?.diffTruncated, undefined, 'nor is it a text too large to show')
  })

  test('at 390 px wide the diff stays within the page: its long line wraps inside its box', async () => {
    await page.setViewportSize(PHONE)
    try {
      await page.goto(site + versionPath())
      const layout = await page.locator('pre.diff').evaluate((pre) => {
        const box = pre.getBoundingClientRect()
        const long = [...pre.querySelectorAll('span')].find((span) => span.textContent?.includes('an-unbroken-line'))!
        const lines = long.getClientRects()
        return {
          documentWidth: document.documentElement.scrollWidth,
          box: { left: box.left, right: box.right },
          overflow: pre.scrollWidth - pre.clientWidth,
          longRight: Math.max(...[...lines].map((r) => r.right)),
          longLines: lines.length,
        }
      })
      assert.ok(layout.documentWidth <= PHONE.width, `the document is ${layout.documentWidth} px wide at ${PHONE.width} px`)
      assert.ok(layout.box.left >= 0 && layout.box.right <= PHONE.width, `the diff spans ${layout.box.left} to ${layout.box.right} px`)
      assert.equal(layout.overflow, 0, 'nothing of the diff is hidden sideways')
      assert.ok(layout.longRight <= layout.box.right, `the long line ends at ${layout.longRight} px, past its box (${layout.box.right} px)`)
      assert.ok(layout.longLines > 1, 'the long line wraps')
      assert.deepEqual(problems, [])
    } finally {
      await page.setViewportSize(DESKTOP)
    }
  })
})
