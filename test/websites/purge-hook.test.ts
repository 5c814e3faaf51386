import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { bundle, startTestServer, type TestServer } from '../helpers/server.ts'

interface PurgeCall {
  event: string
  websiteId: string
  hosts: string[]
  urls: string[]
}

/** A CDN's purge endpoint on loopback: records each call; `failNext` answers that many with a 503 first. */
async function purgeReceiver() {
  const calls: PurgeCall[] = []
  let failNext = 0
  let attempts = 0
  const server = http.createServer((req, res) => {
    let body = ''
    req.on('data', (chunk) => (body += chunk))
    req.on('end', () => {
      attempts++
      if (failNext > 0) {
        failNext--
        res.writeHead(503).end()
        return
      }
      assert.equal(req.method, 'POST')
      assert.equal(req.headers['content-type'], 'application/json')
      calls.push(JSON.parse(body))
      res.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/purge`,
    calls,
    failFirst: (n: number) => (failNext = n),
    attempts: () => attempts,
    /** Waits (up to 20 s, for the retries) until `n` calls arrived. */
    async received(n: number) {
      for (let waited = 0; calls.length < n && waited < 20_000; waited += 25) await new Promise((r) => setTimeout(r, 25))
      return calls.slice(0, n)
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

describe('the CDN purge hook (PLINTH_PURGE_URL)', () => {
  let receiver: Awaited<ReturnType<typeof purgeReceiver>>
  let server: TestServer
  before(async () => {
    receiver = await purgeReceiver()
    server = await startTestServer('sqlite', { PLINTH_PURGE_URL: receiver.url })
  })
  after(async () => {
    await server?.close()
    await receiver?.close()
  })

  test('a site going live, a promotion and a deletion each call it with the site host; a stored-only version does not', async () => {
    const user = await server.user()
    const created = await server.api('POST', '/v1/websites', { token: user.token, body: { slug: 'purged-site', category: 'other', files: bundle('One') } })
    assert.equal(created.status, 201, created.text)
    const id = created.body.websiteId
    const host = 'purged-site.plinth.test:8080'
    const expected = (event: string) => ({ event, websiteId: id, hosts: [host], urls: [`http://${host}/`] })
    assert.deepEqual(await receiver.received(1), [expected('promote')])

    const stored = await server.api('POST', `/v1/websites/${id}/versions`, { token: user.token, body: { files: bundle('Two'), promote: false } })
    assert.equal(stored.status, 201, stored.text)
    const promoted = await server.api('POST', `/v1/websites/${id}/versions/2/promote`, { token: user.token })
    assert.equal(promoted.status, 200, promoted.text)
    assert.deepEqual(await receiver.received(2), [expected('promote'), expected('promote')], 'the stored version called nothing; its promotion did')

    const deleted = await server.api('DELETE', `/v1/websites/${id}`, { token: user.token })
    assert.equal(deleted.status, 204, deleted.text)
    assert.deepEqual((await receiver.received(3))[2], expected('delete'))
  })

  test('a purge endpoint that fails is tried again, and never fails the publish', async () => {
    const user = await server.user()
    receiver.failFirst(2)
    const before = receiver.calls.length
    const attemptsBefore = receiver.attempts()
    const created = await server.api('POST', '/v1/websites', { token: user.token, body: { slug: 'purge-retried', category: 'other', files: bundle('Retry') } })
    assert.equal(created.status, 201, 'the publish answers whatever the hook does')
    const calls = await receiver.received(before + 1)
    assert.equal(calls.length, before + 1, 'the third try got through')
    assert.equal(calls[before]!.hosts[0], 'purge-retried.plinth.test:8080')
    assert.equal(receiver.attempts() - attemptsBefore, 3)
  })
})
