/**
 * In real Chromium: what the authoring rules accept on a page also works under the served
 * Content-Security-Policy (images, fonts and fetch from another origin, same-site workers and
 * WebAssembly), what they refuse is refused by the browser too, and what they warn of is what
 * the browser blocks; a site's own policy from `_headers` narrows Plinth's and never widens it.
 */
import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import type { Browser } from 'playwright-core'
import { browserSkip, launchChromium } from '../helpers/browser.ts'
import { PNG, PNG_BASE64 } from '../helpers/factories.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'

// A WebAssembly module exporting add(a: i32, b: i32): i32.
const ADD_WASM = Buffer.from([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x07, 0x01, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f, 0x03, 0x02, 0x01, 0x00, 0x07, 0x07, 0x01, 0x03, 0x61,
  0x64, 0x64, 0x00, 0x00, 0x0a, 0x09, 0x01, 0x07, 0x00, 0x20, 0x00, 0x20, 0x01, 0x6a, 0x0b,
])

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

  /** Publishes the files as a new site and opens its home page in a new tab. */
  async function open(files: Array<{ path: string; content: string; contentEncoding?: 'base64' }>) {
    const user = await server.user()
    const created = await server.api('POST', '/v1/websites', { token: user.token, body: { category: 'other', files } })
    assert.equal(created.status, 201, created.text)
    const tab = await browser.newPage()
    await tab.goto(`http://${created.body.slug}.localhost:${new URL(server.url).port}/`)
    return { created, tab }
  }

  test('same-site dedicated, module, shared and blob: workers and WebAssembly run; a service worker does not register', async () => {
    const results = `<!doctype html><title>workers</title>
<script>
  window.violations = []
  document.addEventListener('securitypolicyviolation', (e) => window.violations.push(e.violatedDirective + ' ' + e.blockedURI))
</script>
<script type="module" src="main.js"></script>`
    const main = `
const answer = (worker) => new Promise((resolve, reject) => {
  worker.onmessage = (e) => resolve(e.data)
  worker.onerror = (e) => reject(new Error('worker failed: ' + (e.message || 'no message')))
})
const classic = new Worker('w.js')
classic.postMessage(20)
// As Vite bundles a worker.
const module = new Worker(new URL('m.js', import.meta.url), { type: 'module' })
module.postMessage(1)
const shared = new SharedWorker('s.js')
const sharedAnswer = new Promise((resolve) => { shared.port.onmessage = (e) => resolve(e.data) })
shared.port.postMessage(7)
const blob = new Worker(URL.createObjectURL(new Blob(['postMessage("from a blob")'], { type: 'text/javascript' })))
const wasm = fetch('add.wasm').then((r) => r.arrayBuffer()).then((bytes) => WebAssembly.instantiate(bytes)).then(({ instance }) => instance.exports.add(2, 3))
// Out of the rules' sight, as bundled or obfuscated code may be.
const container = navigator[['service', 'Worker'].join('')]
const registration = container[['reg', 'ister'].join('')]('sw.js').then(() => 'registered', (e) => 'refused: ' + e.message)
window.results = Promise.all([answer(classic), answer(module), sharedAnswer, answer(blob), wasm, registration]).then(
  async ([classic, module, shared, blob, wasm, registration]) => ({ classic, module, shared, blob, wasm, registration, registrations: (await container.getRegistrations()).length }),
  (e) => ({ error: String(e) }),
)`
    const { created, tab } = await open([
      { path: 'index.html', content: results },
      { path: 'main.js', content: main },
      { path: 'w.js', content: 'onmessage = (e) => postMessage(e.data * 2)' },
      { path: 'add.js', content: 'export const add = (a, b) => a + b' },
      // A module worker that imports a module and instantiates WebAssembly itself.
      {
        path: 'm.js',
        content: `import { add } from './add.js'
onmessage = async (e) => {
  const { instance } = await WebAssembly.instantiate(await (await fetch('add.wasm')).arrayBuffer())
  postMessage(add(e.data, instance.exports.add(1, 1)))
}`,
      },
      { path: 's.js', content: 'onconnect = (e) => { const port = e.ports[0]; port.onmessage = (m) => port.postMessage(m.data + 1) }' },
      { path: 'add.wasm', content: ADD_WASM.toString('base64'), contentEncoding: 'base64' },
      { path: 'sw.js', content: "self.addEventListener('fetch', () => {})" },
    ])
    try {
      assert.deepEqual(
        created.body.warnings.filter((w: { code: string }) => w.code === 'BLOCKED_BY_POLICY' || w.code === 'MIXED_CONTENT'),
        [],
        'nothing the browser will block',
      )
      const results = await tab.evaluate(() => (window as unknown as { results: Promise<unknown> }).results)
      assert.deepEqual(results, {
        classic: 40,
        module: 3,
        shared: 8,
        blob: 'from a blob',
        wasm: 5,
        registration: (results as { registration: string }).registration,
        registrations: 0,
      })
      assert.match((results as { registration: string }).registration, /^refused: .*403/, 'the script request was refused')
      assert.deepEqual(await tab.evaluate(() => (window as unknown as { violations: string[] }).violations), [], 'no CSP violation')
    } finally {
      await tab.close()
    }
  })

  test('every spelling the publish warns of as BLOCKED_BY_POLICY is refused by Chromium under the served policy', async () => {
    // Each line compiles a string into code in its own way; each must be warned of and refused.
    const spellings = [
      "eval('1')",
      "window.eval('1')",
      "globalThis.eval('1')",
      "self['eval']('1')",
      "(0, eval)('1')",
      "Function('return 1')()",
      "new Function('return 1')()",
      "new (Object.getPrototypeOf(async function () {}).constructor)('return 1')",
      "new (Object.getPrototypeOf(function* () {}).constructor)('yield 1')",
    ]
    const timers = ["setTimeout('window.ran = true', 0)", "setInterval('window.ran = true', 0)"]
    const script = `window.violations = []
document.addEventListener('securitypolicyviolation', (e) => window.violations.push(e.effectiveDirective))
window.blocked = []
${spellings.map((code) => `try { ${code}; window.blocked.push(false) } catch (e) { window.blocked.push(e instanceof EvalError) }`).join('\n')}
${timers.join('\n')}`
    const { created, tab } = await open([
      { path: 'index.html', content: '<!doctype html><title>eval</title><script src="app.js"></script>' },
      { path: 'app.js', content: script },
    ])
    try {
      assert.equal(created.body.warnings.filter((w: { code: string }) => w.code === 'BLOCKED_BY_POLICY').length, spellings.length + timers.length, created.text)
      assert.deepEqual(
        await tab.evaluate(() => (window as unknown as { blocked: boolean[] }).blocked),
        spellings.map(() => true),
        'each refused with an EvalError',
      )
      // A string timer is dropped with a report, not an exception.
      await tab.waitForFunction((count) => (window as unknown as { violations: string[] }).violations.length >= count, spellings.length + timers.length)
      const violations = await tab.evaluate(() => (window as unknown as { violations: string[] }).violations)
      assert.deepEqual(new Set(violations), new Set(['script-src']))
      assert.equal(await tab.evaluate(() => (window as unknown as { ran?: boolean }).ran), undefined, 'no timer ran its string')
    } finally {
      await tab.close()
    }
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
      created.body.warnings.filter((w: { code: string }) => w.code === 'BLOCKED_BY_POLICY' || w.code === 'MIXED_CONTENT').map((w: { code: string }) => w.code),
      ['BLOCKED_BY_POLICY'],
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

  test("a site's own policy narrows what Plinth's policy allows, and Plinth's policy still holds", async () => {
    const page = `<!doctype html><title>two policies</title>
<img id="own" src="/a.png"><img id="remote" src="${otherOrigin}/a.png">
<script>
  window.violations = []
  document.addEventListener('securitypolicyviolation', (e) => window.violations.push(e.violatedDirective))
  window.evaluated = (() => { try { return eval('1 + 1') } catch { return 'blocked' } })()
</script>`
    const { tab } = await open([
      { path: 'index.html', content: page },
      { path: 'a.png', content: PNG_BASE64, contentEncoding: 'base64' },
      { path: '_headers', content: "/*\n  Content-Security-Policy: img-src 'self'\n" },
    ])
    try {
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
