/**
 * Screenshots and browser reports in Debian's Chromium, through the API and MCP: the PNG is the
 * viewport's size and shows the page; the page gets nothing from another host, and the report
 * names the request, the script errors, the policy's refusals and sideways scrolling; a draft's
 * screenshot follows its edits; ten at once stay within the page limit while the API answers;
 * a page that never ends is stopped at the time limit; without a browser, BROWSER_UNAVAILABLE;
 * bad input is a clear error.
 */
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import type { Browser } from 'playwright-core'
import { browserSkip, launchChromium } from '../helpers/browser.ts'
import { siteWithCollection } from '../helpers/content.ts'
import { assertError, createSite, createUser } from '../helpers/factories.ts'
import { connect } from '../helpers/mcp.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'
import { WebVisitor } from '../helpers/web.ts'

const page = (title: string, body: string, head = '') =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title>${head}</head><body>${body}</body></html>`

/**
 * The nice value of each process of the browsers this one drives (Linux), by pid: the browser
 * started over a pipe, and every process under it (zygotes, renderers, the GPU process).
 */
function browserNiceness(): Map<number, number> {
  const processes = new Map<number, { parent: number; nice: number; driven: boolean }>()
  for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      const driven = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').includes('--remote-debugging-pipe')
      // After the command: state, parent, …; the nice value is the 19th field of the line, the 17th after the command.
      processes.set(Number(entry), { parent: Number(fields[1]), nice: Number(fields[16]), driven })
    } catch {
      // Gone meanwhile.
    }
  }
  const ours = new Set([...processes].filter(([, p]) => p.parent === process.pid && p.driven).map(([pid]) => pid))
  for (let grew = true; grew;) {
    grew = false
    for (const [pid, p] of processes) {
      if (ours.has(p.parent) && !ours.has(pid)) {
        ours.add(pid)
        grew = true
      }
    }
  }
  return new Map([...ours].map((pid) => [pid, processes.get(pid)!.nice]))
}

const KNOWN_PAGE = page(
  'Known page',
  '<h1>Known page</h1><p>Text on a page.</p>',
  '<style>body{margin:0;background:#fff;font-family:sans-serif} h1{background:#1a5fb4;color:#fff;padding:40px;margin:0}</style>',
)

/** Decodes a PNG in a browser tab: its size and how much its pixels vary (0 for a blank image). */
async function imageFacts(browser: Browser, png: Buffer): Promise<{ width: number; height: number; variance: number }> {
  const tab = await browser.newPage()
  try {
    return await tab.evaluate(async (base64) => {
      const image = await createImageBitmap(await (await fetch(`data:image/png;base64,${base64}`)).blob())
      const canvas = new OffscreenCanvas(image.width, image.height)
      const context = canvas.getContext('2d')!
      context.drawImage(image, 0, 0)
      const { data } = context.getImageData(0, 0, image.width, image.height)
      let sum = 0
      let squares = 0
      const count = data.length / 4
      for (let i = 0; i < data.length; i += 4) {
        const luma = (data[i]! + data[i + 1]! + data[i + 2]!) / 3
        sum += luma
        squares += luma * luma
      }
      const mean = sum / count
      return { width: image.width, height: image.height, variance: squares / count - mean * mean }
    }, png.toString('base64'))
  } finally {
    await tab.close()
  }
}

async function png(server: TestServer, token: string, path: string) {
  const response = await fetch(server.url + path, { headers: { authorization: `Bearer ${token}` } })
  const bytes = Buffer.from(await response.arrayBuffer())
  return { status: response.status, type: response.headers.get('content-type'), bytes, text: bytes.toString('utf8') }
}

for (const store of STORES) {
  describe(`screenshots and browser reports (${store.name})`, { skip: browserSkip || store.skip }, () => {
    let server: TestServer
    let decoder: Browser
    let other: http.Server
    let otherOrigin: string
    let otherHits = 0

    before(async () => {
      other = http.createServer((_req, res) => {
        otherHits++
        res.writeHead(200, { 'Access-Control-Allow-Origin': '*' }).end('{}')
      })
      await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve))
      otherOrigin = `http://127.0.0.1:${(other.address() as AddressInfo).port}`
      // Pages get two minutes: the browser runs below the priority of the test processes beside
      // it, which may keep both cores busy. (Elsewhere, the dashboards' thumbnails keep the
      // instance's 15 s, so a page waiting for them is not held up longer under load.)
      server = await startTestServer(store.name, { PLINTH_BROWSER_PAGE_SECONDS: '120' })
      decoder = await launchChromium()
    })
    after(async () => {
      await decoder?.close()
      await server?.close()
      other?.close()
    })

    test('a screenshot of a known page is the viewport’s size and not blank, on a desktop and a phone', async () => {
      const site = await createSite(server, { files: [{ path: 'index.html', content: KNOWN_PAGE }] })
      const base = `/v1/websites/${site.websiteId}/versions/${site.version}/screenshot`
      for (const [viewport, width, height] of [
        ['desktop', 1280, 800],
        ['mobile', 390, 844],
      ] as const) {
        const shot = await png(server, site.owner.token, `${base}?path=/&viewport=${viewport}&fullPage=false`)
        assert.equal(shot.status, 200, shot.text)
        assert.equal(shot.type, 'image/png')
        const facts = await imageFacts(decoder, shot.bytes)
        assert.deepEqual([facts.width, facts.height], [width, height], viewport)
        assert.ok(facts.variance > 100, `${viewport}: the image shows something (variance ${facts.variance})`)
      }
      // By version id too, and the whole page.
      const full = await png(server, site.owner.token, `/v1/websites/${site.websiteId}/versions/${site.jobId}/screenshot?fullPage=true`)
      assert.equal(full.status, 200, full.text)
      assert.equal((await imageFacts(decoder, full.bytes)).width, 1280)
    })

    test('a page that reaches another host gets nothing, and the report names the request; script errors and policy refusals are reported', async () => {
      const script = `
        fetch('${otherOrigin}/data.json').catch(() => {})
        const compile = window['Func' + 'tion']
        try { compile('return 1')() } catch (e) { console.error('compiling refused: ' + e.name) }
        setTimeout(() => { throw new Error('boom from the page') })`
      const site = await createSite(server, {
        files: [
          { path: 'index.html', content: page('Reaching out', `<h1>Out</h1><img alt="far" src="${otherOrigin}/far.png"><script src="app.js"></script>`) },
          { path: 'app.js', content: script },
        ],
      })
      const report = await server.api('GET', `/v1/websites/${site.websiteId}/versions/${site.version}/browser-report?path=/`, { token: site.owner.token })
      assert.equal(report.status, 200, report.text)
      const body = report.body
      assert.equal(body.status, 200)
      assert.equal(body.title, 'Reaching out')
      assert.equal(body.path, '/')
      assert.equal(body.viewport, 'desktop')
      assert.ok(Number.isInteger(body.loadMs) && body.loadMs >= 0)
      const failed = body.failedRequests.map((r: { url: string }) => r.url)
      assert.ok(failed.includes(`${otherOrigin}/far.png`), JSON.stringify(body.failedRequests))
      assert.ok(failed.includes(`${otherOrigin}/data.json`), JSON.stringify(body.failedRequests))
      assert.equal(otherHits, 0, 'the other host got no request')
      const messages = body.consoleErrors.map((e: { message: string }) => e.message).join('\n')
      assert.match(messages, /compiling refused: EvalError/)
      assert.match(messages, /boom from the page/)
      assert.ok(
        body.policyViolations.some((v: { directive: string; blockedUrl: string }) => v.directive === 'script-src' && v.blockedUrl === 'eval'),
        JSON.stringify(body.policyViolations),
      )
    })

    test('a layout wider than a phone scrolls sideways at the mobile width, not at the desktop width', async () => {
      const site = await createSite(server, {
        files: [{ path: 'index.html', content: page('Wide', '<div style="width:1000px;height:20px;background:#333"></div>') }],
      })
      const ask = (viewport: string) =>
        server.api('GET', `/v1/websites/${site.websiteId}/versions/${site.version}/browser-report?path=/&viewport=${viewport}`, { token: site.owner.token })
      const mobile = await ask('mobile')
      assert.equal(mobile.status, 200, mobile.text)
      assert.equal(mobile.body.horizontalOverflow, true)
      assert.equal(mobile.body.viewport, 'mobile')
      assert.equal((await ask('desktop')).body.horizontalOverflow, false)
    })

    test("a draft's screenshot changes after an edit, and a protected site is shown to its owner without its password", async () => {
      const site = await createSite(server, { files: [{ path: 'index.html', content: KNOWN_PAGE }] })
      const password = await server.api('PUT', `/v1/websites/${site.websiteId}/password`, {
        token: site.owner.token,
        body: { password: 'a long site password' },
      })
      assert.ok(password.status < 300, password.text)
      const draft = await server.api('POST', `/v1/websites/${site.websiteId}/drafts`, { token: site.owner.token })
      assert.equal(draft.status, 201, draft.text)
      const shot = () => png(server, site.owner.token, `/v1/websites/${site.websiteId}/versions/${draft.body.draftId}/screenshot`)
      const before = await shot()
      assert.equal(before.status, 200, before.text)
      const report = await server.api('GET', `/v1/websites/${site.websiteId}/versions/${draft.body.draftId}/browser-report`, { token: site.owner.token })
      assert.equal(report.body.title, 'Known page', 'the page itself, not the password page')
      const edited = await server.api('PUT', `/v1/websites/${site.websiteId}/drafts/${draft.body.draftId}/files/index.html`, {
        token: site.owner.token,
        body: { content: KNOWN_PAGE.replace('#1a5fb4', '#c01c28').replace('Known page</h1>', 'Edited page</h1>') },
      })
      assert.ok(edited.status < 300, edited.text)
      const after = await shot()
      assert.equal(after.status, 200, after.text)
      assert.ok(!after.bytes.equals(before.bytes), 'the screenshot shows the edit')
      assert.ok((await shot()).bytes.equals(after.bytes), 'and is kept while the draft stays as it is')
    })

    test("a page showing a collection's entries is taken again after an entry changes", async () => {
      const { user, websiteId, base } = await siteWithCollection(server, 'posts')
      const put = async (slug: string, title: string) => {
        const res = await server.api('PUT', `${base}/entries/${slug}`, { token: user.token, body: { data: { title } } })
        assert.ok(res.status === 200 || res.status === 201, res.text)
      }
      await put('first', 'First entry')
      const report = () => server.api('GET', `/v1/websites/${websiteId}/versions/1/browser-report?path=/posts-first`, { token: user.token })
      const shot = () => png(server, user.token, `/v1/websites/${websiteId}/versions/1/screenshot?path=/posts-first`)
      const before = await shot()
      assert.equal(before.status, 200, before.text)
      assert.match((await report()).body.title, /^First entry\b/)
      assert.ok((await shot()).bytes.equals(before.bytes), 'kept while nothing changes')
      await put('first', 'Renamed entry with a much longer title than before')
      assert.match((await report()).body.title, /^Renamed entry with a much longer title than before\b/, 'the report sees the new entry')
      const after = await shot()
      assert.equal(after.status, 200, after.text)
      assert.ok(!after.bytes.equals(before.bytes), 'the screenshot shows it too')
    })

    test('ten screenshots at once stay within the page limit while the API goes on answering', async (t) => {
      const site = await createSite(server, { files: [{ path: 'index.html', content: KNOWN_PAGE }] })
      const views = server.server.services.pageViews
      const limit = server.config.browserPages
      const shots = Array.from({ length: 10 }, (_, i) =>
        png(server, site.owner.token, `/v1/websites/${site.websiteId}/versions/1/screenshot?path=/%3Fn%3D${i}`),
      )
      let done = false
      const all = Promise.all(shots).finally(() => (done = true))
      const latencies: number[] = []
      let mostRunning = 0
      while (!done) {
        const started = performance.now()
        const index = await server.api('GET', '/v1')
        latencies.push(performance.now() - started)
        assert.equal(index.status, 200)
        mostRunning = Math.max(mostRunning, views.stats().running)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      const results = await all
      for (const result of results) assert.equal(result.status, 200, result.text)
      assert.ok(latencies.length > 1, 'GET /v1 answered while the screenshots were taken')
      assert.ok(mostRunning <= limit && views.stats().mostRunning <= limit, `at most ${limit} pages at once (${views.stats().mostRunning})`)
      assert.ok(views.stats().mostRunning >= 1)
      t.diagnostic(`GET /v1 answered ${latencies.length} times, slowest ${Math.round(Math.max(...latencies))} ms`)
      if (process.platform === 'linux') {
        const niceness = browserNiceness()
        t.diagnostic(`browser processes: ${[...niceness].map(([pid, nice]) => `${pid} at ${nice}`).join(', ')}`)
        assert.ok(niceness.size >= 2, 'the browser runs as a process of the server, with the processes it started')
        // The browser and its zygotes at 10; a renderer Chromium starts for a navigation may come up
        // at its own background priority (5) until the next page lowers it: below the server's, always.
        for (const [pid, nice] of niceness) assert.ok(nice >= 5, `the browser's process ${pid} runs below the server's priority (nice ${nice})`)
      }
    })

    test('the MCP SDK 1.x client receives screenshot_page as image content with the report', async () => {
      const site = await createSite(server, { files: [{ path: 'index.html', content: KNOWN_PAGE }] })
      const client = await connect(server, site.owner.token, { client: 'sdk1', toolsets: 'default,browser' })
      try {
        const result = await client.callTool({ name: 'screenshot_page', arguments: { websiteId: site.websiteId, versionId: site.jobId, viewport: 'mobile' } })
        assert.notEqual(result.isError, true, JSON.stringify(result.content))
        const [image, text] = result.content as Array<{ type: string; data?: string; mimeType?: string; text?: string }>
        assert.equal(image?.type, 'image')
        assert.equal(image?.mimeType, 'image/png')
        const facts = await imageFacts(decoder, Buffer.from(image.data!, 'base64'))
        assert.equal(facts.width, 390)
        assert.equal(text?.type, 'text')
        assert.equal(JSON.parse(text.text!).title, 'Known page')
        assert.equal((result.structuredContent as { viewport: string }).viewport, 'mobile')
        const missing = await client.callTool({ name: 'screenshot_page', arguments: { websiteId: site.websiteId, versionId: '9', path: '/' } })
        assert.equal(missing.isError, true)
        assert.match(JSON.stringify(missing.content), /NOT_FOUND/)
      } finally {
        await client.close()
      }
    })

    test("the dashboard shows each live site's and each version's thumbnail, and a version's browser report, to its people only", async () => {
      const owner = await server.user()
      const site = await createSite(server, { owner, files: [{ path: 'index.html', content: KNOWN_PAGE }] })
      const person = new WebVisitor(server)
      await person.signIn(owner.email)
      const thumbnail = `/dashboard/sites/${site.websiteId}/versions/1/thumbnail.png`
      assert.ok((await person.get('/dashboard')).text.includes(`src="${thumbnail}"`), 'the sites list shows the live site')
      assert.ok((await person.get(`/dashboard/sites/${site.websiteId}`)).text.includes(`src="${thumbnail}"`), 'the versions list shows it')
      const versionPage = await person.get(`/dashboard/sites/${site.websiteId}/versions/1`)
      assert.ok(versionPage.text.includes(`src="${thumbnail}"`))
      assert.ok(versionPage.text.includes(`href="/dashboard/sites/${site.websiteId}/versions/1/browser-report"`), 'the report is linked beside the preview')
      const image = await person.get(thumbnail, { accept: 'image/png' })
      assert.equal(image.status, 200)
      assert.equal(image.headers.get('content-type'), 'image/png')
      const report = await person.get(`/dashboard/sites/${site.websiteId}/versions/1/browser-report`)
      assert.equal(report.status, 200, report.text)
      assert.match(report.text, /On a phone/)
      assert.match(report.text, /<td>Known page<\/td>/)
      const stranger = new WebVisitor(server)
      await stranger.signIn((await server.user()).email)
      assert.equal((await stranger.get(thumbnail, { accept: 'image/png' })).status, 404)
      assert.equal((await stranger.get(`/dashboard/sites/${site.websiteId}/versions/1/browser-report`)).status, 404)
    })

    test('an unknown site, version, draft or path is 404; a bad viewport, fullPage or path is 422; nothing is loaded for them', async () => {
      const site = await createSite(server, { files: [{ path: 'index.html', content: KNOWN_PAGE }] })
      const stranger = await createUser(server)
      const base = `/v1/websites/${site.websiteId}/versions`
      const get = (path: string, token = site.owner.token) => server.api('GET', path, { token })
      const launches = server.server.services.pageViews.stats().launches
      assertError(await get(`${base}/7/screenshot`), 404, 'NOT_FOUND', /^This website has no version 7\./)
      assertError(await get(`${base}/job_nope/browser-report`), 404, 'NOT_FOUND')
      assertError(await get(`${base}/drf_nope/screenshot`), 404, 'NOT_FOUND')
      assertError(await get(`${base}/1/screenshot?path=/missing.html`), 404, 'NOT_FOUND', /missing\.html/)
      assertError(await get(`${base}/1/browser-report`, stranger.token), 404, 'NOT_FOUND')
      assertError(await get(`/v1/websites/web_nope/versions/1/screenshot`), 404, 'NOT_FOUND')
      assertError(await get(`${base}/1/screenshot?viewport=tablet`), 422, 'VALIDATION_FAILED', /viewport/)
      assertError(await get(`${base}/1/screenshot?fullPage=maybe`), 422, 'VALIDATION_FAILED', /fullPage/)
      assertError(await get(`${base}/1/browser-report?path=index.html`), 422, 'VALIDATION_FAILED', /path/)
      assertError(await get(`${base}/1/browser-report?path=/%0a`), 422, 'VALIDATION_FAILED', /path/)
      assertError(await get(`${base}/1/browser-report?path=/&zoom=2`), 422, 'VALIDATION_FAILED', /zoom/)
      assert.equal(server.server.services.pageViews.stats().launches, launches, 'no browser was started for them')
    })
  })
}

