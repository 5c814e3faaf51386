/**
 * The dashboard's drop area in real Chromium: a folder with nested assets, a binary and a file
 * large enough for an upload URL, chosen through the folder picker, publishes a new site while
 * the progress bar climbs to 100% and lands on the new version; the same folder on that site
 * sends no file bytes (the server's own count, no upload); a refused folder lists every violation
 * in the page and stores nothing; a .zip dropped on the area publishes; and with JavaScript off
 * the .zip form publishes a version. Pages are checked with axe-core. The browser uses the
 * server's loopback address, a secure context where SubtleCrypto is offered. One store (SQLite):
 * the HTTP suite covers PostgreSQL.
 */
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { PNG } from '../helpers/factories.ts'
import { browserSkip, launchChromium, seriousAxeViolations } from '../helpers/browser.ts'
import { startTestServer, TEST_PASSWORD, type TestServer } from '../helpers/server.ts'
import { makeZip } from '../helpers/zip.ts'

/** A file of this size goes through an upload URL (the drop area's threshold is 256 KiB). */
const LARGE = Buffer.alloc(300 * 1024, 0x5a)

function writeTree(root: string, files: Record<string, string | Buffer>): string {
  for (const [name, data] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, name)), { recursive: true })
    writeFileSync(path.join(root, name), data)
  }
  return root
}

