/** What each kind of answer says about caching (docs/guide/scaling.md, "Caching and CDNs"). */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { bundle, startTestServer, type TestServer } from '../helpers/server.ts'

describe('Cache-Control by kind of answer', () => {
  let server: TestServer
  before(async () => {
    server = await startTestServer('sqlite')
  })
  after(() => server?.close())

  test('REST and MCP answers, errors included, are never stored by a shared cache', async () => {
    const { token } = await server.user()
    const created = await server.api('POST', '/v1/websites', { token, body: { slug: 'cached', category: 'other', files: bundle('Cached') } })
    for (const res of [
      created,
      await server.api('GET', '/v1'),
      await server.api('GET', '/v1/websites', { token }),
      await server.api('GET', '/v1/websites?x=1', { token }),
      await server.api('GET', '/v1/websites'),
      await server.api('GET', '/v1/no-such-thing', { token }),
      await server.api('POST', '/mcp', {
        token,
        headers: { accept: 'application/json, text/event-stream' },
        body: {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
        },
      }),
    ]) {
      assert.equal(res.headers.get('cache-control'), 'no-store', `${res.status} ${res.text.slice(0, 80)}`)
    }
  })

  test('site files revalidate, and built-in pages are not stored', async () => {
    const page = await server.site('cached', '/')
    assert.equal(page.headers['cache-control'], 'public, max-age=0, must-revalidate')
    const missing = await server.site('no-such-site', '/')
    assert.equal(missing.headers['cache-control'], 'no-store')
  })
})