// Every page here outlasts the short limit, however busy the machine: a page that ends would not
// be sure to end within 3 s while other test processes keep the cores busy.
describe('a page that never ends', { skip: browserSkip }, () => {
  let server: TestServer
  before(async () => {
    server = await startTestServer('sqlite', { PLINTH_BROWSER_PAGE_SECONDS: '3' })
  })
  after(async () => {
    await server?.close()
  })

  test('is stopped at the time limit and answered PAGE_UNRESPONSIVE, each time; the same browser takes the next page', async () => {
    const site = await createSite(server, {
      files: [
        { path: 'index.html', content: page('Busy', '<h1>Busy</h1><script src="busy.js"></script>') },
        { path: 'busy.js', content: 'for (;;) {}' },
      ],
    })
    const base = `/v1/websites/${site.websiteId}/versions/${site.version}`
    const busy = await server.api('GET', `${base}/browser-report?path=/`, { token: site.owner.token })
    assertError(busy, 422, 'PAGE_UNRESPONSIVE', /^The page \/ kept the browser busy past 3 seconds and was stopped: look for a script that never ends\.$/)
    const { launches } = server.server.services.pageViews.stats()
    assert.equal(launches, 1)
    // Not kept: asked again, the page is loaded again by the same browser (none launched anew), and stopped again.
    assertError(await server.api('GET', `${base}/screenshot?path=/`, { token: site.owner.token }), 422, 'PAGE_UNRESPONSIVE')
    assertError(await server.api('GET', `${base}/browser-report?path=/&viewport=mobile`, { token: site.owner.token }), 422, 'PAGE_UNRESPONSIVE')
    const stats = server.server.services.pageViews.stats()
    assert.equal(stats.launches, launches, 'the same browser took the next pages')
    assert.equal(stats.running, 0, 'no page is left running')
  })
})

