/**
 * Promotion requests on the dashboard, in real Chromium: an agent's token publishes a version
 * without making it live and asks for its promotion; the owner, signed in, finds the request on
 * the site's page, sees the preview link, the site check and the diff against the live version,
 * and approves it: the site is live with it, and the agent reads `approved`. A second request,
 * declined with a reason, leaves the live site unchanged and the agent reads the reason. Every
 * page passes axe with no serious or critical violation, with no console error. One store
 * (SQLite): the HTTP suites cover PostgreSQL.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { browserSkip, launchChromium, seriousAxeViolations } from '../helpers/browser.ts'
import { createToken } from '../helpers/factories.ts'
import { bundle, startTestServer, TEST_PASSWORD, type TestServer } from '../helpers/server.ts'

describe('promotion requests on the dashboard, in Chromium', { skip: browserSkip }, () => {
  let server: TestServer
  let browser: Browser
  let page: Page
  let site: string
  let agentToken: string
  let websiteId: string
  let slug: string
  const problems: string[] = []

  before(async () => {
    // No thumbnails on the dashboard: the server's own browser is not what this suite looks at.
    server = await startTestServer('sqlite', { PLINTH_BROWSER: 'off' })
    site = server.config.siteUrl
    const owner = await server.user('ada@approvals.example')
    // The agent's own token: a token of the owner's, as an MCP client or a deploy gets one.
    agentToken = (await createToken(server, owner, { name: 'agent' })).token
    const created = await server.api('POST', '/v1/websites', { token: agentToken, body: { name: 'Ada Bakes', category: 'other', files: bundle('Ada Bakes') } })
    assert.equal(created.status, 201, created.text)
    ;({ websiteId, slug } = created.body)

    browser = await launchChromium([`--host-resolver-rules=MAP api.plinth.test:8080 127.0.0.1:${new URL(server.url).port}`])
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage()
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`)
    })
    page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`))
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

  const liveTitle = async () => /<title>([^<]*)<\/title>/.exec((await server.site(slug)).body.toString())?.[1]

  /** The agent publishes `title` for review and asks for it to go live. */
  async function agentAsks(title: string, note: string) {
    const published = await server.api('POST', `/v1/websites/${websiteId}/versions`, { token: agentToken, body: { promote: false, files: bundle(title) } })
    assert.equal(published.status, 201, published.text)
    const asked = await server.api('POST', `/v1/websites/${websiteId}/versions/${published.body.jobId}/promotion-request`, {
      token: agentToken,
      body: { note },
    })
    assert.equal(asked.status, 201, asked.text)
    return asked.body
  }
  const outcome = async (requestId: string) =>
    (await server.api('GET', `/v1/websites/${websiteId}/promotion-requests/${requestId}`, { token: agentToken })).body

  test('the owner approves a request on the dashboard: the version is live and the agent reads approved', async () => {
    const request = await agentAsks('Ada Bakes: spring', 'Spring opening hours')
    await page.goto(`${site}/dashboard/sites/${websiteId}`)
    const waiting = page.locator('section[aria-labelledby="requests-title"]')
    await waiting.getByRole('heading', { name: 'Waiting for approval' }).waitFor()
    assert.deepEqual(await seriousAxeViolations(page), [])
    await waiting.getByRole('link', { name: `v${request.version} asked to go live` }).click()
    await page.getByRole('heading', { name: `Make v${request.version} of Ada Bakes live?` }).waitFor()
    assert.equal(await page.getByRole('link', { name: `Preview v${request.version}` }).getAttribute('href'), request.previewUrl)
    assert.match(await page.locator('section[aria-labelledby="warnings-title"]').innerText(), /found nothing to fix/)
    const diff = await page.locator('section[aria-labelledby="changes-title"] pre.diff').innerText()
    assert.match(diff, /-<!doctype html>.*<title>Ada Bakes<\/title>/)
    assert.match(diff, /\+<!doctype html>.*<title>Ada Bakes: spring<\/title>/)
    assert.match(await page.locator('table').innerText(), /Spring opening hours/)
    assert.deepEqual(await seriousAxeViolations(page), [])

    await page.getByRole('button', { name: `Approve: make v${request.version} live` }).click()
    await page.getByText('Approved: the version is live now.').waitFor()
    assert.equal(await liveTitle(), 'Ada Bakes: spring')
    const read = await outcome(request.requestId)
    assert.equal(read.status, 'approved')
    assert.ok(read.decidedAt)
    assert.equal(await page.getByRole('button', { name: /Approve/ }).count(), 0, 'a decided request has no buttons')
    assert.deepEqual(problems, [])
  })

  test('a declined request leaves the live site unchanged, and the agent reads the reason', async () => {
    const request = await agentAsks('Ada Bakes: typo', 'Prices')
    await page.goto(`${site}/dashboard/sites/${websiteId}/promotion-requests/${request.requestId}`)
    await page.getByLabel('Reason for declining').fill('The prices are last year’s')
    await page.getByRole('button', { name: 'Decline' }).click()
    await page.getByText('Declined: the live version stays').waitFor()
    assert.deepEqual(await seriousAxeViolations(page), [])
    assert.equal(await liveTitle(), 'Ada Bakes: spring')
    const read = await outcome(request.requestId)
    assert.equal(read.status, 'declined')
    assert.equal(read.reason, 'The prices are last year’s')
    await page.goto(`${site}/dashboard/sites/${websiteId}`)
    assert.equal(await page.locator('section[aria-labelledby="requests-title"]').count(), 0, 'nothing is waiting any more')
    assert.deepEqual(problems, [])
  })

  test('a request the agent withdraws while the page is open cannot be approved; the page then says withdrawn', async () => {
    const request = await agentAsks('Ada Bakes: draft prices', 'New prices')
    const path = `${site}/dashboard/sites/${websiteId}/promotion-requests/${request.requestId}`
    await page.goto(path)
    const withdrawn = await server.api('DELETE', `/v1/websites/${websiteId}/promotion-requests/${request.requestId}`, { token: agentToken })
    assert.equal(withdrawn.status, 204, withdrawn.text)
    await page.getByRole('button', { name: `Approve: make v${request.version} live` }).click()
    await page.getByText('This request is cancelled already.').waitFor()
    assert.deepEqual(problems.splice(0), ['console: Failed to load resource: the server responded with a status of 409 (Conflict)'], 'the answer is a 409')
    assert.equal(await liveTitle(), 'Ada Bakes: spring', 'the live version stays')
    await page.goto(path)
    const details = await page.getByRole('region', { name: 'Request details' }).innerText()
    assert.match(details, /Status\s+cancelled/)
    assert.match(details, /Withdrawn\s+\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/)
    assert.equal(await page.getByRole('button', { name: /Approve|Decline/ }).count(), 0, 'a withdrawn request has no buttons')
    assert.deepEqual(await seriousAxeViolations(page), [])
    assert.deepEqual(problems, [])
  })

  test('a scheduled promotion is listed on the site page and cancelled there', async () => {
    const published = await server.api('POST', `/v1/websites/${websiteId}/versions`, {
      token: agentToken,
      body: { promote: false, files: bundle('Ada Bakes: later') },
    })
    const promoteAt = new Date(Date.now() + 86_400_000).toISOString()
    const made = await server.api('POST', `/v1/websites/${websiteId}/versions/${published.body.jobId}/promote`, { token: agentToken, body: { promoteAt } })
    assert.equal(made.status, 202, made.text)
    await page.goto(`${site}/dashboard/sites/${websiteId}`)
    const scheduled = page.locator('section[aria-labelledby="schedules-title"]')
    assert.match(await scheduled.innerText(), new RegExp(`v${published.body.version} goes live at ${promoteAt.slice(0, 10)}`))
    assert.deepEqual(await seriousAxeViolations(page), [])
    await scheduled.getByRole('button', { name: `Cancel the promotion of v${published.body.version}` }).click()
    await page.getByText('The scheduled promotion is cancelled.').waitFor()
    const list = await server.api('GET', `/v1/websites/${websiteId}/schedules`, { token: agentToken })
    assert.equal(list.body.items[0].status, 'cancelled')
    assert.equal(await page.locator('section[aria-labelledby="schedules-title"]').count(), 0)
    assert.deepEqual(problems, [])
  })
})
