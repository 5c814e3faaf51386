import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { promisify } from 'node:util'
import { createUser, sha256 } from '../helpers/factories.ts'
import { bundle, startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

const run = promisify(execFile)
const BIN = path.resolve(import.meta.dirname, '../../bin/plinth.js')

for (const store of STORES) {
  // Each test uses emails of its own, so they run at once: every command is a process of its own.
  describe(`plinth admin commands (${store.name})`, { skip: store.skip, concurrency: true }, () => {
    let server: TestServer

    /** Runs the real command against the server's own store; never throws. */
    async function plinth(...args: string[]) {
      const env = { ...process.env, PLINTH_DATA_DIR: server.store.dataDir, DATABASE_URL: server.store.databaseUrl ?? '' }
      try {
        const { stdout, stderr } = await run(process.execPath, [BIN, ...args], { env })
        return { code: 0, lastLine: stdout.trim().split('\n').at(-1) ?? '', stdout, stderr }
      } catch (error) {
        const e = error as { code: number; stdout: string; stderr: string }
        return { code: e.code, lastLine: e.stdout.trim().split('\n').at(-1) ?? '', stdout: e.stdout, stderr: e.stderr }
      }
    }

    before(async () => {
      server = await startTestServer(store.name)
    })
    after(() => server?.close())

    test('user create prints the new id; the same email again fails clearly', async () => {
      const created = await plinth('user', 'create', '--email', 'Ann@Example.com', '--password', 'long enough', '--name', 'Ann')
      assert.equal(created.code, 0, created.stderr)
      assert.match(created.lastLine, /^usr_[A-Za-z0-9]{22}$/)

      const again = await plinth('user', 'create', '--email', 'ann@example.com', '--password', 'long enough')
      assert.notEqual(again.code, 0)
      assert.match(again.stderr, /already exists/)
    })

    test('user create refuses a short password and a missing email', async () => {
      const short = await plinth('user', 'create', '--email', 'x@example.com', '--password', 'short')
      assert.notEqual(short.code, 0)
      assert.match(short.stderr, /password: must be at least 8 characters/)
      const missing = await plinth('user', 'create', '--password', 'long enough')
      assert.notEqual(missing.code, 0)
      assert.match(missing.stderr, /--email is required/)
    })

    test('token create prints a token that works on the REST API, limited to its access', async () => {
      await createUser(server, { email: 'tok@example.com' })
      const both = await plinth('token', 'create', '--email', 'tok@example.com', '--name', 'laptop')
      assert.equal(both.code, 0, both.stderr)
      assert.match(both.lastLine, /^plinth_[A-Za-z0-9]{43}$/)
      assert.equal((await server.api('GET', '/v1/websites', { token: both.lastLine })).status, 200)

      const mcpOnly = await plinth('token', 'create', '--email', 'tok@example.com', '--access', 'mcp')
      assert.equal(mcpOnly.code, 0)
      const refused = await server.api('GET', '/v1/websites', { token: mcpOnly.lastLine })
      assert.equal(refused.status, 403)
      assert.equal(refused.body.error.code, 'TOKEN_NOT_ALLOWED')
    })

    test('token create fails for an unknown email and a bad access value', async () => {
      const unknown = await plinth('token', 'create', '--email', 'nobody@example.com')
      assert.notEqual(unknown.code, 0)
      assert.match(unknown.stderr, /No user with the email nobody@example.com/)
      await createUser(server, { email: 'acc@example.com' })
      const bad = await plinth('token', 'create', '--email', 'acc@example.com', '--access', 'admin')
      assert.notEqual(bad.code, 0)
      assert.match(bad.stderr, /access: must be one of rest, mcp, both/)
    })

    test('token create --capabilities --sites makes a token limited to them, which token list shows', async () => {
      const owner = await createUser(server, { email: 'scoped@example.com' })
      const mine = await server.api('POST', '/v1/websites', { token: owner.token, body: { category: 'other', files: bundle() } })
      const other = await server.api('POST', '/v1/websites', { token: owner.token, body: { category: 'other', files: bundle() } })
      const created = await plinth('token', 'create', '--email', 'scoped@example.com', '--capabilities', 'read,preview', '--sites', mine.body.websiteId)
      assert.equal(created.code, 0, created.stderr)
      const token = created.lastLine
      assert.equal((await server.api('GET', `/v1/websites/${mine.body.websiteId}`, { token })).status, 200)
      assert.equal((await server.api('GET', `/v1/websites/${other.body.websiteId}`, { token })).status, 404)
      const live = await server.api('POST', `/v1/websites/${mine.body.websiteId}/versions`, { token, body: { files: bundle() } })
      assert.equal(live.status, 403)
      assert.equal(live.body.error.code, 'TOKEN_NOT_ALLOWED')
      const listed = await plinth('token', 'list', '--email', 'scoped@example.com')
      assert.match(listed.stdout, new RegExp(`\\tcapabilities read,preview\\tsites ${mine.body.websiteId}\\t`))
      assert.match(listed.stdout, /\tcapabilities all\tsites all\t/)
    })

    test('token create refuses an unknown capability or a site that is not the person’s, and creates nothing', async () => {
      await createUser(server, { email: 'badscope@example.com' })
      const stranger = await createUser(server)
      const foreign = await server.api('POST', '/v1/websites', { token: stranger.token, body: { category: 'other', files: bundle() } })
      const unknown = await plinth('token', 'create', '--email', 'badscope@example.com', '--capabilities', 'read,deploy')
      assert.notEqual(unknown.code, 0)
      assert.match(unknown.stderr, /capabilities: names unknown capabilities \(deploy\)/)
      const notMine = await plinth('token', 'create', '--email', 'badscope@example.com', '--sites', `${foreign.body.websiteId},web_missing`)
      assert.notEqual(notMine.code, 0)
      assert.match(notMine.stderr, new RegExp(`sites: names websites you neither own nor edit \\(${foreign.body.websiteId}, web_missing\\)`))
      // A list flag given empty (an unset shell variable) never makes a token without that limit.
      for (const [flag, value] of [
        ['--capabilities', ''],
        ['--capabilities', ' , '],
        ['--sites', ''],
      ]) {
        const empty = await plinth('token', 'create', '--email', 'badscope@example.com', flag!, value!)
        assert.equal(empty.code, 2, `${flag} ${JSON.stringify(value)}: ${empty.stderr}`)
        assert.match(empty.stderr, new RegExp(`${flag} names nothing: leave it out for a token without that limit`))
      }
      assert.equal((await plinth('token', 'list', '--email', 'badscope@example.com')).lastLine, '1 token')
    })

    test('token list shows tokens without their secret; token revoke makes a token stop working', async () => {
      await server.server.services.users.create({ email: 'rev@example.com', password: 'long enough' })
      const token = (await plinth('token', 'create', '--email', 'rev@example.com', '--name', 'ci')).lastLine
      const listed = await plinth('token', 'list', '--email', 'rev@example.com')
      assert.equal(listed.code, 0)
      assert.equal(listed.lastLine, '1 token')
      assert.ok(!listed.stdout.includes(token), 'the secret is never shown again')
      const tokenId = listed.stdout.split('\t')[0]!
      assert.match(tokenId, /^tok_/)

      assert.equal((await plinth('token', 'revoke', tokenId)).code, 0)
      const afterRevoke = await server.api('GET', '/v1/websites', { token })
      assert.equal(afterRevoke.status, 401)
      assert.match((await plinth('token', 'list', '--email', 'rev@example.com')).stdout, /\trevoked\t/)
      const twice = await plinth('token', 'revoke', tokenId)
      assert.notEqual(twice.code, 0)
      assert.match(twice.stderr, /No live token/)
    })

    test('site share makes a user an editor who then sees and publishes the site', async () => {
      const owner = await server.user()
      const { email: editorEmail, token: editorToken } = await createUser(server, { email: 'editor@example.com' })
      const site = await server.api('POST', '/v1/websites', { token: owner.token, body: { name: 'Shared', category: 'other', files: bundle() } })
      assert.equal(site.status, 201)

      assert.equal((await server.api('GET', `/v1/websites/${site.body.websiteId}`, { token: editorToken })).status, 404)
      const shared = await plinth('site', 'share', site.body.websiteId, '--email', editorEmail, '--role', 'editor')
      assert.equal(shared.code, 0, shared.stderr)
      const seen = await server.api('GET', `/v1/websites/${site.body.websiteId}`, { token: editorToken })
      assert.equal(seen.status, 200)
      assert.equal(seen.body.role, 'editor')
    })

    test('site share invites an email without an account; `user create` with it makes the editor', async () => {
      const owner = await server.user()
      const site = await server.api('POST', '/v1/websites', { token: owner.token, body: { name: 'Later', category: 'other', files: bundle() } })
      assert.equal(site.status, 201, site.text)
      const invited = await plinth('site', 'share', site.body.websiteId, '--email', ' Ghost@Example.com ', '--role', 'editor')
      assert.equal(invited.code, 0, invited.stderr)
      assert.equal(
        invited.lastLine,
        `ghost@example.com has no account yet: invited as editor of ${site.body.websiteId} (takes effect when they sign up with this email)`,
      )
      assert.equal((await plinth('user', 'create', '--email', 'ghost@example.com', '--password', 'long enough')).code, 0)
      const token = (await plinth('token', 'create', '--email', 'ghost@example.com')).lastLine
      const seen = await server.api('GET', `/v1/websites/${site.body.websiteId}`, { token })
      assert.equal(seen.status, 200)
      assert.equal(seen.body.role, 'editor')
    })

    test('site share fails clearly for an unknown site, a bad role, and the owner', async () => {
      const owner = await server.user()
      const site = await server.api('POST', '/v1/websites', { token: owner.token, body: { category: 'other', files: bundle() } })
      await createUser(server, { email: 'someone@example.com' })

      const unknownSite = await plinth('site', 'share', 'web_doesnotexist', '--email', 'someone@example.com', '--role', 'editor')
      assert.notEqual(unknownSite.code, 0)
      assert.match(unknownSite.stderr, /Website web_doesnotexist not found/)
      const badRole = await plinth('site', 'share', site.body.websiteId, '--email', 'someone@example.com', '--role', 'owner')
      assert.notEqual(badRole.code, 0)
      assert.match(badRole.stderr, /role: must be "editor"/)
      const self = await plinth('site', 'share', site.body.websiteId, '--email', owner.email, '--role', 'editor')
      assert.notEqual(self.code, 0)
      assert.match(self.stderr, /already owns/)
    })

    test('an unknown command or flag prints the usage and exits non-zero', async () => {
      const unknown = await plinth('site', 'delete', 'x')
      assert.equal(unknown.code, 2)
      assert.match(unknown.stderr, /Usage:/)
      const badFlag = await plinth('user', 'create', '--email', 'a@b.co', '--password', 'long enough', '--admin', 'yes')
      assert.equal(badFlag.code, 2)
      assert.match(badFlag.stderr, /Unknown option '--admin'/)
    })

    test('blobs sweep removes what a crash left behind, keeps published blobs, and prints what it freed', async () => {
      const owner = await server.user()
      const site = await server.api('POST', '/v1/websites', { token: owner.token, body: { name: 'Swept', category: 'other', files: bundle('Swept') } })
      assert.equal(site.status, 201, site.text)
      const old = new Date(Date.now() - 2 * 60 * 60 * 1000)
      const blobs = path.join(server.store.dataDir, 'blobs')
      await server.server.blobVariants.settled() // no variant's temp file is renamed under the walk
      for (const file of readdirSync(blobs, { recursive: true })) utimesSync(path.join(blobs, String(file)), old, old) // published, and old
      const bytes = randomBytes(4096)
      const hash = sha256(bytes)
      const dir = path.join(blobs, hash.slice(0, 2))
      mkdirSync(dir, { recursive: true })
      for (const [name, content] of [
        [hash, bytes],
        [`${hash}.1234567890ab.tmp`, bytes.subarray(0, 100)],
      ] as const) {
        writeFileSync(path.join(dir, name), content)
        utimesSync(path.join(dir, name), old, old)
      }

      const swept = await plinth('blobs', 'sweep')
      assert.equal(swept.code, 0, swept.stderr)
      assert.match(swept.lastLine, /^blobs sweep: freed 1 unreferenced blob \(1 files, 4096 bytes, .*\) and 1 temp file \(100 bytes\); kept \d+ blobs?$/)
      assert.equal(existsSync(path.join(dir, hash)), false)
      const page = await server.site(site.body.slug, '/')
      assert.equal(page.status, 200)
      assert.match(page.body.toString(), /Swept/)

      const again = await plinth('blobs', 'sweep')
      assert.match(again.lastLine, /^blobs sweep: freed 0 unreferenced blobs \(0 files, 0 bytes/)
    })
  })
}