describe('without a browser', () => {
  for (const [setting, message] of [
    ['off', /PLINTH_BROWSER=off/],
    ['/nonexistent/chromium', /No browser at \/nonexistent\/chromium/],
  ] as const) {
    test(`PLINTH_BROWSER=${setting}: screenshots and reports are 503 BROWSER_UNAVAILABLE saying how to enable one`, async () => {
      const server = await startTestServer('sqlite', { PLINTH_BROWSER: setting })
      try {
        const owner = await server.user()
        const site = await createSite(server, { owner })
        for (const kind of ['screenshot', 'browser-report']) {
          const res = await server.api('GET', `/v1/websites/${site.websiteId}/versions/1/${kind}`, { token: site.owner.token })
          assertError(res, 503, 'BROWSER_UNAVAILABLE', message)
          assert.match(res.body.error.message, /apt-get install chromium|PLINTH_BROWSER/)
        }
        // The rest of the site works as ever, and the dashboard shows no thumbnails.
        assert.equal((await server.site(site.slug)).status, 200)
        const person = new WebVisitor(server)
        await person.signIn(owner.email)
        const dashboard = await person.get('/dashboard')
        assert.equal(dashboard.status, 200)
        assert.doesNotMatch(dashboard.text, /thumbnail\.png/)
        assert.doesNotMatch((await person.get(`/dashboard/sites/${site.websiteId}/versions/1`)).text, /thumbnail\.png|browser-report/)
      } finally {
        await server.close()
      }
    })
  }
})
