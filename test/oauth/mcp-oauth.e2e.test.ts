/**
 * Plinth as the OAuth 2.1 authorization server of MCP clients, end to end: the official MCP
 * TypeScript SDK clients (1.x `@modelcontextprotocol/sdk` and v2 `@modelcontextprotocol/client`)
 * discover the server from the 401 of POST /mcp, register themselves (dynamic client
 * registration), send the person to the authorization endpoint in real Chromium, where the person
 * signs in on the web site and allows the app, and get the code back on their loopback redirect
 * URI, exchange it, and then use MCP (and the REST API) with the access token. With SDK 1.x also:
 * refresh-token rotation, reuse detection (which revokes the grant), remembered consent, and
 * disconnecting the app on the dashboard. The discovery documents are checked over plain HTTP too.
 * The v2 client has the same OAuthClientProvider / UnauthorizedError / finishAuth API as 1.x.
 *
 * The server is started with PLINTH_BASE_URL = PLINTH_SITE_URL = http://127.0.0.1:{port}: the
 * issuer, the resource (`{base}/mcp`), the web site and the address the SDKs and Chromium reach are
 * then one and the same origin, and a loopback one, which the v2 SDK accepts over plain http. One
 * store (SQLite), as the other browser suite.
 */
import assert from 'node:assert/strict'
import http from 'node:http'
import net from 'node:net'
import { after, before, describe, test } from 'node:test'
import {
  Client as V2Client,
  type OAuthClientProvider as V2OAuthClientProvider,
  StreamableHTTPClientTransport as V2Transport,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
  UnauthorizedError as V2UnauthorizedError,
} from '@modelcontextprotocol/client'
import {
  auth as sdk1Auth,
  discoverAuthorizationServerMetadata,
  type OAuthClientProvider as Sdk1OAuthClientProvider,
  refreshAuthorization,
  registerClient as sdk1RegisterClient,
  UnauthorizedError as Sdk1UnauthorizedError,
} from '@modelcontextprotocol/sdk/client/auth.js'
import { Client as Sdk1Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport as Sdk1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { InvalidGrantError } from '@modelcontextprotocol/sdk/server/auth/errors.js'
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js'
import type { Browser, ConsoleMessage, Page, Response as PageResponse } from 'playwright-core'
import { browserSkip, launchChromium, seriousAxeViolations } from '../helpers/browser.ts'
import { freePort } from '../helpers/net.ts'
import { bundle, startTestServer, type TestServer } from '../helpers/server.ts'

const PASSWORD = 'correct horse battery'
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
})

/**
 * The MCP client's loopback redirect URI, as a desktop client runs it: a small HTTP server on
 * 127.0.0.1 that takes the browser's redirect and hands its query (`code`, `iss`, `state`) over.
 */
class LoopbackCallback {
  private waiting: Array<(url: URL) => void> = []
  private readonly server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', this.uri)
    // Only the redirect itself: the browser also asks this origin for /favicon.ico after it lands,
    // sometimes once the next authorization is already waiting here.
    if (url.pathname !== new URL(this.uri).pathname) {
      res.writeHead(404).end()
      return
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end('<!doctype html><title>Connected</title><p>You can close this window.</p>')
    for (const resolve of this.waiting.splice(0)) resolve(url)
  })
  uri = ''

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve))
    this.uri = `http://127.0.0.1:${(this.server.address() as net.AddressInfo).port}/callback`
  }

  /** The next redirect the browser makes to this server's redirect URI. */
  next(): Promise<URL> {
    return new Promise((resolve) => this.waiting.push(resolve))
  }

  close(): Promise<void> {
    this.server.closeAllConnections()
    return new Promise((resolve) => this.server.close(() => resolve()))
  }
}

/** What one authorization in the browser went through, and the redirect it ended with. */
interface BrowserAuthorization {
  /** Pages the person was shown and answered, in order: 'sign-in', 'consent'. */
  shown: Array<'sign-in' | 'consent'>
  /** Every top-level navigation response, as `status path`: shows which pages were skipped. */
  navigations: string[]
  /** The query of the redirect to the loopback redirect URI. */
  params: URLSearchParams
}

