/**
 * `plinth deploy --vendor`, run as a process: a folder whose page names a CDN's script, its
 * stylesheet (with a font) and an image is published with those files in the bundle, fetched
 * from this machine; the command says what it brought in (stderr, or `vendored` with --json).
 * A reference that cannot be brought in exits 2, naming it, with nothing published.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { promisify } from 'node:util'
import { createUser, PNG, type TestUser } from '../helpers/factories.ts'
import { freePort } from '../helpers/net.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'
import { FONT, SCRIPT, startVendorHost, vendoredPage, type VendorHost } from '../helpers/vendor-host.ts'

const execute = promisify(execFile)
const BIN = path.resolve(import.meta.dirname, '../../bin/plinth.js')

describe('plinth deploy --vendor, run as a process', () => {
  let host: VendorHost
  let server: TestServer
  let owner: TestUser
  let root: string
  before(async () => {
    host = await startVendorHost()
    // The server is not allowed to reach the CDN: the command fetches, not the server.
    // Its base URL is where it listens: a font larger than UPLOAD_FROM_BYTES goes through an upload URL.
    const port = await freePort()
    server = await startTestServer('sqlite', { PORT: String(port), PLINTH_BASE_URL: `http://127.0.0.1:${port}` })
    owner = await createUser(server)
    root = mkdtempSync(path.join(os.tmpdir(), 'plinth-deploy-vendor-'))
    mkdirSync(path.join(root, 'site', 'docs'), { recursive: true })
    writeFileSync(path.join(root, 'site', 'index.html'), vendoredPage(host.origin))
    writeFileSync(
      path.join(root, 'site', 'docs', 'index.html'),
      `<!doctype html><html lang="en"><title>Docs</title><img src="${host.origin}/img/logo.png" alt="Logo">`,
    )
    mkdirSync(path.join(root, 'broken'))
    writeFileSync(path.join(root, 'broken', 'index.html'), `<!doctype html><title>Broken</title><script src="${host.origin}/loop.js"></script>`)
  })
  after(async () => {
    await server?.close()
    await host?.close()
    rmSync(root, { recursive: true, force: true })
  })

  async function plinth(args: string[]) {
    const env = { PATH: process.env.PATH, HOME: root, PLINTH_URL: server.url, PLINTH_TOKEN: owner.token }
    try {
      const { stdout, stderr } = await execute(process.execPath, [BIN, ...args], { env, cwd: root })
      return { code: 0, stdout, stderr }
    } catch (error) {
      const e = error as { code: number; stdout: string; stderr: string }
      return { code: e.code, stdout: e.stdout, stderr: e.stderr }
    }
  }

  test('brings the files in, publishes a site serving them, and lists them in --json', async () => {
    const done = await plinth(['deploy', 'site', '--vendor', '--json'])
    assert.equal(done.code, 0, done.stderr + done.stdout)
    assert.equal(done.stderr, '')
    const result = JSON.parse(done.stdout)
    const folder = `_vendor/127.0.0.1_${new URL(host.origin).port}`
    assert.deepEqual(result.vendored.map((f: { url: string; path: string }) => [f.url, f.path]).sort(), [
      [`${host.origin}/css/site.css`, `${folder}/css/site.css`],
      [`${host.origin}/fonts/mono.ttf`, `${folder}/fonts/mono.ttf`],
      [`${host.origin}/img/logo.png`, `${folder}/img/logo.png`],
      [`${host.origin}/lib/app.js`, `${folder}/lib/app.js`],
    ])
    assert.equal(result.filesSent, 6)
    assert.equal((await server.site(result.slug, `/${folder}/lib/app.js`)).body.toString(), SCRIPT)
    assert.deepEqual((await server.site(result.slug, `/${folder}/fonts/mono.ttf`)).body, FONT)
    assert.deepEqual((await server.site(result.slug, `/${folder}/img/logo.png`)).body, PNG)
    assert.match((await server.site(result.slug, '/docs/')).body.toString(), new RegExp(`<img src="\\.\\./${folder}/img/logo\\.png" alt="Logo">`))
    // The folder on disk is left as it was.
    assert.match(readFileSync(path.join(root, 'site', 'index.html'), 'utf8'), new RegExp(`href="${host.origin}/css/site.css"`))

    const again = await plinth(['deploy', 'site', '--vendor', '--site', result.slug])
    assert.equal(again.code, 0, again.stderr)
    assert.match(again.stderr, new RegExp(`^Brought in ${host.origin}/lib/app\\.js as ${folder}/lib/app\\.js \\(\\d+ B\\)$`, 'm'))
    assert.match(again.stdout, /0 files sent \(0 B\), 6 reused/)
  })

  test('a reference that cannot be brought in exits 2 naming it, and nothing is published', async () => {
    const sites = (await server.api('GET', '/v1/websites', { token: owner.token })).body.items.length
    const refused = await plinth(['deploy', 'broken', '--vendor', '--yes'])
    assert.equal(refused.code, 2, refused.stderr)
    assert.match(refused.stderr, new RegExp(`^  VENDOR_FETCH_FAILED index\\.html: ${host.origin}/loop\\.js redirected more than 5 times; gave up\\.`, 'm'))
    assert.equal((await server.api('GET', '/v1/websites', { token: owner.token })).body.items.length, sites)
  })
})
