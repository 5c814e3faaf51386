/**
 * SSRF-safe fetching against real HTTP servers on 127.0.0.1. Loopback is refused unless the test
 * host is allowed; private, link-local and metadata addresses are refused before any connection;
 * redirects are checked hop by hop; size, time and redirect limits hold; nothing personal is sent.
 */

import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import zlib from 'node:zlib'
import { AppError } from '../../src/core/errors.ts'
import { statusOf } from '../../src/http/error-status.ts'
import { normalizeHostEntry, parseHostList } from '../../src/net/allow-hosts.ts'
import { addressProblem } from '../../src/net/public-address.ts'
import { type SafeFetchOptions, safeFetch } from '../../src/net/safe-fetch.ts'
import { PNG } from '../helpers/factories.ts'

let server: http.Server
let port = 0
let origin = ''
const requests: Array<{ url: string; headers: http.IncomingHttpHeaders }> = []

const options = (allow: string[] = [], extra: Partial<SafeFetchOptions> = {}): SafeFetchOptions => ({
  allowHosts: new Set(allow),
  maxBytes: 2 * 1024 * 1024,
  // Large on purpose: a refusal must come from the address check, never from a timeout.
  connectTimeoutMs: 60_000,
  totalTimeoutMs: 60_000,
  maxRedirects: 5,
  ...extra,
})

async function refused(url: string, opts: SafeFetchOptions, pattern: RegExp): Promise<string> {
  let message = ''
  await assert.rejects(safeFetch(url, opts), (error: any) => {
    assert.ok(error instanceof AppError)
    assert.equal(error.code, 'FETCH_FAILED')
    assert.equal(statusOf(error), 422)
    message = error.message
    assert.match(error.message, pattern)
    return true
  })
  return message
}

