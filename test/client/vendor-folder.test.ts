/**
 * The fetcher `plinth deploy --vendor` brings files in with: the platform's fetch, bounded in
 * bytes, redirects and time, against a real HTTP host on 127.0.0.1.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { plainVendorFetch } from '../../src/client/vendor-folder.ts'
import { SCRIPT, startVendorHost, type VendorHost } from '../helpers/vendor-host.ts'

describe('the deploy command fetcher', () => {
  let host: VendorHost
  before(async () => {
    host = await startVendorHost()
  })
  after(() => host?.close())

  const limits = { maxBytes: 256 * 1024, timeoutMs: 20_000, maxRedirects: 3 }

  test('fetches a file with its type', async () => {
    const fetched = await plainVendorFetch(`${host.origin}/lib/app.js`, limits)
    assert.equal(fetched.bytes.toString(), SCRIPT)
    assert.equal(fetched.contentType, 'application/javascript')
    assert.equal(fetched.finalUrl, `${host.origin}/lib/app.js`)
  })

  test('refuses a huge answer at the cap, a redirect loop, an answer that never comes, a 404', async () => {
    await assert.rejects(plainVendorFetch(`${host.origin}/huge.js`, limits), /is larger than 262144 bytes, the most a file may hold; stopped reading/)
    await assert.rejects(plainVendorFetch(`${host.origin}/loop.js`, limits), /redirected more than 3 times; gave up/)
    await assert.rejects(plainVendorFetch(`${host.origin}/slow.js`, { ...limits, timeoutMs: 200 }), /took longer than 200 ms; stopped/)
    await assert.rejects(plainVendorFetch(`${host.origin}/missing.js`, limits), /answered HTTP 404/)
  })
})
