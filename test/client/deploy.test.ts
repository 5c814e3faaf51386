/**
 * `plinth deploy` against a real server over HTTP: a folder becomes a new site, a second deploy of
 * the same folder sends no file bytes, a one-file change sends that file, large files go through
 * upload URLs, a refused folder prints every violation and stores nothing, and --json prints one
 * object and nothing else.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { run } from '../../src/client/main.ts'
import { UPLOAD_FROM_BYTES } from '../../src/client/deploy.ts'
import { createUser, PNG, sha256, type TestUser } from '../helpers/factories.ts'
import { freePort } from '../helpers/net.ts'
import { StandInBrowser } from '../helpers/stand-in-browser.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

const page = (title: string, extra = '') =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title><link rel="stylesheet" href="/assets/site.css"></head><body><h1>${title}</h1>${extra}<img src="/assets/img/logo.png" alt="Logo"></body></html>`

/** Writes files (path to content) under a new temp folder; returns its path. */
function folderWith(files: Record<string, string | Buffer>): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'plinth-deploy-'))
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true })
    writeFileSync(path.join(root, file), content)
  }
  return root
}

/** Runs a `plinth` client command in-process; what it printed and its exit code. */
async function plinth(server: TestServer, user: Pick<TestUser, 'token'>, args: string[], env: Record<string, string> = {}) {
  const out: string[] = []
  const err: string[] = []
  const code = await run(args, {
    out: (text) => out.push(text),
    err: (text) => err.push(text),
    interactive: false,
    env: { PLINTH_URL: server.url, PLINTH_TOKEN: user.token, ...env },
    cwd: os.tmpdir(),
  })
  return { code, out: out.join('\n'), err: err.join('\n') }
}

const deploy = (server: TestServer, user: Pick<TestUser, 'token'>, args: string[]) => plinth(server, user, ['deploy', ...args])

const json = (text: string) => JSON.parse(text) as Record<string, any>

