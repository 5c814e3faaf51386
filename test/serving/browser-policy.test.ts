/**
 * In real Chromium: what the authoring rules accept on a page also works under the served
 * Content-Security-Policy (images, fonts and fetch from another origin), and what they refuse is
 * refused by the browser too.
 */
import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import type { Browser } from 'playwright-core'
import { browserSkip, launchChromium } from '../helpers/browser.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'

// A 1x1 PNG.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64')

describe('the served policy in Chromium', { skip: browserSkip }, () => {
  let server: TestServer
  let browser: Browser
  let other: http.Server
  let otherOrigin: string

  before(async () => {
    // Another origin over plain http, as a CDN or an API a page uses would be.
    other = http.createServer((req, res) => {
      const cors = { 'Access-Control-Allow-Origin': '*' }
      if (req.url === '/a.png') res.writeHead(200, { 'Content-Type': 'image/png', ...cors }).end(PNG)
      else if (req.url === '/data.json') res.writeHead(200, { 'Content-Type': 'application/json', ...cors }).end('{"ok":true}')
      else res.writeHead(404, cors).end()
    })
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve))
    otherOrigin = `http://127.0.0.1:${(other.address() as AddressInfo).port}`
    // Sites under `localhost`: Chromium resolves {slug}.localhost to this machine.
    server = await startTestServer('sqlite', { PLINTH_SITE_DOMAIN: 'localhost' })
    browser = await launchChromium()
  })
  after(async () => {
    await browser?.close()
    await server?.close()
    other?.close()
  })

  test('an image and a fetch from another origin load; an external script is refused at publish and by the browser', async () => {
    const user = await server.user()
    const page = `<!doctype html><title>policy</title>
<img id="remote" src="${otherOrigin}/a.png">
<script>
  window.violations = []
  document.addEventListener('securitypolicyviolation', (e) => window.violations.push(e.violatedDirective + ' ' + e.blockedURI))
  window.fetched = fetch('${otherOrigin}/data.json').then((r) => r.json()).then((j) => j.ok, () => false)
  window.evaluated = (() => { try { return eval('1 + 1') } catch { return 'blocked' } })()
</script>`
    const created = await server.api('POST', '/v1/websites', { token: user.token, body: { category: 'other', files: [{ path: 'index.html', content: page }] } })
    assert.equal(created.status, 201, created.text)
    assert.deepEqual(
      created.body.warnings.map((w: { code: string }) => w.code),
      ['UNSAFE_EVAL'],
      'eval is reported at publish as what the browser will block',
    )

    const refused = await server.api('POST', '/v1/websites', {
      token: user.token,
      body: { category: 'other', files: [{ path: 'index.html', content: `<script src="${otherOrigin}/x.js"></script>` }] },
    })
    assert.equal(refused.body.error.code, 'PUBLISH_INVALID')

    const tab = await browser.newPage()
    try {
      await tab.goto(`http://${created.body.slug}.localhost:${new URL(server.url).port}/`)
      await tab.waitForFunction(() => (document.getElementById('remote') as HTMLImageElement).complete)
      assert.equal(await tab.evaluate(() => (document.getElementById('remote') as HTMLImageElement).naturalWidth), 1, 'the remote image loaded')
      assert.equal(await tab.evaluate(() => (window as unknown as { fetched: Promise<boolean> }).fetched), true, 'the fetch to another origin answered')
      assert.equal(await tab.evaluate(() => (window as unknown as { evaluated: unknown }).evaluated), 'blocked', 'eval is refused, as the warning said')
      const violations = await tab.evaluate(() => (window as unknown as { violations: string[] }).violations)
      assert.deepEqual(
        violations.filter((v) => !v.startsWith('script-src')),
        [],
        'nothing but eval was blocked',
      )
    } finally {
      await tab.close()
    }
  })
})
