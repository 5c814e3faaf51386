/**
 * `plinth login` and `plinth logout` as people run them: the real command as a process against a
 * real server, the person in Debian's Chromium. The browser flow (PKCE, a loopback redirect, the
 * browser opened through BROWSER) and the device flow (a code entered on the server's device
 * page) each store a login that `plinth sites` then uses, renewed when it expired; logout revokes
 * it at the server and removes it. A wrong state on the loopback redirect, a denied consent and
 * an expired device code each end the command with one line and exit 1, with nothing stored.
 *
 * The server runs with PLINTH_BASE_URL = PLINTH_SITE_URL = http://127.0.0.1:{port}: the address
 * the command is given, the issuer and the web site are one origin that Chromium reaches too.
 */
import assert from 'node:assert/strict'
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import type { Browser, Page } from 'playwright-core'
import { browserSkip, launchChromium, seriousAxeViolations } from '../helpers/browser.ts'
import { freePort } from '../helpers/net.ts'
import { bundle, startTestServer, TEST_PASSWORD, type TestServer } from '../helpers/server.ts'
import { StandInBrowser } from '../helpers/stand-in-browser.ts'
import { STORES } from '../helpers/stores.ts'

const BIN = path.resolve(import.meta.dirname, '../../bin/plinth.js')
const execute = promisify(execFile)
const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
})

/** A `plinth` process running in the background: its output so far, and its end. */
class Command {
  stdout = ''
  stderr = ''
  readonly exited: Promise<number>

  constructor(readonly child: ChildProcess) {
    child.stdout!.on('data', (chunk: Buffer) => (this.stdout += chunk.toString()))
    child.stderr!.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()))
    this.exited = new Promise((resolve) => child.on('exit', (code) => resolve(code ?? -1)))
  }

  /** The first group of `pattern` once stderr has it. */
  async stderrMatch(pattern: RegExp): Promise<RegExpExecArray> {
    for (let i = 0; i < 600; i++) {
      const match = pattern.exec(this.stderr)
      if (match) return match
      if (this.child.exitCode !== null) break
      await sleep(50)
    }
    throw new Error(`stderr never matched ${pattern}: ${this.stderr}`)
  }
}

/** A person's machine: a home of its own (the config folder in it) and a BROWSER command that notes the URL it is given. */
class Machine {
  readonly root = mkdtempSync(path.join(os.tmpdir(), 'plinth-login-'))
  readonly config = path.join(this.root, 'config')
  readonly browser = new StandInBrowser(this.root)

  constructor(readonly url: string) {}

  get loginFile(): string {
    return path.join(this.config, 'plinth', 'login.json')
  }

  /** No DISPLAY: without BROWSER this machine has no browser to open. */
  env(withBrowser: boolean): NodeJS.ProcessEnv {
    return { PATH: process.env.PATH, HOME: this.root, XDG_CONFIG_HOME: this.config, ...(withBrowser && { BROWSER: this.browser.command }) }
  }

  start(args: string[], withBrowser = true): Command {
    this.browser.reset()
    return new Command(spawn(process.execPath, [BIN, ...args], { env: this.env(withBrowser), cwd: this.root, stdio: ['ignore', 'pipe', 'pipe'] }))
  }

  async run(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
    try {
      const { stdout, stderr } = await execute(process.execPath, [BIN, ...args], { env: { ...this.env(false), ...env }, cwd: this.root })
      return { code: 0, stdout, stderr }
    } catch (error) {
      const e = error as { code: number; stdout: string; stderr: string }
      return { code: e.code, stdout: e.stdout, stderr: e.stderr }
    }
  }

  /** The URL the command handed to BROWSER. */
  async openedUrl(): Promise<URL> {
    return new URL(await this.browser.openedUrl())
  }

  stored(): any {
    return JSON.parse(readFileSync(this.loginFile, 'utf8'))
  }

  remove(): void {
    rmSync(this.root, { recursive: true, force: true })
  }
}

/** The one line of a failure: the last line of stderr, and no other that starts like it. */
function failureLine(stderr: string): string {
  const lines = stderr.trim().split('\n')
  assert.equal(lines.filter((line) => line.startsWith('plinth:')).length, 1, stderr)
  return lines.at(-1)!
}

