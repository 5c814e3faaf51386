/**
 * The OAuth authorization server for MCP clients over real HTTP, on every store: discovery,
 * dynamic registration (the redirect URIs real clients use), the authorization code flow with
 * PKCE and a required resource, consent (allow, deny, remembered), the code and refresh token
 * exchanges (rotation, reuse refused), what every refused request gets, and people staying in
 * control (disconnect, sign out everywhere, password change). Chromium and the SDK clients are
 * in mcp-oauth.e2e.test.ts.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import https from 'node:https'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { OAUTH_CLIENT_LIST_MAX, OAUTH_CLIENT_NAME_MAX_CHARS, OAUTH_CLIENT_URI_MAX_CHARS, OAUTH_REGISTRATIONS_PER_ADDRESS } from '../../src/core/limits.ts'
import { BASE_URL, startOnStore, startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'
import { uniqueEmail, WebVisitor } from '../helpers/web.ts'

const RESOURCE = `${BASE_URL}/mcp`
const PASSWORD = 'correct horse battery'
const LOOPBACK = 'http://127.0.0.1:43210/callback'
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code'
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
const TOOLS_LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })

let clientAddresses = 0
/** A client address no other registration of this file came from (TEST-NET-2, then TEST-NET-3). */
const nextClientAddress = () => {
  clientAddresses += 1
  return clientAddresses < 255 ? `198.51.100.${clientAddresses}` : `203.0.113.${clientAddresses - 254}`
}

const pkce = () => {
  const verifier = randomBytes(32).toString('base64url')
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}

