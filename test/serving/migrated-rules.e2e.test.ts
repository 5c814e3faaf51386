/**
 * A site's own Content-Security-Policy from its `_headers` file, in real Chromium: it narrows what
 * Plinth's policy allows and never widens it.
 */
import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import type { Browser } from 'playwright-core'
import { browserSkip, launchChromium } from '../helpers/browser.ts'
import { createSite, PNG, PNG_BASE64 } from '../helpers/factories.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'

describe("a site's Content-Security-Policy in Chromium", { skip: browserSkip }, () => {
  let server: TestServer
  let browser: Browser
  let other: http.Server
  let otherOrigin: string

  before(async () => {
    other = http.createServer((req, res) => {
      if (req.url === '/a.png') res.writeHead(200, { 'Content-Type': 'image/png' }).end(PNG)
      else res.writeHead(404).end()
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

  test("narrows what Plinth's policy allows, and Plinth's policy still holds", async () => {
    const page = `<!doctype html><title>two policies</title>
<img id="own" src="/a.png"><img id="remote" src="${otherOrigin}/a.png">
<script>
  window.violations = []
  document.addEventListener('securitypolicyviolation', (e) => window.violations.push(e.violatedDirective))
  window.evaluated = (() => { try { return eval('1 + 1') } catch { return 'blocked' } })()
</script>`
    await createSite(server, {
      slug: 'two-policies',
      files: [
        { path: 'index.html', content: page },
        { path: 'a.png', content: PNG_BASE64, contentEncoding: 'base64' },
        { path: '_headers', content: "/*\n  Content-Security-Policy: img-src 'self'\n" },
      ],
    })
    const tab = await browser.newPage()
    try {
      await tab.goto(`http://two-policies.localhost:${new URL(server.url).port}/`)
      await tab.waitForFunction(() => ['own', 'remote'].every((id) => (document.getElementById(id) as HTMLImageElement).complete))
      const width = (id: string) => tab.evaluate((id) => (document.getElementById(id) as HTMLImageElement).naturalWidth, id)
      assert.equal(await width('own'), 1, "the site's own image loads under both policies")
      assert.equal(await width('remote'), 0, "the remote image Plinth's policy allows is blocked by the site's")
      assert.equal(await tab.evaluate(() => (window as unknown as { evaluated: unknown }).evaluated), 'blocked', "eval stays blocked by Plinth's policy")
      const violations = await tab.evaluate(() => (window as unknown as { violations: string[] }).violations)
      assert.ok(violations.includes('img-src'), JSON.stringify(violations))
    } finally {
      await tab.close()
    }
  })
})