for (const { name, skip } of STORES) {
  describe(`plinth login and logout (${name})`, { skip: skip || browserSkip }, () => {
    let server: TestServer
    let base: string
    let browser: Browser
    let user: { email: string; token: string }
    let websiteId: string
    const machines: Machine[] = []
    const machine = () => {
      const made = new Machine(base)
      machines.push(made)
      return made
    }

    before(async () => {
      const port = await freePort()
      base = `http://127.0.0.1:${port}`
      server = await startTestServer(name, { PORT: String(port), PLINTH_BASE_URL: base, PLINTH_SITE_URL: base })
      user = await server.user()
      const published = await server.api('POST', '/v1/websites', { token: user.token, body: { name: 'Login Cafe', category: 'other', files: bundle() } })
      assert.equal(published.status, 201, published.text)
      websiteId = published.body.websiteId
      browser = await launchChromium()
    })
    after(async () => {
      await browser?.close()
      await server?.close()
      for (const made of machines) made.remove()
    })

    const newPage = async (): Promise<Page> => (await browser.newContext()).newPage()

    async function signIn(page: Page): Promise<void> {
      await page.getByLabel('Email', { exact: true }).fill(user.email)
      await page.getByLabel('Password', { exact: true }).fill(TEST_PASSWORD)
      await page.getByRole('button', { name: 'Sign in' }).click()
      await page.waitForURL((url) => url.pathname !== '/sign-in')
    }

    const rest = (token: string) => server.api('GET', '/v1/websites', { token })
    /** Ends every browser session at the authorization server, as half an hour without a visit does. */
    const endBrowserSessions = () =>
      server.server.db.kysely
        .updateTable('oauth_models')
        .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
        .where('model', '=', 'Session')
        .execute()
    const mcp = async (token: string) => {
      const res = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
        body: INIT,
      })
      await res.body?.cancel()
      return res.status
    }

    test('the browser flow: the person signs in and allows in Chromium, the command stores the login and plinth sites uses it', async () => {
      const home = machine()
      const login = home.start(['login', '--url', base])
      const authorization = await home.openedUrl()
      assert.equal(authorization.origin + authorization.pathname, `${base}/oauth/authorize`)
      assert.equal(authorization.searchParams.get('code_challenge_method'), 'S256')
      assert.equal(authorization.searchParams.get('resource'), base, 'the token is asked for the REST API')
      assert.match(authorization.searchParams.get('redirect_uri') ?? '', /^http:\/\/127\.0\.0\.1:\d+\/callback$/)

      const page = await newPage()
      await page.goto(authorization.href)
      await signIn(page)
      assert.match(new URL(page.url()).pathname, /^\/connect\//)
      await page.getByRole('button', { name: 'Allow' }).click()
      await page.waitForURL((url) => url.hostname === '127.0.0.1' && url.pathname === '/callback')
      assert.match(await page.locator('body').innerText(), /Signed in/)
      await page.context().close()

      assert.equal(await login.exited, 0, login.stderr)
      assert.match(login.stdout, new RegExp(`^Signed in to ${base}\\.`))
      assert.equal(statSync(home.loginFile).mode & 0o777, 0o600, 'the login file is the owner’s only')
      assert.equal(statSync(path.dirname(home.loginFile)).mode & 0o777, 0o700, 'and so is its folder')
      const stored = home.stored()
      assert.equal(stored.url, base)
      assert.ok(stored.refreshToken, 'a refresh token is stored')
      assert.ok(Date.parse(stored.expiresAt) > Date.now())

      const sites = await home.run(['sites', '--json'])
      assert.equal(sites.code, 0, sites.stderr)
      assert.deepEqual(
        JSON.parse(sites.stdout).map((site: { id: string }) => site.id),
        [websiteId],
      )
      assert.equal((await rest(stored.accessToken)).status, 200, 'the token reaches /v1')
      assert.equal(await mcp(stored.accessToken), 200, 'and /mcp')

      // A login outlives the person's browser session at the authorization server.
      await endBrowserSessions()
      assert.equal((await rest(stored.accessToken)).status, 200, 'the token works with the browser session over')

      // An expired access token is renewed with the refresh token before the command runs.
      writeFileSync(home.loginFile, JSON.stringify({ ...stored, expiresAt: new Date(Date.now() - 1000).toISOString() }))
      const renewed = await home.run(['versions', websiteId])
      assert.equal(renewed.code, 0, renewed.stderr)
      const after = home.stored()
      assert.notEqual(after.accessToken, stored.accessToken)
      assert.notEqual(after.refreshToken, stored.refreshToken, 'the refresh token rotated')
      assert.equal(statSync(home.loginFile).mode & 0o777, 0o600)

      // The stored token goes to its own server only.
      const elsewhere = await home.run(['sites', '--url', 'http://127.0.0.1:9'])
      assert.equal(elsewhere.code, 1)
      assert.match(failureLine(elsewhere.stderr), /signed in to http:\/\/127\.0\.0\.1:\d+, not http:\/\/127\.0\.0\.1:9/)

      const out = await home.run(['logout'])
      assert.equal(out.code, 0, out.stderr)
      assert.equal(existsSync(home.loginFile), false, 'the file is removed')
      const refused = await rest(after.accessToken)
      assert.equal(refused.status, 401, 'the token is revoked')
      assert.equal(refused.body.error.code, 'AUTH_REQUIRED')
      assert.equal(await mcp(after.accessToken), 401)
      const again = await home.run(['logout'])
      assert.equal(again.code, 0, 'logging out twice is no failure')
      assert.match(again.stdout, /Not signed in/)
      const signedOut = await home.run(['sites'])
      assert.equal(signedOut.code, 1)
      assert.match(failureLine(signedOut.stderr), /not signed in: run plinth login/)
    })

    test('the device flow: the person enters the code in Chromium, checks it, signs in and allows', async () => {
      const box = machine()
      const login = box.start(['login', '--url', base, '--device'])
      const [, verification, userCode] = await login.stderrMatch(/open (\S+) on any device and enter the code\s+([A-Z]{4}-[A-Z]{4})/)
      assert.equal(verification, `${base}/oauth/device`)

      const page = await newPage()
      await page.goto(verification)
      assert.deepEqual(await seriousAxeViolations(page), [], 'the code page is accessible')
      await page.getByLabel('Code').fill('BBBB-BBBB')
      await page.getByRole('button', { name: 'Continue' }).click()
      assert.match(await page.getByRole('alert').innerText(), /No sign-in waits for this code/, 'a wrong code is said so')
      await page.getByLabel('Code').fill(userCode!)
      await page.getByRole('button', { name: 'Continue' }).click()
      assert.equal(await page.locator('.device-code code').innerText(), userCode, 'the code is shown to compare')
      assert.match(await page.locator('main').innerText(), /Plinth CLI on /)
      assert.deepEqual(await seriousAxeViolations(page), [], 'and so is the check page')
      await page.getByRole('button', { name: 'Continue' }).click()
      await page.waitForURL((url) => url.pathname === '/sign-in')
      await signIn(page)
      await page.getByRole('button', { name: 'Allow' }).click()
      await page.waitForURL((url) => url.pathname.startsWith('/oauth/device/'))
      assert.match(await page.locator('h1').innerText(), /Device signed in/)
      await page.context().close()
      // The command may poll only now: the code still turns into tokens with the browser session over.
      await endBrowserSessions()

      assert.equal(await login.exited, 0, login.stderr)
      assert.equal(statSync(box.loginFile).mode & 0o777, 0o600)
      const sites = await box.run(['sites'])
      assert.equal(sites.code, 0, sites.stderr)
      assert.match(sites.stdout, /login-cafe/)
      const { accessToken } = box.stored()
      assert.equal((await rest(accessToken)).status, 200)
      const out = await box.run(['logout'])
      assert.equal(out.code, 0, out.stderr)
      assert.equal((await rest(accessToken)).status, 401, 'logout revoked it')
    })

    test('a wrong state on the loopback redirect ends the login with one line, nothing stored', async () => {
      const home = machine()
      const login = home.start(['login', '--url', base])
      const redirect = new URL((await home.openedUrl()).searchParams.get('redirect_uri')!)
      redirect.search = new URLSearchParams({ code: 'forged', state: 'not-the-state', iss: base }).toString()
      const answer = await fetch(redirect)
      assert.equal(answer.status, 400)
      assert.equal(await login.exited, 1)
      assert.match(failureLine(login.stderr), /^plinth: login failed: .*state does not match.*nothing was stored/)
      assert.equal(existsSync(home.loginFile), false)
    })

    test('a denied consent ends the login with one line, nothing stored', async () => {
      const home = machine()
      const login = home.start(['login', '--url', base])
      const page = await newPage()
      await page.goto((await home.openedUrl()).href)
      await signIn(page)
      await page.getByRole('button', { name: 'Deny' }).click()
      await page.waitForURL((url) => url.pathname === '/callback')
      await page.context().close()
      assert.equal(await login.exited, 1)
      assert.match(failureLine(login.stderr), /^plinth: login failed: the sign-in was denied in the browser; nothing was stored$/)
      assert.equal(existsSync(home.loginFile), false)
    })

    test('an expired device code ends the login with one line, nothing stored; no browser here means the device flow', async () => {
      const box = machine()
      const login = box.start(['login', '--url', base], false)
      await login.stderrMatch(/No browser to open here/)
      await login.stderrMatch(/enter the code\s+[A-Z]{4}-[A-Z]{4}/)
      await server.server.db.kysely
        .updateTable('oauth_models')
        .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
        .where('model', '=', 'DeviceCode')
        .where('consumed_at', 'is', null)
        .execute()
      assert.equal(await login.exited, 1)
      assert.match(failureLine(login.stderr), /^plinth: login failed: the sign-in code expired before anyone confirmed it; nothing was stored/)
      assert.equal(existsSync(box.loginFile), false)
    })
  })
}