describe('safeFetch', () => {
  before(async () => {
    server = http.createServer((req, res) => {
      requests.push({ url: req.url ?? '', headers: req.headers })
      const path = req.url ?? '/'
      if (path === '/image.png') return void res.writeHead(200, { 'content-type': 'image/png', 'set-cookie': 'a=b' }).end(PNG)
      if (path === '/to-private') return void res.writeHead(302, { location: 'http://10.0.0.1/secret' }).end()
      if (path === '/to-metadata') return void res.writeHead(301, { location: 'http://169.254.169.254/latest/meta-data/' }).end()
      if (path === '/to-localhost') return void res.writeHead(307, { location: `http://localhost:${port}/image.png` }).end()
      if (path === '/to-file') return void res.writeHead(302, { location: 'file:///etc/passwd' }).end()
      if (path === '/relative-redirect') return void res.writeHead(302, { location: '/image.png' }).end()
      if (path.startsWith('/loop/')) return void res.writeHead(302, { location: `/loop/${Number(path.slice(6)) + 1}` }).end()
      if (path === '/big') {
        res.writeHead(200, { 'content-type': 'image/png' })
        const chunk = Buffer.alloc(64 * 1024)
        let sent = 0
        const push = () => {
          while (sent < 64 && res.write(chunk)) sent++
          if (sent < 64) res.once('drain', push)
          else res.end()
        }
        return void push()
      }
      if (path === '/big-declared') return void res.writeHead(200, { 'content-length': String(10 * 1024 * 1024) }).end()
      if (path === '/gzip-bomb') return void res.writeHead(200, { 'content-encoding': 'gzip' }).end(zlib.gzipSync(Buffer.alloc(8 * 1024 * 1024)))
      if (path === '/gzip') return void res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'image/png' }).end(zlib.gzipSync(PNG))
      if (path === '/missing') return void res.writeHead(404).end('no')
      if (path === '/hang') return void res.flushHeaders()
      res.writeHead(500).end()
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as AddressInfo).port
    origin = `http://127.0.0.1:${port}`
  })
  after(() => new Promise<void>((resolve) => server.close(() => resolve())))

  test('an allowed test host works, and gets no cookies, credentials or Authorization', async () => {
    requests.length = 0
    const result = await safeFetch(`${origin}/image.png`, options([`127.0.0.1:${port}`], { userAgent: 'Plinth/1.0 (+http://localhost:8080)' }))
    assert.equal(result.status, 200)
    assert.equal(result.contentType, 'image/png')
    assert.deepEqual(result.bytes, PNG)
    assert.equal(result.finalUrl, `${origin}/image.png`)
    const [request] = requests
    assert.ok(request, 'the test host was asked')
    const { headers } = request
    assert.equal(headers['user-agent'], 'Plinth/1.0 (+http://localhost:8080)')
    assert.equal(headers.cookie, undefined)
    assert.equal(headers.authorization, undefined)
  })

  test('allow entries match by host, or by host and port', async () => {
    await safeFetch(`${origin}/image.png`, options(['127.0.0.1']))
    await refused(`${origin}/image.png`, options([`127.0.0.1:${port + 1}`]), /blocked: 127\.0\.0\.1 is a loopback address/)
  })

  test('127.0.0.1 is refused when not allowed, and nothing reaches the server', async () => {
    requests.length = 0
    await refused(`${origin}/image.png`, options(), /blocked: 127\.0\.0\.1 is a loopback address/)
    assert.equal(requests.length, 0)
  })

  test('10.0.0.1 and 169.254.169.254 are refused before any connection attempt', async () => {
    // connectTimeoutMs and totalTimeoutMs are a minute: an attempted connection to these
    // unroutable addresses would time out, not be "blocked".
    await refused('http://10.0.0.1/', options(), /blocked: 10\.0\.0\.1 is a private address/)
    await refused('http://169.254.169.254/latest/meta-data/', options(), /blocked: 169\.254\.169\.254 is a link-local address/)
    await refused('http://[fd00:ec2::254]/', options(), /blocked: fd00:ec2::254 is a unique-local/)
    await refused('http://0x7f.1/', options(), /blocked: 127\.0\.0\.1 is a loopback/)
    await refused('http://[::ffff:10.0.0.1]/', options(), /blocked: ::ffff:a00:1 is a private address/)
  })

  test('[::1] is refused', async () => {
    await refused(`http://[::1]:${port}/image.png`, options(), /blocked: ::1 is a loopback address/)
  })

  test('a host name resolving to loopback is refused: localhost, and any name via a custom resolver', async () => {
    await refused(`http://localhost:${port}/image.png`, options(), /blocked: localhost resolves to (127\.0\.0\.1|::1), a loopback address/)
    const resolve = () => Promise.resolve([{ address: '127.0.0.1', family: 4 }])
    await refused(`http://images.example.com:${port}/image.png`, options([], { resolve }), /blocked: images\.example\.com resolves to 127\.0\.0\.1/)
    // One bad address among good ones is enough to refuse the host.
    const mixed = () =>
      Promise.resolve([
        { address: '93.184.216.34', family: 4 },
        { address: '10.1.2.3', family: 4 },
      ])
    await refused(`http://mixed.example.com:${port}/`, options([], { resolve: mixed }), /resolves to 10\.1\.2\.3, a private address/)
    // Allowed by name, the same host connects to the address the resolver gave.
    const ok = await safeFetch(`http://images.example.com:${port}/image.png`, options(['images.example.com'], { resolve }))
    assert.deepEqual(ok.bytes, PNG)
  })

  test('a redirect from an allowed host to a private address is refused', async () => {
    await refused(
      `${origin}/to-private`,
      options(['127.0.0.1']),
      /http:\/\/10\.0\.0\.1\/secret \(redirected to from .*\/to-private\) was blocked: 10\.0\.0\.1 is a private/,
    )
    await refused(`${origin}/to-metadata`, options(['127.0.0.1']), /169\.254\.169\.254 is a link-local/)
    await refused(`${origin}/to-localhost`, options(['127.0.0.1']), /localhost resolves to .*loopback/)
    await refused(`${origin}/to-file`, options(['127.0.0.1']), /file: URLs are not fetched/)
  })

  test('redirects are followed, at most maxRedirects', async () => {
    const result = await safeFetch(`${origin}/relative-redirect`, options(['127.0.0.1']))
    assert.equal(result.finalUrl, `${origin}/image.png`)
    const five = await refused(`${origin}/loop/0`, options(['127.0.0.1']), /redirected more than 5 times/)
    assert.ok(five)
    await refused(`${origin}/loop/0`, options(['127.0.0.1'], { maxRedirects: 0 }), /redirected more than 0 times/)
  })

  test('only http and https; no credentials in URLs; malformed URLs', async () => {
    await refused('ftp://example.com/x.png', options(), /ftp: URLs are not fetched: only http and https/)
    await refused('file:///etc/passwd', options(), /file: URLs are not fetched/)
    await refused('javascript:alert(1)', options(), /javascript: URLs are not fetched/)
    await refused(`http://user:secret@127.0.0.1:${port}/image.png`, options(['127.0.0.1']), /user name or password/)
    await refused('not a url', options(), /is not a valid URL/)
  })

  test('the size cap holds while streaming, for declared, undeclared and compressed bodies', async () => {
    await refused(`${origin}/big`, options(['127.0.0.1']), /larger than 2097152 bytes/)
    await refused(`${origin}/big-declared`, options(['127.0.0.1']), /larger than 2097152 bytes/)
    await refused(`${origin}/gzip-bomb`, options(['127.0.0.1']), /larger than 2097152 bytes/)
    const gz = await safeFetch(`${origin}/gzip`, options(['127.0.0.1']))
    assert.deepEqual(gz.bytes, PNG)
  })

  test('HTTP errors and timeouts say so', async () => {
    await refused(`${origin}/missing`, options(['127.0.0.1']), /answered HTTP 404/)
    await refused(`${origin}/hang`, options(['127.0.0.1'], { totalTimeoutMs: 200 }), /took longer than 200 ms/)
  })

  test('address classification', () => {
    for (const address of [
      '127.0.0.1',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '::1',
      '::',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '64:ff9b::a00:1',
      '2002:a00:1::1',
      '2001::1',
      '::7f00:1',
    ]) {
      assert.notEqual(addressProblem(address), null, address)
    }
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808']) {
      assert.equal(addressProblem(address), null, address)
    }
  })

  test('allow-list entries are normalized and checked', () => {
    assert.equal(normalizeHostEntry('Images.Example.COM'), 'images.example.com')
    assert.equal(normalizeHostEntry('127.0.0.1:8080'), '127.0.0.1:8080')
    assert.equal(normalizeHostEntry('[0:0::1]:81'), '[::1]:81')
    assert.equal(normalizeHostEntry('0x7f.1'), '127.0.0.1')
    assert.deepEqual(parseHostList(' a.test , ,b.test:90,http://x/,c d,host:99999 '), {
      hosts: ['a.test', 'b.test:90'],
      invalid: ['http://x/', 'c d', 'host:99999'],
    })
  })
})
