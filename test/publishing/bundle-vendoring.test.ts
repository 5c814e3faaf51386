/**
 * The fetcher a server brings files in with (safeVendorFetch): the SSRF-safe fetcher with the
 * instance's allowed hosts, against a real HTTP host on 127.0.0.1: an allowed host is fetched,
 * the same address under another name or port is refused unasked, and an answer that never
 * comes is given up at the time limit.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { safeVendorFetch } from '../../src/publishing/bundle-vendoring.ts'
import { SCRIPT, startVendorHost, type VendorHost } from '../helpers/vendor-host.ts'

describe('the server fetcher of vendor: true', () => {
  let host: VendorHost
  before(async () => {
    host = await startVendorHost()
  })
  after(() => host?.close())

  const limits = { maxBytes: 256 * 1024, timeoutMs: 20_000, maxRedirects: 3 }

  test('fetches from an allowed host; refuses the same machine by another name, without asking it', async () => {
    const fetch = safeVendorFetch({ allowHosts: new Set([host.env.PLINTH_FETCH_ALLOW_HOSTS]), userAgent: 'Plinth/test' })
    assert.equal((await fetch(`${host.origin}/lib/app.js`, limits)).bytes.toString(), SCRIPT)
    const asked = host.hits.get('/lib/app.js')
    await assert.rejects(fetch(host.origin.replace('127.0.0.1', 'localhost') + '/lib/app.js', limits), /blocked: localhost resolves to .*a loopback address/)
    await assert.rejects(fetch('http://10.0.0.1/x.js', limits), /blocked: 10\.0\.0\.1 is a private address/)
    assert.equal(host.hits.get('/lib/app.js'), asked)
  })

  test('an answer that never comes is given up at the time limit', async () => {
    const fetch = safeVendorFetch({ allowHosts: new Set([host.env.PLINTH_FETCH_ALLOW_HOSTS]), userAgent: 'Plinth/test' })
    await assert.rejects(fetch(`${host.origin}/slow.js`, { ...limits, timeoutMs: 200 }), /took longer than 200 ms; stopped/)
  })
})