for (const store of STORES) {
  describe(`OAuth for MCP clients (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    before(async () => {
      // Registrations are limited per client address: each registration here comes from an address of its own.
      server = await startTestServer(store.name, { PLINTH_TRUST_PROXY: 'loopback' })
    })
    after(async () => server?.close())

    const post = (path: string, body: Record<string, string>) =>
      fetch(server.url + path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(body) })
    const register = async (metadata: Record<string, unknown>) =>
      fetch(`${server.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': nextClientAddress() },
        body: JSON.stringify({
          token_endpoint_auth_method: 'none',
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          ...metadata,
        }),
      })
    const newClient = async (redirectUris = [LOOPBACK], name = 'Test Agent') => {
      const response = await register({ client_name: name, redirect_uris: redirectUris })
      assert.equal(response.status, 201, await response.clone().text())
      return (await response.json()).client_id as string
    }
    /** A path on the test server for a location the authorization server answered (relative or absolute). */
    const local = (location: string) => {
      const url = new URL(location, server.url)
      return url.pathname + url.search
    }
    const authorizePath = (params: Record<string, string>) => `/oauth/authorize?${new URLSearchParams(params)}`
    /** An authorization request for the code flow; `extra` overrides parameters, `drop` leaves them out. */
    const codeRequest = (clientId: string, challenge: string, extra: Record<string, string> = {}, drop: string[] = []) =>
      authorizePath(
        Object.fromEntries(
          Object.entries({
            client_id: clientId,
            response_type: 'code',
            redirect_uri: LOOPBACK,
            code_challenge: challenge,
            code_challenge_method: 'S256',
            resource: RESOURCE,
            scope: 'mcp offline_access',
            state: 'st4te',
            ...extra,
          }).filter(([name]) => !drop.includes(name)),
        ),
      )

    /** A signed-in person in a browser-like visitor. */
    async function person() {
      const visitor = new WebVisitor(server)
      const address = uniqueEmail('person')
      await visitor.signUp(address, PASSWORD)
      return { visitor, email: address }
    }

    /** Runs the authorization to the client's redirect; the URL the browser lands on. */
    async function authorize(visitor: WebVisitor, path: string, decision: 'allow' | 'deny' | null = 'allow'): Promise<URL> {
      const start = await visitor.get(path)
      assert.equal(start.status, 303, `authorize: ${start.text.slice(0, 300)}`)
      let location = start.headers.get('location')!
      if (location.startsWith('/connect/')) {
        const connect = await visitor.get(location)
        if (connect.status === 200) {
          assert.ok(decision, 'a consent page was shown')
          assert.match(connect.text, /<button type="submit" name="decision" value="allow">Allow<\/button>/)
          const answered = await visitor.post(location, { decision })
          assert.equal(answered.status, 303)
          location = answered.headers.get('location')!
        } else {
          assert.equal(connect.status, 303, connect.text.slice(0, 300))
          location = connect.headers.get('location')!
        }
        const resumed = await visitor.get(local(location))
        assert.equal(resumed.status, 303, resumed.text.slice(0, 300))
        location = resumed.headers.get('location')!
      }
      return new URL(location)
    }

    async function tokensFor(clientId: string, code: string, verifier: string) {
      const response = await post('/oauth/token', {
        grant_type: 'authorization_code',
        code,
        client_id: clientId,
        redirect_uri: LOOPBACK,
        code_verifier: verifier,
      })
      return { status: response.status, body: await response.json() }
    }

    async function connectedApp() {
      const { visitor, email: address } = await person()
      const clientId = await newClient()
      const { verifier, challenge } = pkce()
      const landed = await authorize(visitor, codeRequest(clientId, challenge))
      const code = landed.searchParams.get('code')!
      const tokens = await tokensFor(clientId, code, verifier)
      assert.equal(tokens.status, 200, JSON.stringify(tokens.body))
      return { visitor, email: address, clientId, tokens: tokens.body as { access_token: string; refresh_token: string } }
    }

    const mcpWith = (token: string) =>
      fetch(`${server.url}/mcp`, { method: 'POST', headers: { ...MCP_HEADERS, authorization: `Bearer ${token}` }, body: TOOLS_LIST })

    test('discovery: the 401 points at the resource metadata, which names Plinth as its authorization server', async () => {
      const unauthorized = await fetch(`${server.url}/mcp`, { method: 'POST', headers: MCP_HEADERS, body: TOOLS_LIST })
      assert.equal(unauthorized.status, 401)
      assert.equal(unauthorized.headers.get('www-authenticate'), `Bearer resource_metadata="${BASE_URL}/.well-known/oauth-protected-resource/mcp", scope="mcp"`)
      const resource = await (await fetch(`${server.url}/.well-known/oauth-protected-resource/mcp`)).json()
      assert.equal(resource.resource, RESOURCE)
      assert.deepEqual(resource.authorization_servers, [BASE_URL])
      assert.deepEqual(resource.scopes_supported, ['mcp'])

      for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
        const metadata = await (await fetch(server.url + path)).json()
        assert.equal(metadata.issuer, BASE_URL, path)
        assert.deepEqual(metadata.code_challenge_methods_supported, ['S256'])
        assert.deepEqual(metadata.response_types_supported, ['code'])
        assert.deepEqual(metadata.token_endpoint_auth_methods_supported, ['none'])
        for (const endpoint of ['authorization_endpoint', 'token_endpoint', 'registration_endpoint', 'revocation_endpoint']) {
          assert.match(metadata[endpoint], /\/oauth\//, `${path} has ${endpoint}`)
        }
        assert.equal(metadata.client_id_metadata_document_supported, true)
        // `mcp` is every capability; each capability has a scope of its own.
        for (const scope of ['mcp', 'plinth:read', 'plinth:preview', 'plinth:promote', 'plinth:content', 'plinth:forms', 'plinth:manage']) {
          assert.ok(metadata.scopes_supported.includes(scope), `${path} lists ${scope}`)
        }
      }
    })

    test('registration accepts the redirect URIs real clients use; loopback and app schemes make a native app', async () => {
      for (const uris of [
        ['https://claude.ai/api/mcp/auth_callback'],
        ['https://chatgpt.com/connector_platform_oauth_redirect'],
        ['cursor://anysphere.cursor-retrieval/oauth/user-plinth/callback'],
        ['vscode://vscode.github-authentication/did-authenticate', 'http://127.0.0.1:33418/'],
        ['http://localhost:6274/oauth/callback'],
      ]) {
        const response = await register({ client_name: 'Client', redirect_uris: uris })
        const body = await response.json()
        assert.equal(response.status, 201, `${uris.join(' ')}: ${JSON.stringify(body)}`)
        assert.match(body.client_id, /^cli_/)
        assert.equal(body.client_secret, undefined, 'a public client gets no secret')
        assert.equal(body.application_type, uris[0]?.startsWith('https:') ? 'web' : 'native', uris.join(' '))
      }
      const confidential = await register({ client_name: 'Secret', redirect_uris: [LOOPBACK], token_endpoint_auth_method: 'client_secret_basic' })
      assert.equal(confidential.status, 400)
      assert.equal((await confidential.json()).error, 'invalid_client_metadata')
    })

    test('the code flow: sign in, allow, code for tokens that reach /mcp and /v1 as the person', async () => {
      const { visitor } = await person()
      const clientId = await newClient()
      const { verifier, challenge } = pkce()
      // A loopback redirect may use any port (RFC 8252): registered 43210, used 51234.
      const otherPort = 'http://127.0.0.1:51234/callback'
      const landed = await authorize(visitor, codeRequest(clientId, challenge, { redirect_uri: otherPort }))
      assert.equal(landed.origin + landed.pathname, otherPort)
      assert.equal(landed.searchParams.get('state'), 'st4te')
      assert.equal(landed.searchParams.get('iss'), BASE_URL)
      const response = await post('/oauth/token', {
        grant_type: 'authorization_code',
        code: landed.searchParams.get('code')!,
        client_id: clientId,
        redirect_uri: otherPort,
        code_verifier: verifier,
      })
      const tokens = await response.json()
      assert.equal(response.status, 200, JSON.stringify(tokens))
      assert.equal(tokens.token_type, 'Bearer')
      assert.equal(tokens.expires_in, 3600, 'an hour')
      // `mcp` asks for every capability; the person allowed them all.
      assert.equal(tokens.scope, 'mcp plinth:read plinth:preview plinth:promote plinth:content plinth:forms plinth:manage')
      assert.ok(tokens.refresh_token)

      const mcp = await mcpWith(tokens.access_token)
      assert.equal(mcp.status, 200)
      assert.ok((await mcp.json()).result.tools.length > 10)
      const rest = await server.api('GET', '/v1/websites', { token: tokens.access_token })
      assert.equal(rest.status, 200)
      assert.deepEqual(rest.body.items, [])

      // The code is single-use.
      const again = await post('/oauth/token', {
        grant_type: 'authorization_code',
        code: landed.searchParams.get('code')!,
        client_id: clientId,
        redirect_uri: otherPort,
        code_verifier: verifier,
      })
      assert.equal(again.status, 400)
      assert.equal((await again.json()).error, 'invalid_grant')
    })

    test('a person who is not signed in is sent to sign in and back to the consent page', async () => {
      const clientId = await newClient()
      const visitor = new WebVisitor(server)
      const start = await visitor.get(codeRequest(clientId, pkce().challenge))
      const connect = start.headers.get('location')!
      assert.match(connect, /^\/connect\/[\w-]+$/)
      const signIn = await visitor.get(connect)
      assert.equal(signIn.status, 303)
      assert.equal(signIn.headers.get('location'), `/sign-in?next=${encodeURIComponent(connect)}`)
      const address = uniqueEmail('later')
      await server.server.services.users.create({ email: address, password: PASSWORD })
      await visitor.get(signIn.headers.get('location')!)
      const signedIn = await visitor.post('/sign-in', { email: address, password: PASSWORD, next: connect })
      assert.equal(signedIn.headers.get('location'), connect)
      const consent = await visitor.get(connect)
      assert.equal(consent.status, 200)
      assert.match(consent.text, /<h1>Connect Test Agent<\/h1>/)
      assert.match(consent.text, /127\.0\.0\.1:43210/, 'the redirect host is named')
      assert.match(consent.text, /value="deny" class="secondary">Deny<\/button>/)
    })

    test('deny sends the browser back with access_denied and connects nothing', async () => {
      const { visitor } = await person()
      const clientId = await newClient()
      const landed = await authorize(visitor, codeRequest(clientId, pkce().challenge), 'deny')
      assert.equal(landed.searchParams.get('error'), 'access_denied')
      assert.equal(landed.searchParams.get('code'), null)
      assert.doesNotMatch((await visitor.get('/dashboard')).text, /Test Agent/)
    })

    test('refused authorizations are answered with an error page, never a redirect to the app (RFC 9700 §4.11.2)', async () => {
      const { visitor } = await person()
      const clientId = await newClient()
      const { challenge } = pkce()
      const refused = async (extra: Record<string, string>, drop: string[], error: string) => {
        const response = await visitor.get(codeRequest(clientId, challenge, extra, drop))
        assert.equal(response.status, 400, `${error}: ${response.text.slice(0, 200)}`)
        assert.equal(response.headers.get('location'), null, `${error}: not redirected`)
        assert.match(response.text, /<h1>Could not connect<\/h1>/)
        assert.match(response.text, new RegExp(`<p>${error}</p>`))
        assert.doesNotMatch(response.text, /127\.0\.0\.1:43210/, 'no link to the app either')
      }
      await refused({ resource: 'https://elsewhere.example/mcp' }, [], 'invalid_target')
      await refused({}, ['resource'], 'invalid_target')
      await refused({}, ['code_challenge', 'code_challenge_method'], 'invalid_request')
      await refused({ code_challenge: 'plain-challenge-of-forty-three-characters-x', code_challenge_method: 'plain' }, [], 'invalid_request')
      await refused({ response_mode: 'form_post', resource: 'https://elsewhere.example/mcp' }, [], 'invalid_target')
      await refused({ response_mode: 'fragment', prompt: 'none' }, [], 'login_required')

      const unregistered = await visitor.get(codeRequest(clientId, challenge, { redirect_uri: 'https://evil.example/callback' }))
      assert.equal(unregistered.status, 400, 'never redirected to an unregistered address')
      assert.equal(unregistered.headers.get('location'), null)
      assert.match(unregistered.text, /redirect_uri/)
    })

    test('the error page carries the headers of every web page, and the end-session endpoint is off', async () => {
      const page = await fetch(`${server.url}${codeRequest('cli_unknown', pkce().challenge)}`, { redirect: 'manual' })
      assert.equal(page.status, 400)
      assert.match(page.headers.get('content-type')!, /^text\/html/)
      const csp = page.headers.get('content-security-policy')!
      assert.match(csp, /default-src 'none'/)
      assert.match(csp, /frame-ancestors 'none'/)
      assert.match(csp, /script-src 'self'/)
      assert.equal(page.headers.get('x-content-type-options'), 'nosniff')
      assert.equal(page.headers.get('x-frame-options'), 'DENY')
      assert.equal(page.headers.get('referrer-policy'), 'same-origin')

      for (const path of ['/oauth/end-session', '/oauth/end-session?post_logout_redirect_uri=https%3A%2F%2Fevil.example%2F']) {
        const endSession = await fetch(server.url + path, { redirect: 'manual' })
        assert.equal(endSession.status, 404, path)
        assert.equal(endSession.headers.get('location'), null)
      }
      const metadata = await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()
      assert.equal(metadata.end_session_endpoint, undefined, 'not advertised')
    })

    test('the form_post answer carries the page headers, its one script allowed by its hash', async () => {
      const { visitor } = await person()
      const clientId = await newClient()
      const start = await visitor.get(codeRequest(clientId, pkce().challenge, { response_mode: 'form_post' }))
      const connect = start.headers.get('location')!
      await visitor.get(connect)
      const allowed = await visitor.post(connect, { decision: 'allow' })
      const answer = await visitor.get(local(allowed.headers.get('location')!))
      assert.equal(answer.status, 200, answer.text.slice(0, 200))
      assert.match(answer.text, new RegExp(`<form method="post" action="${LOOPBACK}">`))
      const csp = answer.headers.get('content-security-policy')!
      assert.match(csp, /default-src 'none'/)
      assert.match(csp, /frame-ancestors 'none'/)
      assert.match(csp, /script-src 'self' 'sha256-[A-Za-z0-9+/=]+'/)
      assert.doesNotMatch(csp, /form-action/, 'the form goes to the app')
      assert.equal(answer.headers.get('x-content-type-options'), 'nosniff')
      assert.equal(answer.headers.get('x-frame-options'), 'DENY')
      assert.equal(answer.headers.get('referrer-policy'), 'same-origin')
    })

    test('an expired code is refused', async () => {
      const { visitor } = await person()
      const clientId = await newClient()
      const { verifier, challenge } = pkce()
      const code = (await authorize(visitor, codeRequest(clientId, challenge))).searchParams.get('code')!
      await server.server.db.kysely
        .updateTable('oauth_models')
        .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
        .where('model', '=', 'AuthorizationCode')
        .execute()
      const tokens = await tokensFor(clientId, code, verifier)
      assert.equal(tokens.status, 400)
      assert.equal(tokens.body.error, 'invalid_grant')
      const wrongVerifier = await tokensFor(clientId, code, pkce().verifier)
      assert.equal(wrongVerifier.status, 400)
    })

    test('refresh tokens rotate; a reused one is refused and revokes the whole grant', async () => {
      const { clientId, tokens } = await connectedApp()
      const first = await post('/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientId })
      const rotated = await first.json()
      assert.equal(first.status, 200, JSON.stringify(rotated))
      assert.notEqual(rotated.refresh_token, tokens.refresh_token, 'a new refresh token')
      assert.equal((await mcpWith(rotated.access_token)).status, 200)

      const reused = await post('/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientId })
      assert.equal(reused.status, 400)
      assert.equal((await reused.json()).error, 'invalid_grant')
      assert.equal((await mcpWith(rotated.access_token)).status, 401, 'the family is revoked')
      const next = await post('/oauth/token', { grant_type: 'refresh_token', refresh_token: rotated.refresh_token, client_id: clientId })
      assert.equal(next.status, 400)
    })

    test('revocation (RFC 7009) ends an access token', async () => {
      const { clientId, tokens } = await connectedApp()
      const revoked = await post('/oauth/revoke', { token: tokens.access_token, client_id: clientId })
      assert.equal(revoked.status, 200)
      assert.equal((await mcpWith(tokens.access_token)).status, 401)
    })

    test('invalid, expired and wrong-audience tokens get the same 401 with WWW-Authenticate', async () => {
      const { tokens } = await connectedApp()
      const challenge = `Bearer resource_metadata="${BASE_URL}/.well-known/oauth-protected-resource/mcp", scope="mcp", error="invalid_token"`
      const check = async (token: string, label: string) => {
        const mcp = await mcpWith(token)
        assert.equal(mcp.status, 401, label)
        assert.ok(mcp.headers.get('www-authenticate')?.startsWith(challenge), `${label}: ${mcp.headers.get('www-authenticate')}`)
        assert.equal((await server.api('GET', '/v1/websites', { token })).status, 401, label)
      }
      await check(randomBytes(32).toString('base64url'), 'unknown')

      const models = server.server.db.kysely
      const row = await models
        .selectFrom('oauth_models')
        .select(['id', 'payload'])
        .where('model', '=', 'AccessToken')
        .orderBy('expires_at', 'desc')
        .executeTakeFirstOrThrow()
      const payload = JSON.parse(row.payload)
      await models
        .updateTable('oauth_models')
        .set({ payload: JSON.stringify({ ...payload, aud: 'https://elsewhere.example/mcp' }) })
        .where('model', '=', 'AccessToken')
        .where('id', '=', row.id)
        .execute()
      await check(tokens.access_token, 'wrong audience')
      await models
        .updateTable('oauth_models')
        .set({ payload: row.payload, expires_at: new Date(Date.now() - 1000).toISOString() })
        .where('id', '=', row.id)
        .execute()
      await check(tokens.access_token, 'expired')
    })

    test('consent is remembered: the same app is let through without asking again', async () => {
      const { visitor, clientId } = await connectedApp()
      const { challenge } = pkce()
      const start = await visitor.get(codeRequest(clientId, challenge))
      const connect = await visitor.get(start.headers.get('location')!)
      assert.equal(connect.status, 303, 'no consent page the second time')
      const resumed = await visitor.get(local(connect.headers.get('location')!))
      assert.ok(new URL(resumed.headers.get('location')!).searchParams.get('code'))
    })

    test('the consent page ticks what the app asked; the token carries at most what the person ticked, on the sites ticked', async () => {
      const { visitor, email } = await person()
      const personal = await visitor.mintToken('sites')
      const made = async () =>
        (await server.api('POST', '/v1/websites', { token: personal, body: { category: 'other', files: [{ path: 'index.html', content: '<p>x</p>' }] } })).body
          .websiteId as string
      const [siteA, siteB] = [await made(), await made()]
      const clientId = await newClient()
      const { verifier, challenge } = pkce()
      const start = await visitor.get(codeRequest(clientId, challenge, { scope: 'plinth:read plinth:preview offline_access' }))
      const consentPath = start.headers.get('location')!
      const page = await visitor.get(consentPath)
      assert.equal(page.status, 200)
      const box = (name: string, value: string) => new RegExp(`<input type="checkbox" name="${name}" value="${value}"( checked)?>`).exec(page.text)
      assert.ok(box('capabilities', 'read')?.[1], 'read is ticked, as asked')
      assert.ok(box('capabilities', 'preview')?.[1], 'preview is ticked, as asked')
      for (const other of ['promote', 'content', 'forms', 'manage']) assert.equal(box('capabilities', other)?.[1], undefined, `${other} is offered, not ticked`)
      assert.ok(box('sites', siteA) && box('sites', siteB), 'each site of the person is offered')

      // Bad choices are refused and connect nothing.
      const bad: Array<[Record<string, string[]>, RegExp]> = [
        [{ capabilities: ['read', 'deploy'] }, /deploy/],
        [{ capabilities: ['read'], sites: ['web_elsewhere'] }, /web_elsewhere/],
        [{ capabilities: [] }, /at least one/],
      ]
      for (const [fields, why] of bad) {
        const refused = await visitor.post(consentPath, { decision: 'allow', scoped: '1', ...fields })
        assert.equal(refused.status, 422, refused.text.slice(0, 300))
        assert.match(refused.text, why)
      }
      assert.deepEqual(await server.server.services.oauth.connections((await server.server.services.users.requireByEmail(email)).id), [])

      const answered = await visitor.post(consentPath, { decision: 'allow', scoped: '1', capabilities: ['read'], sites: [siteA] })
      assert.equal(answered.status, 303, answered.text.slice(0, 300))
      const resumed = await visitor.get(local(answered.headers.get('location')!))
      const code = new URL(resumed.headers.get('location')!).searchParams.get('code')!
      const tokens = await tokensFor(clientId, code, verifier)
      assert.equal(tokens.status, 200, JSON.stringify(tokens.body))
      assert.deepEqual(tokens.body.scope.split(' ').sort(), ['plinth:read'], 'preview was asked but not ticked')
      const token = tokens.body.access_token as string

      const list = await server.api('GET', '/v1/websites', { token })
      assert.deepEqual(
        list.body.items.map((item: { id: string }) => item.id),
        [siteA],
      )
      assert.equal((await server.api('GET', `/v1/websites/${siteB}`, { token })).status, 404)
      const preview = await server.api('POST', `/v1/websites/${siteA}/versions`, {
        token,
        body: { files: [{ path: 'index.html', content: '<p>y</p>' }], promote: false },
      })
      assert.equal(preview.status, 403)
      assert.equal(preview.body.error.code, 'TOKEN_NOT_ALLOWED')
      const listed = await (await mcpWith(token)).json()
      const names = listed.result.tools.map((tool: { name: string }) => tool.name)
      assert.ok(names.includes('get_website') && !names.includes('publish_version'), names.join(' '))
    })

    test('scopes Plinth does not know (profile, email, a typo) are ignored: the app connects, and the token says what it got', async () => {
      const { visitor } = await person()
      for (const scope of ['mcp profile email offline_access', 'openid profile', 'plinth:raed']) {
        const clientId = await newClient()
        const { verifier, challenge } = pkce()
        const landed = await authorize(visitor, codeRequest(clientId, challenge, { scope }))
        assert.equal(landed.searchParams.get('error'), null, `${scope}: ${landed.href}`)
        const tokens = await tokensFor(clientId, landed.searchParams.get('code')!, verifier)
        assert.equal(tokens.status, 200, JSON.stringify(tokens.body))
        const granted = (tokens.body.scope as string).split(' ')
        for (const unknown of ['profile', 'email', 'plinth:raed']) assert.ok(!granted.includes(unknown), `${scope}: ${granted.join(' ')}`)
        assert.ok(granted.includes('mcp'), `${scope}: every token carries mcp (${granted.join(' ')})`)
        assert.equal((await server.api('GET', '/v1/websites', { token: tokens.body.access_token })).status, 200)
      }
    })

    test('a device sign-in asking scopes Plinth does not know connects too, without them', async () => {
      const { visitor } = await person()
      const registered = await register({ client_name: 'Device', grant_types: [DEVICE_GRANT, 'refresh_token'], response_types: [], redirect_uris: [] })
      assert.equal(registered.status, 201, await registered.clone().text())
      const clientId = (await registered.json()).client_id as string
      const started = await post('/oauth/device/auth', { client_id: clientId, scope: 'mcp profile offline_access', resource: RESOURCE })
      assert.equal(started.status, 200, await started.clone().text())
      const { device_code: deviceCode, verification_uri_complete: complete } = await started.json()

      // The code page (reached with the code), then its confirm form, then the consent page.
      const confirmPage = await visitor.get(local(complete))
      assert.equal(confirmPage.status, 200, confirmPage.text.slice(0, 300))
      const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(confirmPage.text)?.[1] ?? ''
      const action = /<form method="post" action="([^"]+)"/.exec(confirmPage.text)![1]!
      const confirmed = await visitor.post(local(action), { _csrf: null, xsrf: field('xsrf'), user_code: field('user_code'), confirm: 'yes' })
      assert.equal(confirmed.status, 303, confirmed.text.slice(0, 300))
      let location = confirmed.headers.get('location')!
      const consent = await visitor.get(local(location))
      assert.equal(consent.status, 200, consent.text.slice(0, 300))
      const allowed = await visitor.post(local(location), { decision: 'allow' })
      assert.equal(allowed.status, 303, allowed.text.slice(0, 300))
      location = allowed.headers.get('location')!
      const done = await visitor.get(local(location))
      assert.match(done.text, /Device signed in/, done.text.slice(0, 300))

      const tokens = await post('/oauth/token', { grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: clientId })
      const body = await tokens.json()
      assert.equal(tokens.status, 200, JSON.stringify(body))
      assert.ok(!body.scope.split(' ').includes('profile'), body.scope)
      assert.ok(body.refresh_token, 'offline_access was granted')
      assert.equal((await server.api('GET', '/v1/websites', { token: body.access_token })).status, 200)
    })

    test('asking for more than was allowed asks again; the grant it replaces opens nothing any more', async () => {
      const { visitor } = await person()
      const clientId = await newClient()
      const first = pkce()
      const start = await visitor.get(codeRequest(clientId, first.challenge))
      const consentPath = start.headers.get('location')!
      await visitor.get(consentPath)
      const narrowed = await visitor.post(consentPath, { decision: 'allow', scoped: '1', capabilities: ['read'] })
      const resumed = await visitor.get(local(narrowed.headers.get('location')!))
      const readOnly = await tokensFor(clientId, new URL(resumed.headers.get('location')!).searchParams.get('code')!, first.verifier)
      assert.equal(readOnly.status, 200, JSON.stringify(readOnly.body))
      assert.equal(readOnly.body.scope, 'mcp plinth:read')
      assert.equal((await server.api('GET', '/v1/websites', { token: readOnly.body.access_token })).status, 200)

      // `mcp` asks for every capability, more than the person allowed: the consent page is shown again.
      const second = pkce()
      const landed = await authorize(visitor, codeRequest(clientId, second.challenge))
      const full = await tokensFor(clientId, landed.searchParams.get('code')!, second.verifier)
      assert.equal(full.status, 200, JSON.stringify(full.body))
      assert.match(full.body.scope, /plinth:manage/)
      assert.equal((await server.api('GET', '/v1/websites', { token: full.body.access_token })).status, 200)
      assert.equal((await server.api('GET', '/v1/websites', { token: readOnly.body.access_token })).status, 401, 'the replaced grant')
      const refresh = await post('/oauth/token', { grant_type: 'refresh_token', refresh_token: readOnly.body.refresh_token, client_id: clientId })
      assert.equal(refresh.status, 400, 'its refresh token is gone too')
    })

    test('the dashboard lists a connected app and disconnects it: its tokens stop working', async () => {
      const { visitor, clientId, tokens } = await connectedApp()
      const dashboard = await visitor.get('/dashboard')
      assert.match(dashboard.text, /<td[^>]*>Test Agent<\/td>/)
      assert.match(dashboard.text, /<td[^>]*>127\.0\.0\.1:43210<\/td>/)
      const disconnected = await visitor.post('/dashboard/apps/disconnect', { clientId })
      assert.equal(disconnected.status, 303)
      assert.doesNotMatch((await visitor.get('/dashboard')).text, /<td[^>]*>Test Agent<\/td>/)
      assert.equal((await mcpWith(tokens.access_token)).status, 401)
      const refresh = await post('/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientId })
      assert.equal(refresh.status, 400)
    })

    test('signing out everywhere and changing the password disconnect apps too', async () => {
      const everywhere = await connectedApp()
      await everywhere.visitor.get('/account')
      await everywhere.visitor.post('/account/sign-out-everywhere', {})
      assert.equal((await mcpWith(everywhere.tokens.access_token)).status, 401)

      const password = await connectedApp()
      await password.visitor.submit('/account', '/account/password', { currentPassword: PASSWORD, newPassword: 'another good password' })
      assert.equal((await mcpWith(password.tokens.access_token)).status, 401)
    })

    test('a registration nobody connects expires within a day and is swept away; a connected one is kept', async () => {
      const unused = await newClient()
      const connected = (await connectedApp()).clientId
      const clientRows = () =>
        server.server.db.kysely
          .selectFrom('oauth_models')
          .select(['id', 'expires_at'])
          .where('model', '=', 'Client')
          .where('id', 'in', [unused, connected])
          .execute()
      const expiry = Object.fromEntries((await clientRows()).map((c) => [c.id, c.expires_at]))
      const left = Date.parse(expiry[unused] ?? '') - Date.now()
      assert.ok(left > 22 * 3600 * 1000 && left <= 23 * 3600 * 1000, `an unused registration ends within a day: ${expiry[unused]}`)
      assert.equal(expiry[connected], null, 'a connected one is kept')

      await server.server.db.kysely
        .updateTable('oauth_models')
        .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
        .where('model', '=', 'Client')
        .where('id', '=', unused)
        .execute()
      const { visitor } = await person()
      const response = await visitor.get(codeRequest(unused, pkce().challenge))
      assert.equal(response.status, 400)
      assert.match(response.text, /invalid_client|client is invalid/)
      assert.ok((await server.server.oauth.sweep()) >= 1)
      assert.deepEqual(
        (await clientRows()).map((c) => c.id),
        [connected],
        'the unused registration is gone',
      )
    })
  })
}