for (const store of STORES) {
  describe(`plinth deploy (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    let owner: TestUser
    const folders: string[] = []
    const folder = (files: Record<string, string | Buffer>) => {
      const root = folderWith(files)
      folders.push(root)
      return root
    }
    before(async () => {
      // Upload URLs name the API's base URL, so it must be the address the server listens on.
      const port = await freePort()
      server = await startTestServer(store.name, { PORT: String(port), PLINTH_BASE_URL: `http://127.0.0.1:${port}` })
      owner = await createUser(server)
    })
    after(async () => {
      await server?.close()
      for (const root of folders) rmSync(root, { recursive: true, force: true })
    })

    const SITE = {
      'index.html': page('Home'),
      'about/index.html': page('About'),
      'assets/site.css': 'body { font-family: serif; }',
      'assets/img/logo.png': PNG,
      _redirects: '/old /about 301',
      '.DS_Store': 'finder',
      '.git/HEAD': 'ref: refs/heads/main',
      'node_modules/left-pad/index.js': 'module.exports = 1',
      'notes/todo.md': 'not for the site',
      '.plinthignore': 'notes/\n*.map\n',
      'assets/site.css.map': '{}',
      '.well-known/security.txt': 'Contact: mailto:security@example.com',
    }

    test('a folder becomes a new site; skipped files stay home; a second deploy sends no bytes; a one-file change sends that file', async () => {
      const root = folder(SITE)
      const first = await deploy(server, owner, [root, '--name', 'Deployed', '--json'])
      assert.equal(first.code, 0, first.err)
      const result = json(first.out)
      assert.equal(result.version, 1)
      assert.equal(result.isCurrent, true)
      assert.equal(result.filesSent, 6)
      assert.equal(result.filesReused, 0)
      assert.match(result.pageUrl, new RegExp(`^http://${result.slug}\\.`))
      assert.match(result.versionId, /^job_/)
      const site = (await server.api('GET', `/v1/websites/${result.websiteId}`, { token: owner.token })).body
      assert.equal(site.name, 'Deployed')
      const paths = site.versions[0].files.map((f: { originalName: string }) => f.originalName).sort()
      assert.deepEqual(
        paths,
        ['.well-known/security.txt', '_redirects', 'about/index.html', 'assets/img/logo.png', 'assets/site.css', 'index.html'].sort().concat().sort(),
      )
      const logo = await server.site(result.slug, '/assets/img/logo.png')
      assert.equal(sha256(logo.body), sha256(PNG), 'the binary is served byte for byte')
      assert.equal((await server.site(result.slug, '/old')).status, 301)

      const again = json((await deploy(server, owner, [root, '--site', result.slug, '--json'])).out)
      assert.equal(again.version, 2)
      assert.equal(again.filesSent, 0)
      assert.equal(again.bytesSent, 0)
      assert.equal(again.filesReused, 6)

      const changed = page('Home, changed')
      writeFileSync(path.join(root, 'index.html'), changed)
      const third = json((await deploy(server, owner, [root, '--site', result.websiteId, '--json', '--message', 'New title'])).out)
      assert.equal(third.version, 3)
      assert.equal(third.filesSent, 1)
      assert.equal(third.bytesSent, Buffer.byteLength(changed))
      assert.match((await server.site(result.slug, '/')).body.toString(), /Home, changed/)
    })

    test('large files go through upload URLs and are served byte for byte', async () => {
      const big = randomBytes(UPLOAD_FROM_BYTES + 1000)
      const root = folder({ 'index.html': page('Big'), 'assets/site.css': 'p{}', 'assets/img/logo.png': PNG, 'files/data.bin': big })
      const done = await deploy(server, owner, [root, '--json'])
      assert.equal(done.code, 0, done.err + done.out)
      const result = json(done.out)
      assert.equal(result.filesSent, 4)
      assert.equal(result.bytesSent, big.length + Buffer.byteLength(page('Big')) + 3 + PNG.length)
      assert.equal(sha256((await server.site(result.slug, '/files/data.bin')).body), sha256(big))
    })

    test('--preview stores the version for review; the live site stays', async () => {
      const root = folder({ 'index.html': page('One'), 'assets/site.css': 'p{}', 'assets/img/logo.png': PNG })
      const first = json((await deploy(server, owner, [root, '--json'])).out)
      writeFileSync(path.join(root, 'index.html'), page('Two'))
      const human = await deploy(server, owner, [root, '--site', first.slug, '--preview'])
      assert.equal(human.code, 0, human.err)
      assert.match(human.out, new RegExp(`Stored version 2 of ${first.slug} for review: http://${first.slug}--v2\\.`))
      assert.match(human.out, /1 file sent \(\d+ B\), 2 reused/)
      assert.match((await server.site(first.slug, '/')).body.toString(), /<h1>One<\/h1>/, 'live stays version 1')
      assert.match((await server.site(`${first.slug}--v2`, '/')).body.toString(), /<h1>Two<\/h1>/)
    })

    test('a folder that breaks rules prints every violation, exits 2, and nothing is sent', async () => {
      const root = folder({
        'home.html': '<html><script src="https://cdn.example.com/x.js"></script></html>',
        'frame.html': '<html><body><iframe src="https://example.com"></iframe></body></html>',
      })
      const before = (await server.api('GET', '/v1/websites', { token: owner.token })).body.items.length
      const refused = await deploy(server, owner, [root])
      assert.equal(refused.code, 2)
      assert.match(refused.err, /nothing was sent/)
      for (const code of ['MISSING_INDEX', 'EXTERNAL_URL', 'IFRAME']) assert.match(refused.err, new RegExp(`^  ${code}`, 'm'), code)
      assert.equal(refused.out, '')
      const asJson = await deploy(server, owner, [root, '--json'])
      assert.equal(asJson.code, 2)
      const envelope = json(asJson.out)
      assert.equal(envelope.error.code, 'PUBLISH_INVALID')
      // The very violations the server states for the same files.
      const files = ['frame.html', 'home.html'].map((file) => ({ path: file, content: readFileSync(path.join(root, file), 'utf8') }))
      const byServer = await server.api('POST', '/v1/websites', { token: owner.token, body: { category: 'other', files } })
      assert.equal(byServer.status, 422)
      assert.deepEqual(envelope.error.violations, byServer.body.error.violations)
      assert.equal(asJson.err, '', '--json prints nothing but its one object')
      assert.equal((await server.api('GET', '/v1/websites', { token: owner.token })).body.items.length, before, 'no site was made')
    })

    test('the limits are the ones the server states: 41 files are refused here, before sending', async () => {
      const files: Record<string, string> = { 'index.html': page('Many') }
      for (let i = 1; i <= 40; i++) files[`notes/${i}.txt`] = `note ${i}`
      const refused = await deploy(server, owner, [folder(files), '--json'])
      assert.equal(refused.code, 2)
      const { violations } = json(refused.out).error
      assert.equal(violations[0].code, 'TOO_MANY_FILES')
      assert.match(violations[0].message, /41 files.*at most 40/)
    })

    test('sites, versions, promote and open cover the rest of a deploy', async () => {
      const user = await createUser(server)
      const root = folder({ 'index.html': page('First'), 'assets/site.css': 'p{}', 'assets/img/logo.png': PNG })
      const first = json((await deploy(server, user, [root, '--name', 'Bakery', '--json'])).out)
      writeFileSync(path.join(root, 'index.html'), page('Second'))
      await deploy(server, user, [root, '--site', first.slug, '--message', 'Spring menu'])

      const sites = await plinth(server, user, ['sites'])
      assert.equal(sites.code, 0, sites.err)
      assert.match(sites.out, new RegExp(`^${first.slug}  owner  http://${first.slug}\\.\\S+  Bakery$`))
      assert.deepEqual(
        json((await plinth(server, user, ['sites', '--json'])).out).map((s: { id: string }) => s.id),
        [first.websiteId],
      )

      const versions = await plinth(server, user, ['versions', first.slug])
      assert.equal(versions.code, 0, versions.err)
      const lines = versions.out.split('\n')
      assert.match(lines[0]!, /^\* 2 .* Spring menu$/, 'newest first, the live one marked')
      assert.match(lines[1]!, /^ {2}1 /)

      const rolledBack = await plinth(server, user, ['promote', first.slug, '1'])
      assert.equal(rolledBack.code, 0, rolledBack.err)
      assert.match(rolledBack.out, new RegExp(`^Version 1 of ${first.slug} is live: http://`))
      assert.match((await server.site(first.slug, '/')).body.toString(), /<h1>First<\/h1>/)
      const badVersion = await plinth(server, user, ['promote', first.slug, 'latest'])
      assert.equal(badVersion.code, 1)
      assert.match(badVersion.err, /VERSION is a version number or id/)

      // BROWSER names the program that opens the URL: here one that notes it in a file.
      const browser = new StandInBrowser(folder({}))
      const open = await plinth(server, user, ['open', first.slug], { BROWSER: browser.command })
      assert.equal(open.code, 0, open.err)
      assert.equal(open.out, first.pageUrl)
      assert.equal(await browser.openedUrl(), first.pageUrl)
      assert.equal((await plinth(server, user, ['frobnicate'])).code, 1)
    })

    test('a bad token, an unknown site, a missing folder and a bad option each exit 1 with one clear line', async () => {
      const root = folder({ 'index.html': page('X') })
      const badToken = await deploy(server, { token: 'plinth_nope' }, [root])
      assert.equal(badToken.code, 1)
      assert.match(badToken.err, /^plinth: /)
      const unknown = await deploy(server, owner, [root, '--site', 'no-such-site-here'])
      assert.equal(unknown.code, 1)
      assert.match(unknown.err, /No site with the slug no-such-site-here/)
      const stranger = await createUser(server)
      const mine = json((await deploy(server, owner, [root, '--json'])).out)
      const notTheirs = await deploy(server, stranger, [root, '--site', mine.websiteId, '--json'])
      assert.equal(notTheirs.code, 1)
      assert.equal(json(notTheirs.out).error.code, 'NOT_FOUND')
      const missing = await deploy(server, owner, [path.join(root, 'nope')])
      assert.equal(missing.code, 1)
      assert.match(missing.err, /no such folder/)
      const badOption = await deploy(server, owner, [root, '--frobnicate'])
      assert.equal(badOption.code, 1)
      assert.match(badOption.err, /Unknown option '--frobnicate'/)
    })
  })
}
