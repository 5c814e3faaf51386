/**
 * In real Chromium: a site published with `vendor: true` from a page naming a CDN's script,
 * stylesheet (with an @font-face font) and image runs the script, applies the stylesheet and the
 * font, shows the image, all from its own origin: the browser asks the CDN nothing and the
 * served Content-Security-Policy reports no violation.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Browser } from 'playwright-core'
import { browserSkip, launchChromium } from '../helpers/browser.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'
import { HAS_REAL_FONT, startVendorHost, type VendorHost } from '../helpers/vendor-host.ts'

describe('a vendored site in Chromium', { skip: browserSkip }, () => {
  let host: VendorHost
  let server: TestServer
  let browser: Browser
  before(async () => {
    host = await startVendorHost()
    // Sites under `localhost`: Chromium resolves {slug}.localhost to this machine.
    server = await startTestServer('sqlite', { ...host.env, PLINTH_SITE_DOMAIN: 'localhost' })
    browser = await launchChromium()
  })
  after(async () => {
    await browser?.close()
    await server?.close()
    await host?.close()
  })

  test('the script runs, the stylesheet and its font apply, the image shows, with no policy violation and no request to the CDN', async () => {
    const page = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Vendored</title>
<script>
  window.violations = []
  document.addEventListener('securitypolicyviolation', (e) => window.violations.push(e.violatedDirective + ' ' + e.blockedURI))
</script>
<link rel="stylesheet" href="${host.origin}/css/site.css" crossorigin="anonymous">
<script src="${host.origin}/lib/app.js" defer></script></head>
<body><h1>Vendored</h1><img id="logo" src="${host.origin}/img/logo.png" alt="Logo" width="1" height="1"></body></html>`
    const user = await server.user()
    const created = await server.api('POST', '/v1/websites', {
      token: user.token,
      body: { category: 'other', files: [{ path: 'index.html', content: page }], vendor: true },
    })
    assert.equal(created.status, 201, created.text)
    const asked = [...host.hits.values()].reduce((a, b) => a + b, 0)

    const tab = await browser.newPage()
    const requested: string[] = []
    tab.on('request', (request) => requested.push(request.url()))
    await tab.goto(`http://${created.body.slug}.localhost:${new URL(server.url).port}/`)
    await tab.waitForFunction(() => document.documentElement.dataset.vendoredScript === 'ran')
    const seen = await tab.evaluate(async () => {
      const loaded = await document.fonts.load("16px 'Vendored Mono'").catch(() => [])
      const logo = document.getElementById('logo') as HTMLImageElement
      await logo.decode().catch(() => {})
      return {
        color: getComputedStyle(document.body).color,
        fontFamily: getComputedStyle(document.body).fontFamily,
        fontLoaded: loaded.length > 0 && document.fonts.check("16px 'Vendored Mono'"),
        image: logo.complete && logo.naturalWidth === 1,
        violations: (window as unknown as { violations: string[] }).violations,
      }
    })
    assert.equal(seen.color, 'rgb(1, 2, 3)', 'the stylesheet applies')
    assert.match(seen.fontFamily, /Vendored Mono/)
    if (HAS_REAL_FONT) assert.equal(seen.fontLoaded, true, 'the font loads from the site')
    assert.equal(seen.image, true, 'the image shows')
    assert.deepEqual(seen.violations, [])
    assert.deepEqual(
      requested.filter((url) => url.startsWith(host.origin)),
      [],
    )
    assert.equal(
      [...host.hits.values()].reduce((a, b) => a + b, 0),
      asked,
      'the CDN was asked nothing by the browser',
    )
    await tab.close()
  })
})
