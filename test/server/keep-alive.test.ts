/**
 * Idle keep-alive connections stay open longer than the proxies in front of Plinth keep theirs
 * (60 s for most), so it is the proxy that closes one, never the server under a request the
 * proxy is sending: every answer, the API's and a site's, says so in its Keep-Alive header.
 */
import assert from 'node:assert/strict'
import http from 'node:http'
import { after, before, describe, test } from 'node:test'
import { KEEP_ALIVE_TIMEOUT_MS } from '../../src/core/limits.ts'
import { createSite } from '../helpers/factories.ts'
import { SITE_DOMAIN, startTestServer, type TestServer } from '../helpers/server.ts'

/** The Keep-Alive header of a GET answered on a kept-alive connection. */
function keepAliveOf(url: string, host?: string): Promise<string | undefined> {
  const agent = new http.Agent({ keepAlive: true })
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, headers: host ? { host } : {} }, (res) => {
      res.resume()
      res.on('end', () => {
        agent.destroy()
        const value = res.headers['keep-alive']
        resolve(Array.isArray(value) ? value.join(', ') : value)
      })
    })
    req.on('error', reject)
  })
}

describe('keep-alive connections', () => {
  let server: TestServer
  before(async () => {
    server = await startTestServer('sqlite')
  })
  after(() => server?.close())

  test('the API and the sites keep an idle connection open longer than a proxy keeps its own', async () => {
    const seconds = KEEP_ALIVE_TIMEOUT_MS / 1000
    assert.ok(seconds > 60, 'longer than the 60 s idle timeout of most proxies and load balancers')
    assert.equal(await keepAliveOf(`${server.url}/v1`), `timeout=${seconds}`)
    const site = await createSite(server)
    assert.equal(await keepAliveOf(`${server.url}/`, `${site.slug}.${SITE_DOMAIN}`), `timeout=${seconds}`)
  })
})