describe('OAuth registrations: rate limit, metadata rules, sweep at start (sqlite)', () => {
  let server: TestServer
  before(async () => {
    server = await startTestServer('sqlite', { PLINTH_TRUST_PROXY: 'loopback' })
  })
  after(async () => server?.close())

  const register = (metadata: Record<string, unknown>, address: string) =>
    fetch(`${server.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
      body: JSON.stringify({ token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], ...metadata }),
    })
  const clientCount = async () =>
    Number(
      (
        await server.server.db.kysely
          .selectFrom('oauth_models')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('model', '=', 'Client')
          .executeTakeFirstOrThrow()
      ).n,
    )

  test('registrations are limited per client address: 429 in the OAuth error format, with Retry-After, and no client stored', async () => {
    const address = '192.0.2.10'
    for (let i = 0; i < OAUTH_REGISTRATIONS_PER_ADDRESS; i++) {
      assert.equal((await register({ client_name: `Agent ${i}`, redirect_uris: [LOOPBACK] }, address)).status, 201)
    }
    const before = await clientCount()
    const refused = await register({ client_name: 'One too many', redirect_uris: [LOOPBACK] }, address)
    assert.equal(refused.status, 429)
    assert.match(refused.headers.get('content-type')!, /^application\/json/)
    const retry = Number(refused.headers.get('retry-after'))
    assert.ok(retry > 0 && retry <= 15 * 60, `Retry-After in seconds: ${retry}`)
    const body = await refused.json()
    assert.equal(body.error, 'too_many_requests')
    assert.match(body.error_description, /Too many client registrations from this address\. Try again in \d+ minutes?\./)
    assert.equal(await clientCount(), before, 'nothing was registered')
    assert.equal((await register({ client_name: 'Elsewhere', redirect_uris: [LOOPBACK] }, '192.0.2.11')).status, 201, 'another address still registers')
  })

  test('metadata sizes are capped: client_name, each URI, every list; a refused registration stores nothing', async () => {
    const before = await clientCount()
    const many = Array.from({ length: OAUTH_CLIENT_LIST_MAX + 1 }, (_, i) => `http://127.0.0.1:${40000 + i}/cb`)
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['a long client_name', { client_name: 'x'.repeat(OAUTH_CLIENT_NAME_MAX_CHARS + 1), redirect_uris: [LOOPBACK] }, /client_name/],
      ['a long redirect URI', { redirect_uris: [`https://app.example/${'a'.repeat(OAUTH_CLIENT_URI_MAX_CHARS)}`] }, /redirect_uris/],
      ['a long client_uri', { redirect_uris: [LOOPBACK], client_uri: `https://app.example/${'a'.repeat(OAUTH_CLIENT_URI_MAX_CHARS)}` }, /client_uri/],
      ['a long logo_uri', { redirect_uris: [LOOPBACK], logo_uri: `https://app.example/${'a'.repeat(OAUTH_CLIENT_URI_MAX_CHARS)}` }, /logo_uri/],
      ['too many redirect URIs', { redirect_uris: many }, /redirect_uris must have at most/],
      ['too many contacts', { redirect_uris: [LOOPBACK], contacts: many.map((_, i) => `c${i}@example.com`) }, /contacts must have at most/],
    ]
    let n = 0
    for (const [label, metadata, message] of cases) {
      const response = await register({ client_name: 'Capped', ...metadata }, `192.0.2.${100 + n++}`)
      const body = await response.json()
      assert.equal(response.status, 400, `${label}: ${JSON.stringify(body).slice(0, 200)}`)
      assert.match(body.error, /^invalid_(client_metadata|redirect_uri)$/, label)
      assert.match(body.error_description, message, label)
    }
    const atLimit = await register({ client_name: 'x'.repeat(OAUTH_CLIENT_NAME_MAX_CHARS), redirect_uris: many.slice(1) }, '192.0.2.99')
    assert.equal(atLimit.status, 201, 'at the limits is fine')
    assert.equal(await clientCount(), before + 1)
  })

  test('redirect URIs: https, http on loopback only, or an app scheme', async () => {
    const before = await clientCount()
    let n = 0
    const attempt = async (uri: string) => (await register({ client_name: 'Redirects', redirect_uris: [uri] }, `192.0.2.${150 + n++}`)).status
    for (const uri of [
      'https://app.example/callback',
      'http://127.0.0.1:9999/cb',
      'http://[::1]:9999/cb',
      'http://localhost/cb',
      'com.example.app:/oauth2redirect',
      'cursor://anysphere.cursor-retrieval/cb',
    ]) {
      assert.equal(await attempt(uri), 201, uri)
    }
    const refused = [
      'http://app.example/callback',
      'http://192.168.1.20:8080/cb',
      'http://127.0.0.1.evil.example/cb',
      'javascript:alert(1)',
      'data:text/html,hi',
      'file:///etc/passwd',
      'ws://127.0.0.1/cb',
      'mailto:someone@example.com',
      '/relative/callback',
    ]
    for (const uri of refused) assert.equal(await attempt(uri), 400, uri)
    assert.equal(await clientCount(), before + 6, 'no refused registration was stored')
  })

  test('expired registrations are swept when Plinth starts', async () => {
    const response = await register({ client_name: 'Forgotten', redirect_uris: [LOOPBACK] }, '192.0.2.200')
    const clientId = (await response.json()).client_id as string
    const config = server.config
    const store = server.store
    await server.server.db.kysely
      .updateTable('oauth_models')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('id', '=', clientId)
      .execute()
    await server.server.close()
    server = await startOnStore(store, config)
    const row = await server.server.db.kysely.selectFrom('oauth_models').select('id').where('id', '=', clientId).executeTakeFirst()
    assert.equal(row, undefined)
  })
})