/**
 * A person at a browser: opens the authorization URL an MCP client hands over, signs in on the
 * web site when asked, clicks "Allow" on the consent page when shown, and ends on the client's
 * loopback redirect URI.
 */
class Person {
  /** Serious or critical axe-core violations found on the consent pages shown. */
  readonly consentViolations: string[] = []
  /** The boxes (by label) the person unticks on the consent page before "Allow"; none: they allow what the app asked. */
  untick: RegExp[] = []

  constructor(
    readonly page: Page,
    readonly email: string,
    private readonly callback: LoopbackCallback,
  ) {}

  async authorize(authorizationUrl: URL): Promise<BrowserAuthorization> {
    const shown: BrowserAuthorization['shown'] = []
    const navigations: string[] = []
    const onResponse = (response: PageResponse) => {
      if (response.request().isNavigationRequest() && response.frame() === this.page.mainFrame()) {
        navigations.push(`${response.status()} ${new URL(response.url()).pathname}`)
      }
    }
    const consoleMessages: string[] = []
    const onConsole = (message: ConsoleMessage) => void consoleMessages.push(message.text())
    this.page.on('response', onResponse)
    this.page.on('console', onConsole)
    /** Waits for the browser to leave a page; says where it is stuck and what the console said if it does not. */
    const leave = async (left: (url: URL) => boolean, what: string) => {
      try {
        await this.page.waitForURL(left)
      } catch {
        throw new Error(
          `${what}: the browser stayed on ${this.page.url()} (navigations: ${navigations.join(', ')}; console: ${consoleMessages.join(' | ') || 'nothing'})`,
        )
      }
    }
    try {
      const redirected = this.callback.next()
      await this.page.goto(authorizationUrl.href)
      for (let step = 0; step < 4 && !this.page.url().startsWith(this.callback.uri); step++) {
        const here = new URL(this.page.url())
        if (here.pathname === '/sign-in') {
          shown.push('sign-in')
          await this.page.getByLabel('Email', { exact: true }).fill(this.email)
          await this.page.getByLabel('Password', { exact: true }).fill(PASSWORD)
          await this.page.getByRole('button', { name: 'Sign in' }).click()
          await leave((url) => url.pathname !== '/sign-in', 'after "Sign in"')
        } else if (here.pathname.startsWith('/connect/')) {
          shown.push('consent')
          this.consentViolations.push(...(await seriousAxeViolations(this.page)))
          for (const label of this.untick) await this.page.getByRole('checkbox', { name: label }).uncheck()
          await this.page.getByRole('button', { name: 'Allow' }).click()
          await leave((url) => !url.pathname.startsWith('/connect/'), 'after "Allow"')
        } else {
          const text = await this.page
            .locator('body')
            .innerText()
            .catch(() => '')
          throw new Error(`the browser stopped on ${this.page.url()}: ${text.slice(0, 500)}`)
        }
      }
      assert.ok(this.page.url().startsWith(this.callback.uri), `the browser ends on the redirect URI, not ${this.page.url()}`)
      const url = await redirected
      return { shown, navigations, params: url.searchParams }
    } finally {
      this.page.off('response', onResponse)
      this.page.off('console', onConsole)
    }
  }
}

/**
 * An in-memory OAuth client provider, as an MCP client keeps one per server: its registration,
 * tokens and PKCE verifier, and the browser for the person. The same class serves both SDKs; the
 * type parameters are each SDK's stored shapes.
 */
class BrowserOAuthProvider<Info, Tokens> {
  registration: Info | undefined
  saved: Tokens | undefined
  verifier = ''
  readonly authorizations: BrowserAuthorization[] = []

  constructor(
    public person: Person,
    readonly redirectUrl: string,
    readonly clientName: string,
  ) {}

  get clientMetadata() {
    return {
      client_name: this.clientName,
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }
  }