describe('the drop area in Chromium', { skip: browserSkip }, () => {
  let server: TestServer
  let browser: Browser
  let page: Page
  let tmp: string
  let email: string
  /** The progress bar's values, reported from the page as they change. */
  const progress: number[] = []
  /** Upload PUTs the page sent. */
  const puts: string[] = []

  before(async () => {
    server = await startTestServer('sqlite')
    tmp = mkdtempSync(path.join(os.tmpdir(), 'plinth-drop-'))
    email = (await server.user()).email
    browser = await launchChromium()
    page = await signedIn(true)
    await page.exposeBinding('reportProgress', (_source, value: number) => progress.push(value))
    page.on('request', (request) => {
      if (request.method() === 'PUT') puts.push(request.url())
    })
  })
  after(async () => {
    await browser?.close()
    await server?.close()
    if (tmp) rmSync(tmp, { recursive: true, force: true })
  })

  async function signedIn(javaScriptEnabled: boolean): Promise<Page> {
    const signed = await (await browser.newContext({ javaScriptEnabled })).newPage()
    await signed.goto(`${server.url}/sign-in`)
    await signed.getByLabel('Email').fill(email)
    await signed.getByLabel('Password').fill(TEST_PASSWORD)
    await signed.getByRole('button', { name: 'Sign in' }).click()
    await signed.waitForURL(`${server.url}/dashboard`)
    return signed
  }

  /** Reports every value the progress bar takes from now on, on this page. */
  async function watchProgress(): Promise<void> {
    progress.length = 0
    await page.evaluate(() => {
      const bar = document.querySelector('progress')!
      new MutationObserver(() => (window as unknown as { reportProgress: (v: number) => void }).reportProgress(bar.value)).observe(bar, {
        attributes: true,
        attributeFilter: ['value'],
      })
    })
  }

  /**
   * Picks a folder in the drop area and returns the publish call's answer, read on its way to the
   * page (which leaves for the new version at once).
   */
  async function dropFolder(folder: string, publishPath: string): Promise<{ status: number; body: any }> {
    await watchProgress()
    const matches = (url: URL) => url.pathname === publishPath
    let answered!: (answer: { status: number; body: any }) => void
    const answer = new Promise<{ status: number; body: any }>((resolve) => (answered = resolve))
    await page.route(matches, async (route) => {
      const response = await route.fetch()
      answered({ status: response.status(), body: await response.json() })
      await route.fulfill({ response })
    })
    try {
      await page.locator('[data-folder-input]').setInputFiles(folder)
      return await answer
    } finally {
      await page.unroute(matches)
    }
  }

  async function storedRows() {
    const db = server.server.db.kysely
    const count = async (table: 'versions' | 'blobs' | 'uploads') =>
      Number(
        (
          await db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      )
    return { versions: await count('versions'), blobs: await count('blobs'), uploads: await count('uploads') }
  }

  const siteFolder = () =>
    writeTree(path.join(tmp, 'dist'), {
      'index.html':
        '<!doctype html><html lang="en"><title>Dropped</title><link rel="stylesheet" href="assets/css/site.css"><script src="assets/js/app.js"></script><img src="img/dot.png" alt="A dot">',
      'assets/css/site.css': 'body { font-family: serif }',
      'assets/js/app.js': 'console.log("hello")',
      'img/dot.png': PNG,
      'media/large.bin': LARGE,
      '.DS_Store': 'junk',
      'node_modules/pkg/index.js': 'junk',
    })

  let websiteId = ''

  test('the dashboard offers the drop area, clean for axe', async () => {
    await page.getByRole('button', { name: 'Choose a folder' }).waitFor()
    await page.getByText('Drop a folder or a .zip here').waitFor()
    assert.deepEqual(await seriousAxeViolations(page), [])
  })

  test('a folder picked on the dashboard publishes a new site, the progress bar reaching 100%, and lands on version 1', async () => {
    await page.getByLabel('Name').fill('Dropped Site')
    const { status, body } = await dropFolder(siteFolder(), '/dashboard/deploy')
    assert.equal(status, 201)
    assert.equal(body.filesSent, 5, 'every file but the skipped ones')
    await page.waitForURL(/\/dashboard\/sites\/web_[A-Za-z0-9]+\/versions\/1\?done=deployed$/)
    websiteId = body.websiteId
    assert.ok(progress.includes(100), `the progress bar reached 100% (${progress.join(', ')})`)
    assert.ok(
      progress.some((value) => value > 0 && value < 100),
      'and showed steps on the way',
    )
    assert.equal(puts.length, 1, 'the large file went through an upload URL')
    await page.getByText('Published: v1 is live.').waitFor()
    const site = await server.site(body.pageUrl.match(/\/\/([a-z0-9-]+)\./)[1], '/media/large.bin')
    assert.deepEqual(site.body, LARGE)
    assert.equal((await server.site(body.pageUrl.match(/\/\/([a-z0-9-]+)\./)[1], '/node_modules/pkg/index.js')).status, 404)
  })

  test('the same folder dropped on the site sends no file bytes and lands on version 2 with its preview and promote button', async () => {
    await page.goto(`${server.url}/dashboard/sites/${websiteId}`)
    const before = await storedRows()
    puts.length = 0
    const { body } = await dropFolder(path.join(tmp, 'dist'), `/dashboard/sites/${websiteId}/deploy`)
    assert.deepEqual([body.version, body.filesSent, body.filesReused, body.bytesInline], [2, 0, 5, 0], 'counted by the server')
    await page.waitForURL(`${server.url}/dashboard/sites/${websiteId}/versions/2?done=deployed`)
    assert.ok(progress.includes(100))
    assert.deepEqual(puts, [], 'no upload')
    const after = await storedRows()
    assert.deepEqual([after.uploads, after.blobs, after.versions], [before.uploads, before.blobs, before.versions + 1], 'no new bytes stored')
    await page.getByRole('link', { name: 'Preview v2' }).waitFor()
    await page.getByRole('button', { name: 'Make v2 live' }).waitFor()
    assert.deepEqual(await seriousAxeViolations(page), [])
  })

  test('a refused folder lists every violation in the page and stores nothing', async () => {
    await page.goto(`${server.url}/dashboard/sites/${websiteId}`)
    const refused = writeTree(path.join(tmp, 'refused'), {
      'about.html': '<script src="https://cdn.example.com/lib.js"></script><iframe src="https://example.com/"></iframe>',
      'css/site.css': '@import url("https://fonts.example.com/font.css");',
    })
    const before = await storedRows()
    const answer = await dropFolder(refused, `/dashboard/sites/${websiteId}/deploy`)
    assert.equal(answer.status, 422)
    const { error } = answer.body
    const alert = page.getByRole('alert')
    await alert.getByText(error.message).waitFor()
    const items = await alert.locator('li').allInnerTexts()
    assert.equal(items.length, error.violations.length)
    assert.ok(error.violations.length >= 4, 'missing index, external script, iframe, external stylesheet')
    for (const violation of error.violations)
      assert.ok(
        items.some((item: string) => item.includes(violation.message)),
        violation.message,
      )
    assert.ok(items.some((item: string) => item.startsWith('about.html: ')))
    assert.deepEqual(await storedRows(), before)
    assert.deepEqual(await seriousAxeViolations(page), [])
  })

  test('a .zip dropped on the area publishes the next version', async () => {
    await page.goto(`${server.url}/dashboard/sites/${websiteId}`)
    const zip = makeZip([{ name: 'index.html', data: '<!doctype html><title>From a zip</title>' }])
    const transfer = await page.evaluateHandle(
      (bytes) => {
        const data = new DataTransfer()
        data.items.add(new File([new Uint8Array(bytes)], 'site.zip', { type: 'application/zip' }))
        return data
      },
      [...zip],
    )
    await page.locator('[data-dropzone]').dispatchEvent('drop', { dataTransfer: transfer })
    await page.waitForURL(`${server.url}/dashboard/sites/${websiteId}/versions/3?done=deployed`)
  })

  test('with JavaScript off, the .zip form publishes a version', async () => {
    const plain = await signedIn(false)
    await plain.goto(`${server.url}/dashboard/sites/${websiteId}`)
    assert.equal(await plain.locator('[data-dropzone]').isVisible(), false, 'no drop area without the script')
    const zipPath = path.join(tmp, 'site.zip')
    writeFileSync(zipPath, makeZip([{ name: 'public/index.html', data: '<!doctype html><title>No script</title>' }]))
    await plain.getByLabel('Message').fill('Sent without JavaScript')
    await plain.getByLabel('A .zip of the site').setInputFiles(zipPath)
    await plain.getByRole('button', { name: 'Publish the .zip' }).click()
    await plain.waitForURL(`${server.url}/dashboard/sites/${websiteId}/versions/4?done=deployed`)
    await plain.getByText('Sent without JavaScript').waitFor()
    await plain.getByRole('button', { name: 'Make v4 live' }).waitFor()
    await plain.context().close()
  })
})