describe('OAuth cookies on https behind a trusted proxy', () => {
  const authorizationCookies = async (server: TestServer, headers: Record<string, string>) => {
    const registered = await fetch(`${server.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ client_name: 'Proxied', redirect_uris: [LOOPBACK], token_endpoint_auth_method: 'none', grant_types: ['authorization_code'] }),
    })
    assert.equal(registered.status, 201)
    const { client_id: clientId } = await registered.json()
    const params = {
      client_id: clientId,
      response_type: 'code',
      redirect_uri: LOOPBACK,
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
      resource: `${server.config.baseUrl}/mcp`,
    }
    const start = await fetch(`${server.url}/oauth/authorize?${new URLSearchParams(params)}`, { redirect: 'manual', headers })
    assert.equal(start.status, 303, await start.text())
    const cookies = start.headers.getSetCookie().filter((c) => c.startsWith('plinth_oauth_'))
    assert.ok(cookies.length > 0, 'the library sets its interaction cookies')
    return cookies
  }

  test("served over https (an https base URL, TLS at the proxy): the library's cookies are Secure", async () => {
    const server = await startTestServer('sqlite', { PLINTH_BASE_URL: 'https://plinth.test', PLINTH_TRUST_PROXY: 'loopback' })
    try {
      for (const cookie of await authorizationCookies(server, { 'x-forwarded-proto': 'https', 'x-forwarded-for': '198.51.100.7' })) {
        assert.match(cookie, /; secure/i, cookie)
        assert.match(cookie, /; httponly/i, cookie)
        assert.match(cookie, /; samesite=lax/i, cookie)
      }
    } finally {
      await server.close()
    }
  })

  test('on plain http a forged X-Forwarded-Proto changes nothing: the cookies are not Secure', async () => {
    const server = await startTestServer('sqlite')
    try {
      for (const cookie of await authorizationCookies(server, { 'x-forwarded-proto': 'https' })) assert.doesNotMatch(cookie, /; secure/i, cookie)
    } finally {
      await server.close()
    }
  })
})

describe('OAuth client ID metadata documents (an https client_id URL)', () => {
  let server: TestServer
  let documents: https.Server
  let origin: string
  let dir: string
  const served = new Map<string, unknown>()

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'plinth-cimd-'))
    // A certificate for localhost, trusted by Plinth's fetcher through PLINTH_FETCH_CA_FILE.
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=DNS:localhost',
        '-keyout',
        path.join(dir, 'key.pem'),
        '-out',
        path.join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    )
    documents = https.createServer({ key: readFileSync(path.join(dir, 'key.pem')), cert: readFileSync(path.join(dir, 'cert.pem')) }, (req, res) => {
      const body = served.get(req.url ?? '')
      res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' }).end(body ? JSON.stringify(body) : '{}')
    })
    await new Promise<void>((resolve) => documents.listen(0, '127.0.0.1', resolve))
    const { port } = documents.address() as AddressInfo
    origin = `https://localhost:${port}`
    server = await startTestServer('sqlite', { PLINTH_FETCH_CA_FILE: path.join(dir, 'cert.pem'), PLINTH_FETCH_ALLOW_HOSTS: `localhost:${port}` })
  })
  after(async () => {
    await server?.close()
    documents?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  const document = (name: string, body: Record<string, unknown> = {}) => {
    const clientId = `${origin}/${name}.json`
    served.set(`/${name}.json`, {
      client_id: clientId,
      client_name: 'Metadata Agent',
      redirect_uris: [LOOPBACK],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...body,
    })
    return clientId
  }

  test('a client known only by its metadata document URL connects without registering (and without asking a scope)', async () => {
    const clientId = document('agent')
    const visitor = new WebVisitor(server)
    await visitor.signUp(uniqueEmail('cimd'), PASSWORD)
    const { verifier, challenge } = pkce()
    const params = {
      client_id: clientId,
      response_type: 'code',
      redirect_uri: LOOPBACK,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      resource: RESOURCE,
    }
    const start = await visitor.get(`/oauth/authorize?${new URLSearchParams(params)}`)
    assert.equal(start.status, 303, start.text.slice(0, 300))
    const connect = start.headers.get('location')!
    const consent = await visitor.get(connect)
    assert.match(consent.text, /<h1>Connect Metadata Agent<\/h1>/)
    const allowed = await visitor.post(connect, { decision: 'allow' })
    const resumed = await visitor.get(new URL(allowed.headers.get('location')!).pathname)
    const code = new URL(resumed.headers.get('location')!).searchParams.get('code')!
    const token = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: LOOPBACK, code_verifier: verifier }),
    })
    const tokens = await token.json()
    assert.equal(token.status, 200, JSON.stringify(tokens))
    assert.equal((await server.api('GET', '/v1/websites', { token: tokens.access_token })).status, 200)
  })

  test('a document that names another client_id, breaks the redirect URI or size rules, or a URL the fetcher may not reach, is refused', async () => {
    const visitor = new WebVisitor(server)
    await visitor.signUp(uniqueEmail('cimd-bad'), PASSWORD)
    const attempt = (clientId: string) =>
      visitor.get(
        `/oauth/authorize?${new URLSearchParams({ client_id: clientId, response_type: 'code', redirect_uri: LOOPBACK, code_challenge: pkce().challenge, code_challenge_method: 'S256', resource: RESOURCE })}`,
      )
    const plainHttp = document('plain-http', { redirect_uris: ['http://app.example/callback'] })
    const refusedRedirect = await visitor.get(
      `/oauth/authorize?${new URLSearchParams({ client_id: plainHttp, response_type: 'code', redirect_uri: 'http://app.example/callback', code_challenge: pkce().challenge, code_challenge_method: 'S256', resource: RESOURCE })}`,
    )
    assert.equal(refusedRedirect.status, 400, 'a document with a plain-http redirect URI off loopback is refused')
    assert.equal(refusedRedirect.headers.get('location'), null)
    assert.equal((await attempt(document('long-name', { client_name: 'x'.repeat(OAUTH_CLIENT_NAME_MAX_CHARS + 1) }))).status, 400, 'sizes are capped too')
    const mismatched = document('mismatch', { client_id: `${origin}/someone-else.json` })
    assert.equal((await attempt(mismatched)).status, 400)
    // Not on the allow list: 127.0.0.1 is a loopback address, which client documents may not be fetched from.
    const blocked = await attempt(`https://127.0.0.1:${new URL(origin).port}/agent.json`)
    assert.equal(blocked.status, 400)
    assert.match(blocked.text, /invalid_client|client/i)
  })
})
