/**
 * Authentication of the REST API: the public index, bearer tokens (missing, malformed, unknown,
 * revoked, expired, limited to MCP), the WWW-Authenticate challenges, the RFC 9728
 * protected-resource metadata, and how tokens are stored.
 */

import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { BASE_URL, bundle, startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

const METADATA_URL = `${BASE_URL}/.well-known/oauth-protected-resource`
const CHALLENGE = `Bearer resource_metadata="${METADATA_URL}"`

/** Every authenticated /v1 route, with a well-formed request for it. */
const PROTECTED_ROUTES: Array<{ method: string; path: string; body?: unknown }> = [
  { method: 'GET', path: '/v1/websites' },
  { method: 'POST', path: '/v1/websites', body: { name: 'Anonymous', category: 'other', files: bundle() } },
  { method: 'GET', path: '/v1/websites/web_unknown' },
  { method: 'GET', path: '/v1/websites/web_unknown/versions' },
  { method: 'POST', path: '/v1/websites/web_unknown/versions', body: { files: bundle() } },
  { method: 'POST', path: '/v1/websites/web_unknown/versions/job_unknown/promote' },
  { method: 'GET', path: '/v1/jobs/job_unknown' },
  { method: 'GET', path: '/v1/slugs/suggest?value=bakery' },
]

/** A token of the right shape (plinth_ + 43 base62 characters) that was never issued. */
const UNKNOWN_TOKEN = `plinth_${'A1b2C3d4E5'.repeat(4)}xyz`

function assertEnvelope(body: any, code: string): void {
  assert.equal(typeof body, 'object', 'the body is a JSON error envelope')
  assert.equal(body.error.code, code)
  assert.equal(typeof body.error.message, 'string')
  assert.ok(body.error.message.length > 0, 'the message explains the error')
}

function assertInvalidTokenChallenge(header: string | null): void {
  assert.ok(header, 'a WWW-Authenticate header is sent')
  assert.ok(header.startsWith(CHALLENGE), `challenge points at the metadata document: ${header}`)
  assert.match(header, /error="invalid_token"/)
}

for (const store of STORES) {
  describe(`REST authentication (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    before(async () => {
      server = await startTestServer(store.name)
    })
    after(() => server?.close())

    const tokenRow = (id: string) => server.server.db.kysely.selectFrom('tokens').selectAll().where('id', '=', id).executeTakeFirstOrThrow()

    test('GET /v1 needs no token and returns every ApiIndex field', async () => {
      const res = await server.api('GET', '/v1')
      assert.equal(res.status, 200)
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/)
      assert.deepEqual(Object.keys(res.body).sort(), [
        'bundleLimits',
        'documentation',
        'llms',
        'mcp',
        'name',
        'openapi',
        'protectedResourceMetadata',
        'tokens',
        'version',
      ])
      assert.deepEqual(res.body.bundleLimits, { maxFiles: 40, maxFileBytes: 2 * 1024 * 1024, maxBundleBytes: 8 * 1024 * 1024, maxHtmlPages: 15 })
      assert.equal(res.body.name, 'Plinth')
      assert.equal(typeof res.body.version, 'string')
      assert.equal(res.body.openapi, `${BASE_URL}/openapi.json`)
      assert.equal(res.body.mcp, `${BASE_URL}/mcp`)
      assert.equal(res.body.protectedResourceMetadata, METADATA_URL)
      // The site URL defaults to the base URL.
      assert.equal(res.body.tokens, `${BASE_URL}/mcp`)
      assert.equal(res.body.documentation, `${BASE_URL}/docs`)
      assert.equal(res.body.llms, `${BASE_URL}/llms.txt`)
      for (const field of ['openapi', 'mcp', 'protectedResourceMetadata', 'tokens', 'documentation', 'llms']) {
        assert.doesNotThrow(() => new URL(res.body[field]), `${field} is an absolute URL`)
      }
    })

    test('every other /v1 route without a token is 401 AUTH_REQUIRED with a Bearer challenge naming the metadata document', async () => {
      for (const route of PROTECTED_ROUTES) {
        const res = await server.api(route.method, route.path, { body: route.body })
        assert.equal(res.status, 401, `${route.method} ${route.path}`)
        assertEnvelope(res.body, 'AUTH_REQUIRED')
        assert.equal(res.headers.get('www-authenticate'), CHALLENGE, `${route.method} ${route.path}`)
      }
    })

    test('an anonymous request is refused before its body is read', async () => {
      const res = await server.api('POST', '/v1/websites', { body: '{not json' })
      assert.equal(res.status, 401)
      assertEnvelope(res.body, 'AUTH_REQUIRED')
      assert.equal(res.headers.get('www-authenticate'), CHALLENGE)
    })

    test('a malformed Authorization header is 401 with error="invalid_token"', async () => {
      for (const authorization of ['Basic x', 'Bearer', 'Bearer plinth_short', 'Bearer not_a_plinth_token_at_all_0123456789abcdefghij', 'Token plinth_abc']) {
        const res = await server.api('GET', '/v1/websites', { headers: { authorization } })
        assert.equal(res.status, 401, authorization)
        assertEnvelope(res.body, 'AUTH_REQUIRED')
        assertInvalidTokenChallenge(res.headers.get('www-authenticate'))
      }
    })

    test('a well-formed token that was never issued is 401 with error="invalid_token"', async () => {
      const res = await server.api('GET', '/v1/websites', { token: UNKNOWN_TOKEN })
      assert.equal(res.status, 401)
      assertEnvelope(res.body, 'AUTH_REQUIRED')
      assertInvalidTokenChallenge(res.headers.get('www-authenticate'))
    })

    test('a revoked token stops working at once: 401 with error="invalid_token"', async () => {
      const user = await server.user()
      assert.equal((await server.api('GET', '/v1/websites', { token: user.token })).status, 200)

      await server.server.services.tokens.revoke(null, user.tokenId)
      const res = await server.api('GET', '/v1/websites', { token: user.token })
      assert.equal(res.status, 401)
      assertEnvelope(res.body, 'AUTH_REQUIRED')
      assert.match(res.body.error.message, /revoked/i)
      assertInvalidTokenChallenge(res.headers.get('www-authenticate'))
      assert.notEqual((await tokenRow(user.tokenId)).revoked_at, null)
    })

    test('an expired token is 401 with error="invalid_token"', async () => {
      const user = await server.user()
      const { token, row } = await server.server.services.tokens.create(user.id, {
        name: 'Short-lived',
        access: 'rest',
        expiresAt: new Date(Date.now() + 60 * 60 * 1000).toISOString(),
      })
      assert.equal((await server.api('GET', '/v1/websites', { token })).status, 200, 'works before it expires')

      await server.server.db.kysely
        .updateTable('tokens')
        .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
        .where('id', '=', row.id)
        .execute()
      const res = await server.api('GET', '/v1/websites', { token })
      assert.equal(res.status, 401)
      assertEnvelope(res.body, 'AUTH_REQUIRED')
      assert.match(res.body.error.message, /expired/i)
      assertInvalidTokenChallenge(res.headers.get('www-authenticate'))
    })

    test('a token limited to MCP is 403 TOKEN_NOT_ALLOWED on /v1 with error="insufficient_scope"', async () => {
      const user = await server.user(undefined, 'mcp')
      for (const route of PROTECTED_ROUTES.filter((_route, i) => [0, 1, 7].includes(i))) {
        const res = await server.api(route.method, route.path, { token: user.token, body: route.body })
        assert.equal(res.status, 403, `${route.method} ${route.path}`)
        assertEnvelope(res.body, 'TOKEN_NOT_ALLOWED')
        const header = res.headers.get('www-authenticate') ?? ''
        assert.ok(header.startsWith(CHALLENGE), header)
        assert.match(header, /error="insufficient_scope"/)
      }
      // Nothing was published by the refused POST.
      const sites = await server.server.db.kysely.selectFrom('websites').select('id').where('owner_id', '=', user.id).execute()
      assert.equal(sites.length, 0)
    })

    test('tokens with access rest and both reach the REST API', async () => {
      for (const access of ['rest', 'both'] as const) {
        const user = await server.user(undefined, access)
        const list = await server.api('GET', '/v1/websites', { token: user.token })
        assert.equal(list.status, 200, access)
        assert.deepEqual(list.body.items, [])
        const created = await server.api('POST', '/v1/websites', {
          token: user.token,
          body: { name: `Site for ${access}`, category: 'other', files: bundle() },
        })
        assert.equal(created.status, 201, access)
      }
    })

    test('the scheme name is accepted case-insensitively', async () => {
      const user = await server.user()
      const res = await server.api('GET', '/v1/websites', { headers: { authorization: `bearer ${user.token}` } })
      assert.equal(res.status, 200)
    })

    test('last_used_at is set once a token is used', async () => {
      const user = await server.user()
      const before = await tokenRow(user.tokenId)
      assert.equal(before.last_used_at, null, 'a fresh token was never used')

      assert.equal((await server.api('GET', '/v1/websites', { token: user.token })).status, 200)
      const after = await tokenRow(user.tokenId)
      assert.equal(typeof after.last_used_at, 'string')
      assert.ok(!Number.isNaN(Date.parse(after.last_used_at as string)), 'last_used_at is a timestamp')
      assert.ok(Date.parse(after.last_used_at as string) >= Date.parse(after.created_at), 'used after it was created')
    })

    test('a refused token is not marked as used', async () => {
      const user = await server.user(undefined, 'both')
      await server.server.services.tokens.revoke(null, user.tokenId)
      await server.api('GET', '/v1/websites', { token: user.token })
      assert.equal((await tokenRow(user.tokenId)).last_used_at, null)
    })

    test('the protected-resource metadata of the REST API names the base URL, scope mcp and header tokens', async () => {
      const res = await server.api('GET', '/.well-known/oauth-protected-resource')
      assert.equal(res.status, 200)
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/)
      assert.equal(res.body.resource, BASE_URL)
      assert.deepEqual(res.body.scopes_supported, ['mcp'])
      assert.deepEqual(res.body.bearer_methods_supported, ['header'])
    })

    test('the protected-resource metadata of the MCP endpoint names exactly <base>/mcp', async () => {
      const res = await server.api('GET', '/.well-known/oauth-protected-resource/mcp')
      assert.equal(res.status, 200)
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/)
      assert.equal(res.body.resource, `${BASE_URL}/mcp`)
      assert.ok(!res.body.resource.endsWith('/'), 'no trailing slash')
      assert.deepEqual(res.body.scopes_supported, ['mcp'])
      assert.deepEqual(res.body.bearer_methods_supported, ['header'])
    })

    test('only a hash of a token is stored, never the secret', async () => {
      const user = await server.user()
      const secret = user.token.slice('plinth_'.length)
      assert.match(user.token, /^plinth_[A-Za-z0-9]{43}$/, 'tokens look like plinth_<43 base62 characters>')

      const rows = await server.server.db.kysely.selectFrom('tokens').selectAll().execute()
      const row = rows.find((r) => r.id === user.tokenId)
      assert.ok(row, 'the token has a row')
      assert.match(row.token_hash, /^[0-9a-f]{64}$/, 'a SHA-256 hex digest')
      const stored = JSON.stringify(rows)
      assert.ok(!stored.includes(user.token), 'the token itself is not stored')
      assert.ok(!stored.includes(secret), 'its secret part is not stored')
      // A hint short enough to tell tokens apart but useless to an attacker.
      assert.ok(user.token.startsWith(row.token_hint))
      assert.ok(row.token_hint.length - 'plinth_'.length <= 8)
    })
  })
}