  clientInformation(): Info | undefined {
    return this.registration
  }

  saveClientInformation(information: Info): void {
    this.registration = information
  }

  tokens(): Tokens | undefined {
    return this.saved
  }

  saveTokens(tokens: Tokens): void {
    this.saved = tokens
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier
  }

  codeVerifier(): string {
    return this.verifier
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    this.authorizations.push(await this.person.authorize(authorizationUrl))
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'all' || scope === 'client') this.registration = undefined
    if (scope === 'all' || scope === 'tokens') this.saved = undefined
    if (scope === 'all' || scope === 'verifier') this.verifier = ''
  }

  /** The last authorization's redirect. */
  get lastAuthorization(): BrowserAuthorization {
    const last = this.authorizations.at(-1)
    assert.ok(last, 'an authorization happened in the browser')
    return last
  }
}

describe('MCP clients connect to Plinth by OAuth', () => {
  let server: TestServer
  let base: string
  let mcpUrl: string
  const callback = new LoopbackCallback()

  before(async () => {
    const port = await freePort()
    base = `http://127.0.0.1:${port}`
    mcpUrl = `${base}/mcp`
    server = await startTestServer('sqlite', { PORT: String(port), PLINTH_BASE_URL: base, PLINTH_SITE_URL: base })
    assert.equal(server.url, base, 'the server listens on the port it was given')
    await callback.start()
  })
  after(async () => {
    await callback.close()
    await server?.close()
  })

  /** POST /mcp initialize with a bearer token: status and WWW-Authenticate. */
  async function mcpWith(token: string): Promise<{ status: number; challenge: string | null }> {
    const res = await fetch(mcpUrl, { method: 'POST', headers: { ...MCP_HEADERS, authorization: `Bearer ${token}` }, body: INIT })
    await res.body?.cancel()
    return { status: res.status, challenge: res.headers.get('www-authenticate') }
  }

  /** GET /v1/websites with a bearer token. */
  async function restWith(token: string): Promise<{ status: number; body: any }> {
    const res = await server.api('GET', '/v1/websites', { token })
    return { status: res.status, body: res.body }
  }

  /** A refresh at the token endpoint, over plain HTTP: what any client sends. */
  async function refreshOverHttp(clientId: string, refreshToken: string): Promise<{ status: number; body: any }> {
    const res = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', client_id: clientId, refresh_token: refreshToken }).toString(),
    })
    return { status: res.status, body: await res.json() }
  }

  describe('discovery over plain HTTP', () => {
    test('the 401 of POST /mcp points to the protected-resource metadata and asks for scope mcp', async () => {
      const res = await fetch(mcpUrl, { method: 'POST', headers: MCP_HEADERS, body: INIT })
      assert.equal(res.status, 401)
      assert.equal(res.headers.get('www-authenticate'), `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", scope="mcp"`)
    })

    test('the protected-resource metadata names Plinth as the authorization server of {base}/mcp', async () => {
      const res = await fetch(`${base}/.well-known/oauth-protected-resource/mcp`)
      assert.equal(res.status, 200)
      const body = await res.json()
      assert.equal(body.resource, mcpUrl)
      assert.deepEqual(body.authorization_servers, [base])
      assert.deepEqual(body.scopes_supported, ['mcp'])
    })

    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      test(`${path} describes a PKCE S256 server with dynamic registration`, async () => {
        const res = await fetch(base + path)
        assert.equal(res.status, 200)
        assert.match(res.headers.get('content-type') ?? '', /^application\/json/)
        const body = await res.json()
        assert.equal(body.issuer, base)
        assert.deepEqual(body.code_challenge_methods_supported, ['S256'])
        assert.equal(body.registration_endpoint, `${base}/oauth/register`)
        assert.equal(body.authorization_endpoint, `${base}/oauth/authorize`)
        assert.equal(body.token_endpoint, `${base}/oauth/token`)
        assert.ok(body.grant_types_supported.includes('refresh_token'), 'refresh tokens are issued')
        assert.deepEqual(body.token_endpoint_auth_methods_supported, ['none'])
      })
    }
  })

  /** A person with an account and one published site, and a Chromium page for them to sign in and allow apps with. */
  async function personWithSite(email: string, siteName: string): Promise<{ browser: Browser; person: Person; websiteId: string }> {
    const user = await server.user(email)
    const published = await server.api('POST', '/v1/websites', { token: user.token, body: { name: siteName, category: 'other', files: bundle() } })
    assert.equal(published.status, 201, published.text)
    const browser = await launchChromium()
    const page = await (await browser.newContext()).newPage()
    return { browser, person: new Person(page, user.email, callback), websiteId: published.body.websiteId }
  }

  describe('SDK 1.x client, with the person in Chromium', { skip: browserSkip }, () => {
    let browser: Browser
    let person: Person
    let provider: BrowserOAuthProvider<OAuthClientInformationMixed, OAuthTokens>
    let websiteId = ''
    const clientName = 'Plinth E2E agent (SDK 1.x)'

    before(async () => {
      ;({ browser, person, websiteId } = await personWithSite('sdk1-person@example.com', 'OAuth Bakery'))
      provider = new BrowserOAuthProvider(person, callback.uri, clientName)
    })
    after(async () => {
      await browser?.close()
    })

    /** The SDK's documented pattern: connect, authorize on UnauthorizedError, finishAuth, connect again. */
    async function connectWithOAuth(): Promise<Sdk1Client> {
      const authProvider: Sdk1OAuthClientProvider = provider
      const first = new Sdk1Transport(new URL(mcpUrl), { authProvider })
      const refused = new Sdk1Client({ name: 'plinth-oauth-e2e', version: '1.0.0' })
      await assert.rejects(refused.connect(first), Sdk1UnauthorizedError)
      const code = provider.lastAuthorization.params.get('code')
      assert.ok(code, `the redirect carries a code: ${provider.lastAuthorization.params}`)
      await first.finishAuth(code)
      const client = new Sdk1Client({ name: 'plinth-oauth-e2e', version: '1.0.0' })
      await client.connect(new Sdk1Transport(new URL(mcpUrl), { authProvider }))
      return client
    }

    test('dynamic client registration as the SDK sends it, with the scope of the 401 challenge ("mcp"), is accepted', async () => {
      // auth() registers with `scope` = the WWW-Authenticate scope (SEP-835), else the resource
      // metadata's scopes_supported: "mcp" either way. This is its registerClient call, on a
      // registration of its own (the flow below registers itself through auth()).
      const metadata = await discoverAuthorizationServerMetadata(base)
      const outcome = await sdk1RegisterClient(base, { metadata, clientMetadata: provider.clientMetadata, scope: 'mcp' }).then(
        (information) => ({ information, error: null }),
        (error: Error) => ({ information: null, error }),
      )
      assert.equal(
        outcome.error?.message ?? null,
        null,
        'POST /oauth/register with scope "mcp" (the scope Plinth itself names in its 401 and its resource metadata) must be accepted',
      )
      assert.match(outcome.information!.client_id, /^cli_[A-Za-z0-9]{22}$/)
    })

    test('the first authorization: registration, sign-in and consent in Chromium, then MCP and REST with the token', async () => {
      const client = await connectWithOAuth()
      try {
        assert.equal(provider.authorizations.length, 1)
        const authorization = provider.lastAuthorization
        assert.deepEqual(authorization.shown, ['sign-in', 'consent'], 'signed out: sign-in, then the consent page')
        assert.deepEqual(person.consentViolations, [], 'the consent page passes axe-core')
        assert.equal(authorization.params.get('iss'), base, 'RFC 9207 iss on the redirect')

        const registration = provider.registration
        assert.ok(registration, 'registered dynamically')
        assert.match(registration.client_id, /^cli_[A-Za-z0-9]{22}$/)
        assert.equal((registration as { client_secret?: string }).client_secret, undefined, 'a public client: no secret')

        const tokens = provider.saved
        assert.ok(tokens?.access_token && tokens.refresh_token, 'an access token and a refresh token')
        assert.equal(tokens.token_type.toLowerCase(), 'bearer')
        assert.equal(tokens.expires_in, 3600, 'access tokens last an hour')

        const { tools } = await client.listTools()
        assert.ok(
          tools.some((t) => t.name === 'list_websites'),
          'tools/list works',
        )
        const result = await client.callTool({ name: 'list_websites', arguments: {} })
        assert.notEqual(result.isError, true, JSON.stringify(result.content))
        const items = (result.structuredContent as any).items as Array<{ id: string }>
        assert.deepEqual(
          items.map((s) => s.id),
          [websiteId],
          'the tool runs as the person who allowed the app',
        )

        const rest = await restWith(tokens.access_token)
        assert.equal(rest.status, 200, 'the same access token works on the REST API')
        assert.deepEqual(
          rest.body.items.map((s: any) => s.id),
          [websiteId],
        )
      } finally {
        await client.close()
      }
    })

    test('the dashboard lists the app under Connected apps, with the host it returns to', async () => {
      const page = person.page
      await page.goto(`${base}/dashboard`)
      const apps = page.getByRole('region', { name: 'Apps table' })
      await apps.getByRole('cell', { name: clientName, exact: true }).waitFor()
      assert.match(await apps.innerText(), new RegExp(`127\\.0\\.0\\.1:${new URL(callback.uri).port}`), 'the host the app returns to')
    })

    test('a refresh rotates the refresh token; reusing the old one is refused and revokes the grant', async () => {
      const first = provider.saved!
      // The SDK's own orchestrator: with a refresh token stored, auth() refreshes without the browser.
      assert.equal(await sdk1Auth(provider, { serverUrl: mcpUrl }), 'AUTHORIZED')
      assert.equal(provider.authorizations.length, 1, 'no browser for a refresh')
      const second = provider.saved!
      assert.ok(second.refresh_token, 'a new refresh token')
      assert.notEqual(second.refresh_token, first.refresh_token, 'the refresh token rotated')
      assert.notEqual(second.access_token, first.access_token, 'a new access token')
      assert.equal((await mcpWith(second.access_token)).status, 200, 'the new access token works on /mcp')
      assert.equal((await restWith(second.access_token)).status, 200, 'and on /v1')
      // Rotation replaces the refresh token only: the access token issued before lives on until it expires.
      assert.equal((await restWith(first.access_token)).status, 200, 'the earlier access token still works')

      // Reuse of the rotated-out refresh token, through the SDK: invalid_grant.
      const metadata = await discoverAuthorizationServerMetadata(base)
      await assert.rejects(
        refreshAuthorization(base, { metadata, clientInformation: provider.registration!, refreshToken: first.refresh_token!, resource: new URL(mcpUrl) }),
        InvalidGrantError,
      )
      // oidc-provider treats the reuse as a stolen token and revokes the whole grant: the tokens of
      // the refresh that just succeeded stop working too, on both surfaces, and cannot be refreshed.
      const mcp = await mcpWith(second.access_token)
      assert.equal(mcp.status, 401, 'the new access token is revoked with the grant')
      assert.match(mcp.challenge ?? '', /error="invalid_token"/)
      assert.equal((await restWith(second.access_token)).status, 401)
      assert.equal((await restWith(first.access_token)).status, 401)
      const again = await refreshOverHttp(provider.registration!.client_id, second.refresh_token)
      assert.equal(again.status, 400)
      assert.equal(again.body.error, 'invalid_grant', 'the new refresh token is revoked too')
    })

    test('after the revocation the person is asked again; the next authorization skips the consent page', async () => {
      // The reuse revoked the grant, and the remembered consent is that grant: the person (still
      // signed in on the web site) sees the consent page again.
      provider.invalidateCredentials('tokens')
      let client = await connectWithOAuth()
      await client.close()
      assert.deepEqual(provider.lastAuthorization.shown, ['consent'], 'signed in: no sign-in page; the revoked consent is asked again')

      // Now the consent is remembered: a new authorization goes straight back to the app.
      provider.invalidateCredentials('tokens')
      client = await connectWithOAuth()
      try {
        const authorization = provider.lastAuthorization
        assert.deepEqual(authorization.shown, [], 'no sign-in and no "Allow" click')
        assert.ok(
          authorization.navigations.every((n) => !n.startsWith('200 /connect/') && !n.includes('/sign-in')),
          `no page was shown before the redirect: ${authorization.navigations.join(', ')}`,
        )
        assert.equal(authorization.navigations.at(-1), '200 /callback', 'the browser lands straight on the redirect URI')
        assert.equal(provider.authorizations.length, 3)
        const { tools } = await client.listTools()
        assert.ok(tools.length > 0)
      } finally {
        await client.close()
      }
    })

    test('signed out on the web site, with the consent remembered: sign in, then straight back to the app', async () => {
      // Another browser (no web session): /connect/{uid} sends the person to /sign-in?next=...;
      // signing in goes back to /connect/{uid}, which, the app being allowed before, redirects
      // on to the app's loopback redirect URI without a question. That whole chain of redirects
      // answers the sign-in form's POST, so the sign-in page's Content-Security-Policy
      // (`form-action 'self'`) governs it: if the last hop (to another origin) is refused, the
      // failure message quotes Chromium's console.
      const elsewhere = await browser.newContext()
      try {
        const page = await elsewhere.newPage()
        provider.person = new Person(page, person.email, callback)
        provider.invalidateCredentials('tokens')
        const client = await connectWithOAuth()
        await client.close()
        const authorization = provider.lastAuthorization
        assert.deepEqual(authorization.shown, ['sign-in'], 'the sign-in page, and no consent page')
        assert.ok(
          authorization.navigations.some((n) => /^303 \/connect\//.test(n)),
          `the consent page redirected at once: ${authorization.navigations.join(', ')}`,
        )
      } finally {
        provider.person = person
        await elsewhere.close()
      }
    })

    test('"Disconnect" on the dashboard revokes the app: its tokens get 401 on /mcp and /v1', async () => {
      if (!provider.saved) {
        // The test before failed midway: authorize again in the signed-in browser (consent remembered).
        provider.person = person
        const client = await connectWithOAuth()
        await client.close()
      }
      const tokens = provider.saved!
      assert.equal((await mcpWith(tokens.access_token)).status, 200, 'the token works before')
      const page = person.page
      await page.goto(`${base}/dashboard`)
      await page.getByRole('button', { name: `Disconnect ${clientName}` }).click()
      await page.waitForURL(`${base}/dashboard?done=disconnected`)
      assert.equal(await page.getByRole('status').innerText(), 'The app was disconnected. Its tokens no longer work.')
      assert.equal(await page.getByText('No app is connected.').count(), 1, 'the app is gone from the list')

      const mcp = await mcpWith(tokens.access_token)
      assert.equal(mcp.status, 401, 'the access token is refused on /mcp')
      assert.match(mcp.challenge ?? '', /^Bearer resource_metadata=".*", scope="mcp", error="invalid_token"/)
      assert.equal((await restWith(tokens.access_token)).status, 401, 'and on /v1')
      const refreshed = await refreshOverHttp(provider.registration!.client_id, tokens.refresh_token!)
      assert.equal(refreshed.body.error, 'invalid_grant', 'and the refresh token is gone')
    })
  })

  // The v2 client has the same OAuthClientProvider interface, UnauthorizedError and
  // transport.finishAuth (which also takes the callback's whole query, checking `iss`).
  describe('v2 client (@modelcontextprotocol/client), with the person in Chromium', { skip: browserSkip }, () => {
    let browser: Browser
    let person: Person
    let provider: BrowserOAuthProvider<StoredOAuthClientInformation, StoredOAuthTokens>
    let websiteId = ''

    before(async () => {
      ;({ browser, person, websiteId } = await personWithSite('v2-person@example.com', 'V2 Bakery'))
      provider = new BrowserOAuthProvider(person, callback.uri, 'Plinth E2E agent (SDK v2)')
    })
    after(async () => {
      await browser?.close()
    })

    test('discovery, registration, sign-in and consent in Chromium, then tools/list and a tool call', async () => {
      const typed: V2OAuthClientProvider = provider
      // The SDK registers itself (with the scope "mcp" of the 401 challenge), then sends the person to sign in.
      const first = new V2Transport(new URL(mcpUrl), { authProvider: typed })
      const refused = await new V2Client({ name: 'plinth-oauth-e2e', version: '1.0.0' }).connect(first).then(
        () => null,
        (error: Error) => error,
      )
      assert.ok(refused instanceof V2UnauthorizedError, `connect() throws UnauthorizedError after the redirect, not ${refused}`)
      const authorization = provider.lastAuthorization
      assert.deepEqual(authorization.shown, ['sign-in', 'consent'])
      await first.finishAuth(authorization.params)
      assert.ok(provider.saved?.access_token, 'tokens after finishAuth')
      assert.equal(provider.saved.issuer, base, 'the v2 SDK stamps tokens with the issuer')

      const client = new V2Client({ name: 'plinth-oauth-e2e', version: '1.0.0' })
      await client.connect(new V2Transport(new URL(mcpUrl), { authProvider: typed }))
      try {
        const { tools } = await client.listTools()
        assert.ok(tools.some((t) => t.name === 'list_websites'))
        const result = await client.callTool({ name: 'list_websites', arguments: {} })
        assert.notEqual(result.isError, true, JSON.stringify(result.content))
        assert.deepEqual(
          ((result.structuredContent as any).items as Array<{ id: string }>).map((s) => s.id),
          [websiteId],
        )
      } finally {
        await client.close()
      }
      assert.match(provider.registration?.client_id ?? '', /^cli_/, 'the v2 SDK registered dynamically')
    })

    test('a person who unticks all but Read on the consent page gives the app a token that only reads', async () => {
      // Another app of the same person: asked again, the person allows less this time.
      const narrow = new BrowserOAuthProvider<StoredOAuthClientInformation, StoredOAuthTokens>(person, callback.uri, 'Plinth E2E reader (SDK v2)')
      person.untick = [/^Preview:/, /^Promote:/, /^Content:/, /^Forms:/, /^Manage:/]
      try {
        const typed: V2OAuthClientProvider = narrow
        const first = new V2Transport(new URL(mcpUrl), { authProvider: typed })
        await new V2Client({ name: 'plinth-oauth-e2e', version: '1.0.0' }).connect(first).catch(() => null)
        assert.deepEqual(narrow.lastAuthorization.shown, ['consent'])
        await first.finishAuth(narrow.lastAuthorization.params)
        assert.deepEqual(narrow.saved?.scope?.split(' ').sort(), ['mcp', 'plinth:read'], 'the token names what the person allowed')
      } finally {
        person.untick = []
      }
      const client = new V2Client({ name: 'plinth-oauth-e2e', version: '1.0.0' })
      await client.connect(new V2Transport(new URL(mcpUrl), { authProvider: narrow }))
      try {
        const names = (await client.listTools()).tools.map((t) => t.name)
        assert.ok(names.includes('list_websites') && names.includes('get_website'), names.join(' '))
        assert.ok(!names.includes('publish_version') && !names.includes('delete_website'), names.join(' '))
        const refused = await client.callTool({ name: 'delete_website', arguments: { websiteId } })
        assert.equal(refused.isError, true)
        const envelope = JSON.parse((refused.content as Array<{ text: string }>)[0]!.text)
        assert.equal(envelope.error.code, 'TOKEN_NOT_ALLOWED')
        assert.equal(envelope.error.details.missingCapability, 'manage')
      } finally {
        await client.close()
      }
      const rest = await restWith(narrow.saved.access_token)
      assert.equal(rest.status, 200, 'it reads over REST too')
    })
  })
})
