import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import http, { type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import { after, before, describe, it } from 'node:test'
import zlib from 'node:zlib'
import { FsBlobStore } from '../../src/blobs/fs-blob-store.ts'
import { SITE_CONTENT_SECURITY_POLICY } from '../../src/core/site-policy.ts'
import { type ContentAnswer, type ContentResponder, NO_CONTENT } from '../../src/serving/content-responder.ts'
import { createSiteServer, type SiteServer } from '../../src/serving/site-handler.ts'
import { MANIFEST_CACHE_LIMITS } from '../../src/serving/site-cache.ts'
import { parseSiteHost } from '../../src/serving/site-host.ts'
import type { ServedFile, ServedVersion, SiteLookup } from '../../src/serving/site-lookup.ts'
import { memoryFile, type PreparedVersion } from '../../src/serving/site-version.ts'

const DOMAIN = 'localhost:8080'
const HOST = 'shop.localhost:8080'

// ---------------------------------------------------------------------------------------------
// Fixtures: real blobs in a temp FsBlobStore, versions in memory.

const dir = fs.mkdtempSync(`${os.tmpdir()}/plinth-`)
const store = new FsBlobStore(dir)

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex')

async function blob(path: string, content: string | Buffer, contentType: string, compress = true): Promise<ServedFile> {
  const bytes = Buffer.isBuffer(content) ? content : Buffer.from(content)
  const hash = sha256(bytes)
  await store.put(hash, bytes)
  let brSize: number | null = null
  let gzipSize: number | null = null
  if (compress) {
    const br = zlib.brotliCompressSync(bytes)
    const gz = zlib.gzipSync(bytes)
    await store.put(hash, br, 'br')
    await store.put(hash, gz, 'gzip')
    brSize = br.length
    gzipSize = gz.length
  }
  return { path, hash, size: bytes.length, contentType, brSize, gzipSize }
}

class MemoryLookup implements SiteLookup {
  /** slug -> number -> version */
  readonly versions = new Map<string, Map<number, ServedVersion>>()
  readonly live = new Map<string, number>()
  /** `{slug} {draftId}` -> the draft's files as a version */
  readonly drafts = new Map<string, ServedVersion>()
  calls = 0
  failWith: Error | null = null
  /** While set, every lookup waits for it: the test decides when lookups finish, not a timer. */
  private gate: Promise<void> | null = null

  /** Holds lookups until the returned function is called. */
  hold(): () => void {
    let release!: () => void
    this.gate = new Promise<void>((resolve) => (release = resolve))
    return () => {
      this.gate = null
      release()
    }
  }

  add(websiteId: string, slug: string, number: number, files: ServedFile[], live = true): ServedVersion {
    const version: ServedVersion = { websiteId, slug, versionId: `${slug}-${number}`, number, files }
    if (!this.versions.has(slug)) this.versions.set(slug, new Map())
    this.versions.get(slug)!.set(number, version)
    if (live) this.live.set(slug, number)
    return version
  }

  private async answer<T>(value: T): Promise<T> {
    this.calls++
    if (this.gate) await this.gate
    if (this.failWith) throw this.failWith
    return value
  }

  findLive(slug: string): Promise<ServedVersion | null> {
    const number = this.live.get(slug)
    return this.answer(number === undefined ? null : (this.versions.get(slug)?.get(number) ?? null))
  }

  findVersion(slug: string, number: number): Promise<ServedVersion | null> {
    return this.answer(this.versions.get(slug)?.get(number) ?? null)
  }

  findDraft(slug: string, draftId: string): Promise<ServedVersion | null> {
    return this.answer(this.drafts.get(`${slug} ${draftId}`) ?? null)
  }
}

// ---------------------------------------------------------------------------------------------
// Real HTTP.

interface Running {
  site: SiteServer
  url: { port: number }
  /** Requests the site server has been handed so far. */
  requests(): number
  close(): Promise<void>
  errors: unknown[]
}

const servers: Running[] = []

async function start(
  lookup: SiteLookup,
  cacheBytes = 1 << 20,
  negativeTtlMs = MANIFEST_CACHE_LIMITS.negativeTtlMs,
  now = Date.now,
  content = NO_CONTENT,
): Promise<Running> {
  const errors: unknown[] = []
  let requests = 0
  const site = createSiteServer({
    siteDomain: DOMAIN,
    lookup,
    blobs: store,
    cacheBytes,
    manifests: { ...MANIFEST_CACHE_LIMITS, negativeTtlMs },
    now,
    log: { error: (obj) => void errors.push(obj) },
    content,
  })
  const server = http.createServer((req, res) => {
    requests++
    site.handle(req, res)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const running: Running = {
    site,
    errors,
    requests: () => requests,
    url: { port: (server.address() as AddressInfo).port },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
  servers.push(running)
  return running
}

interface Reply {
  status: number
  headers: IncomingHttpHeaders
  raw: Buffer
  /** Body after undoing Content-Encoding. */
  text: string
}

async function send(target: Running, path: string, options: { host?: string; method?: string; headers?: Record<string, string> } = {}): Promise<Reply> {
  const reply = await new Promise<Reply>((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: target.url.port,
        path,
        method: options.method ?? 'GET',
        agent: false,
        headers: { Host: options.host ?? HOST, ...options.headers },
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () => {
          const raw = Buffer.concat(chunks)
          const encoding = res.headers['content-encoding']
          let decoded = raw
          if (raw.length > 0 && encoding === 'br') decoded = zlib.brotliDecompressSync(raw)
          if (raw.length > 0 && encoding === 'gzip') decoded = zlib.gunzipSync(raw)
          resolve({ status: res.statusCode!, headers: res.headers, raw, text: decoded.toString('utf8') })
        })
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end()
  })
  // Every response, whatever its status, carries the security headers.
  assert.equal(reply.headers['content-security-policy'], SITE_CONTENT_SECURITY_POLICY, `CSP on ${path}`)
  assert.equal(reply.headers['x-content-type-options'], 'nosniff', `nosniff on ${path}`)
  assert.equal(reply.headers['referrer-policy'], 'strict-origin-when-cross-origin')
  return reply
}

/** Resolves once the server has been handed `count` requests in all (event-driven, no timer). */
async function received(target: Running, count: number): Promise<void> {
  while (target.requests() < count) await new Promise((resolve) => setImmediate(resolve))
}

const INDEX = `<!doctype html><title>Shop</title><h1>Welcome to the shop</h1>${' lorem ipsum'.repeat(300)}`
const ABOUT = '<!doctype html><title>About</title><p>About us</p>'
const DOCS = '<!doctype html><title>Docs</title><p>Docs index</p>'
const NOT_FOUND = '<!doctype html><title>Oops</title><p>Custom not found</p>'
const APP_JS = 'console.log("hello");\n'.repeat(50)
const PNG = Buffer.from(Array.from({ length: 256 }, (_, i) => i))

let lookup: MemoryLookup
let main: Running
let indexFile: ServedFile

before(async () => {
  lookup = new MemoryLookup()
  indexFile = await blob('index.html', INDEX, 'text/html')
  const shared = [
    await blob('about.html', ABOUT, 'text/html'),
    await blob('docs/index.html', DOCS, 'text/html'),
    await blob('404.html', NOT_FOUND, 'text/html'),
    await blob('app.js', APP_JS, 'text/javascript'),
    await blob('logo.png', PNG, 'image/png', false),
    await blob('LICENSE', 'MIT license text', 'text/plain', false),
    await blob('empty.txt', '', 'text/plain', false),
  ]
  lookup.add('w1', 'shop', 1, [await blob('index.html', 'version one', 'text/html', false), ...shared])
  lookup.add('w1', 'shop', 2, [indexFile, ...shared])
  lookup.add('w2', 'bare', 1, [await blob('index.html', 'bare site', 'text/html', false)])
  main = await start(lookup)
})

after(async () => {
  for (const server of servers) await server.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

// ---------------------------------------------------------------------------------------------

describe('parseSiteHost', () => {
  const accept: [string, string, { slug: string; version: number | null } | { slug: string; draftId: string }][] = [
    ['shop.localhost:8080', 'localhost:8080', { slug: 'shop', version: null }],
    ['shop.localhost:54321', 'localhost:8080', { slug: 'shop', version: null }],
    ['shop.localhost', 'localhost:8080', { slug: 'shop', version: null }],
    ['SHOP.LocalHost:8080', 'localhost:8080', { slug: 'shop', version: null }],
    ['shop--v12.localhost:8080', 'localhost:8080', { slug: 'shop', version: 12 }],
    ['my-site-2.sites.example.com', 'sites.example.com', { slug: 'my-site-2', version: null }],
    ['my-site-2--v1.sites.example.com', 'sites.example.com', { slug: 'my-site-2', version: 1 }],
    ['abc.example.com.', 'example.com', { slug: 'abc', version: null }],
    ['shop--dk3x9a0bq2z.localhost:8080', 'localhost:8080', { slug: 'shop', draftId: 'drf_k3x9a0bq2z' }],
    ['My-Shop--DK3X9.sites.example.com', 'sites.example.com', { slug: 'my-shop', draftId: 'drf_k3x9' }],
    [`a${'b'.repeat(49)}.example.com`, 'example.com', { slug: `a${'b'.repeat(49)}`, version: null }],
  ]
  for (const [host, domain, expected] of accept) {
    it(`accepts ${host} under ${domain}`, () => assert.deepEqual(parseSiteHost(host, domain), expected))
  }

  const reject: [string | undefined, string][] = [
    [undefined, 'localhost:8080'],
    ['', 'localhost:8080'],
    ['localhost:8080', 'localhost:8080'],
    ['.localhost:8080', 'localhost:8080'],
    ['a.b.localhost:8080', 'localhost:8080'],
    ['shop.otherhost:8080', 'localhost:8080'],
    ['shoplocalhost:8080', 'localhost:8080'],
    ['ab.localhost', 'localhost'],
    [`a${'b'.repeat(50)}.localhost`, 'localhost'],
    ['1shop.localhost', 'localhost'],
    ['-shop.localhost', 'localhost'],
    ['sh_op.localhost', 'localhost'],
    ['my--shop.localhost', 'localhost'],
    ['shop--v0.localhost', 'localhost'],
    ['shop--v01.localhost', 'localhost'],
    ['shop--v.localhost', 'localhost'],
    ['shop--v-1.localhost', 'localhost'],
    ['shop--v1--v2.localhost', 'localhost'],
    ['shop--x1.localhost', 'localhost'],
    ['shop---v1.localhost', 'localhost'],
    ['shop--d.localhost', 'localhost'],
    ['shop--d_x1.localhost', 'localhost'],
    [`shop--d${'a'.repeat(21)}.localhost`, 'localhost'],
    ['shop--dab--v1.localhost', 'localhost'],
    ['ab--dk3x9.localhost', 'localhost'],
    ['shop--dk3x9.x.localhost', 'localhost'],
    ['[::1]:8080', 'localhost:8080'],
    ['[::1', 'localhost:8080'],
    ['shop.localhost:80a', 'localhost'],
    ['shop.localhost:8080:1', 'localhost'],
    ['shop.local host', 'localhost'],
    ['\u0000\uffff%%', 'localhost'],
  ]
  for (const [host, domain] of reject) {
    it(`rejects ${JSON.stringify(host)} under ${domain}`, () => assert.equal(parseSiteHost(host, domain), null))
  }
})

describe('site handler', () => {
  it('serves / as index.html with charset, validators and cache headers', async () => {
    const r = await send(main, '/')
    assert.equal(r.status, 200)
    assert.equal(r.text, INDEX)
    assert.equal(r.headers['content-type'], 'text/html; charset=utf-8')
    assert.equal(r.headers['content-length'], String(Buffer.byteLength(INDEX)))
    assert.equal(r.headers.etag, `"${indexFile.hash.slice(0, 40)}"`)
    assert.equal(r.headers['cache-control'], 'public, max-age=0, must-revalidate')
    assert.equal(r.headers.vary, 'Accept-Encoding')
    assert.equal(r.headers['accept-ranges'], 'bytes')
    assert.equal(r.headers['x-robots-tag'], undefined)
  })

  it('resolves clean URLs, directories and exact names', async () => {
    assert.equal((await send(main, '/about')).text, ABOUT)
    assert.equal((await send(main, '/about.html')).text, ABOUT)
    assert.equal((await send(main, '/about?ref=x')).text, ABOUT)
    assert.equal((await send(main, '/docs/')).text, DOCS)
    assert.equal((await send(main, '/docs/index.html')).text, DOCS)
    assert.equal((await send(main, '/%64ocs/')).text, DOCS)
    assert.equal((await send(main, 'http://shop.localhost:8080/about')).text, ABOUT, 'absolute-form target')
    const license = await send(main, '/LICENSE')
    assert.equal(license.text, 'MIT license text')
    assert.equal(license.headers['content-type'], 'text/plain; charset=utf-8')
    const js = await send(main, '/app.js')
    assert.equal(js.headers['content-type'], 'text/javascript; charset=utf-8')
    const png = await send(main, '/logo.png')
    assert.equal(png.headers['content-type'], 'image/png')
    assert.equal(png.headers.vary, undefined)
    assert.deepEqual(png.raw, PNG)
    const empty = await send(main, '/empty.txt')
    assert.equal(empty.status, 200)
    assert.equal(empty.headers['content-length'], '0')
  })

  it('redirects a directory without its slash, keeping the query string', async () => {
    const r = await send(main, '/docs')
    assert.equal(r.status, 301)
    assert.equal(r.headers.location, '/docs/')
    const q = await send(main, '/docs?a=1&b=2')
    assert.equal(q.status, 301)
    assert.equal(q.headers.location, '/docs/?a=1&b=2')
    const slashes = await send(main, '//docs')
    assert.equal(slashes.status, 404) // '/docs/index.html' does not exist
  })

  it("serves the bundle's 404.html with status 404", async () => {
    const r = await send(main, '/no/such/page', { headers: { 'Accept-Encoding': 'gzip' } })
    assert.equal(r.status, 404)
    assert.equal(r.text, NOT_FOUND)
    assert.equal(r.headers['content-encoding'], 'gzip')
    assert.equal(r.headers['cache-control'], 'public, max-age=0, must-revalidate')
    assert.equal(r.headers.etag, undefined)
    assert.equal((await send(main, '/about/')).status, 404)
    const head = await send(main, '/missing', { method: 'HEAD' })
    assert.equal(head.status, 404)
    assert.equal(head.raw.length, 0)
    assert.equal(head.headers['content-length'], String(Buffer.byteLength(NOT_FOUND)))
  })

  it('serves a built-in 404 page when the bundle has no 404.html', async () => {
    const r = await send(main, '/nope', { host: 'bare.localhost:8080' })
    assert.equal(r.status, 404)
    assert.match(r.headers['content-type']!, /^text\/html; charset=utf-8/)
    assert.equal(r.headers['cache-control'], 'no-store')
    assert.match(r.text, /not found/i)
  })

  it('answers unknown sites and versions with the built-in "no site" page', async () => {
    for (const host of ['nosuchsite.localhost:8080', 'shop--v99.localhost:8080', 'localhost:8080', 'x.y.localhost', '[::1]:8080']) {
      const r = await send(main, '/', { host })
      assert.equal(r.status, 404, host)
      assert.match(r.text, /No site is published at this address/)
      assert.equal(r.headers['cache-control'], 'no-store')
    }
  })

  it('answers If-None-Match with 304 (exact, list, weak, *)', async () => {
    const etag = (await send(main, '/')).headers.etag!
    for (const value of [etag, `"nope", ${etag}`, `W/${etag}`, '*']) {
      const r = await send(main, '/', { headers: { 'If-None-Match': value } })
      assert.equal(r.status, 304, value)
      assert.equal(r.raw.length, 0)
      assert.equal(r.headers.etag, etag)
      assert.equal(r.headers['cache-control'], 'public, max-age=0, must-revalidate')
      assert.equal(r.headers.vary, 'Accept-Encoding')
    }
    assert.equal((await send(main, '/', { headers: { 'If-None-Match': '"other"' } })).status, 200)
    // The br representation has its own validator.
    const br = await send(main, '/', { headers: { 'Accept-Encoding': 'br' } })
    assert.notEqual(br.headers.etag, etag)
    const reval = await send(main, '/', { headers: { 'Accept-Encoding': 'br', 'If-None-Match': br.headers.etag! } })
    assert.equal(reval.status, 304)
  })

  it('answers HEAD with the GET headers and no body', async () => {
    for (const ae of ['identity', 'br', 'gzip']) {
      const get = await send(main, '/', { headers: { 'Accept-Encoding': ae } })
      const head = await send(main, '/', { method: 'HEAD', headers: { 'Accept-Encoding': ae } })
      assert.equal(head.status, 200)
      assert.equal(head.raw.length, 0)
      assert.equal(head.headers['content-length'], get.headers['content-length'])
      assert.equal(head.headers['content-length'], String(get.raw.length))
      assert.equal(head.headers.etag, get.headers.etag)
      assert.equal(head.headers['content-encoding'], get.headers['content-encoding'])
    }
  })

  it('negotiates precompressed variants with q-values', async () => {
    const cases: [string | undefined, string | undefined][] = [
      [undefined, undefined],
      ['gzip, deflate, br', 'br'],
      ['br', 'br'],
      ['gzip', 'gzip'],
      ['br;q=0, gzip', 'gzip'],
      ['gzip;q=1, br;q=0.5', 'gzip'],
      ['identity', undefined],
      ['*', 'br'],
      ['*;q=0.5, gzip', 'gzip'],
      ['br;q=0, gzip;q=0', undefined],
      ['deflate', undefined],
    ]
    for (const [ae, expected] of cases) {
      const r = await send(main, '/', { headers: ae === undefined ? {} : { 'Accept-Encoding': ae } })
      assert.equal(r.status, 200)
      assert.equal(r.headers['content-encoding'], expected, `Accept-Encoding: ${ae}`)
      assert.equal(r.text, INDEX)
      assert.equal(r.headers['content-length'], String(r.raw.length))
      assert.equal(r.headers.vary, 'Accept-Encoding')
      if (expected) assert.ok(r.raw.length < Buffer.byteLength(INDEX))
    }
    const etags = new Set<string>()
    for (const ae of ['br', 'gzip', 'identity']) etags.add((await send(main, '/', { headers: { 'Accept-Encoding': ae } })).headers.etag!)
    assert.equal(etags.size, 3)
    // No variant stored: identity whatever the client accepts.
    const png = await send(main, '/logo.png', { headers: { 'Accept-Encoding': 'br, gzip' } })
    assert.equal(png.headers['content-encoding'], undefined)
    assert.deepEqual(png.raw, PNG)
  })

  it('serves single byte ranges on the identity bytes', async () => {
    const whole = Buffer.from(INDEX)
    const size = whole.length
    const cases: [string, number, number][] = [
      ['bytes=0-9', 0, 9],
      ['bytes=10-', 10, size - 1],
      ['bytes=-5', size - 5, size - 1],
      ['bytes=5-999999', 5, size - 1],
      ['bytes=-999999', 0, size - 1],
    ]
    for (const [range, start, end] of cases) {
      const r = await send(main, '/', { headers: { Range: range, 'Accept-Encoding': 'br, gzip' } })
      assert.equal(r.status, 206, range)
      assert.equal(r.headers['content-range'], `bytes ${start}-${end}/${size}`)
      assert.equal(r.headers['content-encoding'], undefined)
      assert.equal(r.headers['content-length'], String(end - start + 1))
      assert.deepEqual(r.raw, whole.subarray(start, end + 1))
      assert.equal(r.headers.etag, `"${indexFile.hash.slice(0, 40)}"`)
    }
    const png = await send(main, '/logo.png', { headers: { Range: 'bytes=250-' } })
    assert.equal(png.status, 206)
    assert.deepEqual(png.raw, PNG.subarray(250))
  })

  it('answers unsatisfiable ranges with 416 and ignores multi-range or malformed ones', async () => {
    const size = Buffer.byteLength(INDEX)
    for (const range of [`bytes=${size}-`, 'bytes=999999-1000000', 'bytes=-0']) {
      const r = await send(main, '/', { headers: { Range: range } })
      assert.equal(r.status, 416, range)
      assert.equal(r.headers['content-range'], `bytes */${size}`)
    }
    for (const range of ['bytes=0-1,5-6', 'bytes=5-1', 'items=0-1', 'bytes=abc', 'bytes=-']) {
      const r = await send(main, '/', { headers: { Range: range } })
      assert.equal(r.status, 200, range)
      assert.equal(r.text, INDEX)
    }
    const empty = await send(main, '/empty.txt', { headers: { Range: 'bytes=0-' } })
    assert.equal(empty.status, 416)
  })

  it('honours If-Range only with a matching strong ETag', async () => {
    const etag = `"${indexFile.hash.slice(0, 40)}"`
    const match = await send(main, '/', { headers: { Range: 'bytes=0-3', 'If-Range': etag } })
    assert.equal(match.status, 206)
    assert.equal(match.text, INDEX.slice(0, 4))
    for (const ifRange of ['"stale"', `W/${etag}`, 'Wed, 21 Oct 2015 07:28:00 GMT']) {
      const r = await send(main, '/', { headers: { Range: 'bytes=0-3', 'If-Range': ifRange } })
      assert.equal(r.status, 200, ifRange)
      assert.equal(r.text, INDEX)
    }
  })

  it('allows only GET and HEAD', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'OPTIONS']) {
      const r = await send(main, '/', { method })
      assert.equal(r.status, 405, method)
      assert.equal(r.headers.allow, 'GET, HEAD')
    }
  })

  it("refuses a service worker's script request, whatever the file, while the same file is served to a page", async () => {
    for (const path of ['/app.js', '/', '/missing.js']) {
      for (const method of ['GET', 'HEAD']) {
        const r = await send(main, path, { method, headers: { 'Service-Worker': 'script' } })
        assert.equal(r.status, 403, `${method} ${path}`)
        assert.equal(r.headers['cache-control'], 'no-store')
        assert.equal(r.headers['content-security-policy'], SITE_CONTENT_SECURITY_POLICY)
      }
    }
    assert.equal((await send(main, '/app.js', { headers: { 'Service-Worker': '' } })).status, 403, 'any value of the header')
    assert.equal((await send(main, '/app.js')).status, 200)
  })

  it('rejects traversal, NUL, backslashes and malformed encodings with 400', async () => {
    for (const path of ['/%2e%2e/x', '/docs/../about', '/a%00b', '/%zz', '/%', '/a%5cb', '/a\\b', '/..']) {
      const r = await send(main, path)
      assert.equal(r.status, 400, path)
      assert.match(r.headers['content-type']!, /^text\/plain/)
      assert.equal(r.headers['cache-control'], 'no-store')
    }
    assert.equal((await send(main, '/a..b')).status, 404)
  })

  it('serves previews of any version with X-Robots-Tag: noindex', async () => {
    const v1 = await send(main, '/', { host: 'shop--v1.localhost:8080' })
    assert.equal(v1.status, 200)
    assert.equal(v1.text, 'version one')
    assert.equal(v1.headers['x-robots-tag'], 'noindex')
    const v2 = await send(main, '/about', { host: 'shop--v2.localhost:8080' })
    assert.equal(v2.text, ABOUT)
    assert.equal(v2.headers['x-robots-tag'], 'noindex')
    const missing = await send(main, '/nope', { host: 'shop--v2.localhost:8080' })
    assert.equal(missing.status, 404)
    assert.equal(missing.headers['x-robots-tag'], 'noindex')
  })

  it('caches the live version and its previews until invalidate(slug)', async () => {
    const lookup = new MemoryLookup()
    lookup.add('w9', 'cafe', 1, [await blob('index.html', 'cafe one', 'text/html')])
    const server = await start(lookup)
    assert.equal((await send(server, '/', { host: 'cafe.localhost' })).text, 'cafe one')
    assert.equal((await send(server, '/', { host: 'cafe--v1.localhost' })).text, 'cafe one')
    lookup.add('w9', 'cafe', 2, [await blob('index.html', 'cafe two', 'text/html')])
    assert.equal((await send(server, '/', { host: 'cafe.localhost' })).text, 'cafe one', 'served from cache')
    const calls = lookup.calls
    server.site.invalidate('cafe')
    assert.equal((await send(server, '/', { host: 'cafe.localhost' })).text, 'cafe two')
    assert.equal((await send(server, '/', { host: 'cafe--v1.localhost' })).text, 'cafe one')
    assert.equal(lookup.calls, calls + 2, "the preview is read again too: the site's password, or the site, may be what changed")
    assert.equal(server.site.stats().sites, 2)
  })

  it('does not cache a lookup that was in flight when invalidate(slug) was called', async () => {
    const lookup = new MemoryLookup()
    lookup.add('w8', 'race', 1, [await blob('index.html', 'race one', 'text/html')])
    const server = await start(lookup)
    const release = lookup.hold()
    const first = send(server, '/', { host: 'race.localhost' })
    await received(server, 1)
    assert.equal(lookup.calls, 1, 'the lookup is in flight')
    lookup.add('w8', 'race', 2, [await blob('index.html', 'race two', 'text/html')])
    server.site.invalidate('race')
    release()
    assert.equal((await first).text, 'race one')
    assert.equal((await send(server, '/', { host: 'race.localhost' })).text, 'race two')
  })

  it('shares concurrent lookups and remembers unknown sites briefly', async () => {
    const lookup = new MemoryLookup()
    lookup.add('w3', 'busy', 1, [await blob('index.html', 'busy site', 'text/html')])
    // Unknown sites expire by this clock, which only the test moves: no assertion depends on how
    // fast the machine is (a 200 ms real-time window once closed under load).
    let now = 1_000_000
    const server = await start(lookup, 1 << 20, 200, () => now)
    // Every request is in before the one lookup may finish: they all share it.
    let release = lookup.hold()
    const pending = Array.from({ length: 10 }, () => send(server, '/', { host: 'busy.localhost' }))
    await received(server, 10)
    release()
    for (const r of await Promise.all(pending)) assert.equal(r.text, 'busy site')
    assert.equal(lookup.calls, 1)
    lookup.calls = 0
    release = lookup.hold()
    const ghosts = Array.from({ length: 5 }, () => send(server, '/', { host: 'ghost.localhost' }))
    await received(server, 15)
    release()
    for (const r of await Promise.all(ghosts)) assert.equal(r.status, 404)
    now += 199
    assert.equal((await send(server, '/', { host: 'ghost.localhost' })).status, 404)
    assert.equal(lookup.calls, 1, 'unknown site looked up once')
    // Publishing the site and invalidating makes it visible at once.
    lookup.add('w4', 'ghost', 1, [await blob('index.html', 'ghost site', 'text/html')])
    server.site.invalidate('ghost')
    assert.equal((await send(server, '/', { host: 'ghost.localhost' })).text, 'ghost site')
    // Negative entries expire on their own.
    assert.equal((await send(server, '/', { host: 'later.localhost' })).status, 404)
    lookup.add('w5', 'later', 1, [await blob('index.html', 'later site', 'text/html')])
    assert.equal((await send(server, '/', { host: 'later.localhost' })).status, 404)
    now += 199
    assert.equal((await send(server, '/', { host: 'later.localhost' })).status, 404, 'still remembered')
    now += 1
    assert.equal((await send(server, '/', { host: 'later.localhost' })).text, 'later site')
  })

  it('reads a version whose variants are pending again after 1 s, then less and less often while they stay so', async () => {
    const lookup = new MemoryLookup()
    const page = await blob('index.html', 'pending page', 'text/html', false)
    lookup.add('w6', 'slow', 1, [{ ...page, variantsPending: true }])
    let now = 1_000_000
    const server = await start(lookup, 1 << 20, undefined, () => now)
    const readsAfter = async (ms: number) => {
      now += ms
      assert.equal((await send(server, '/', { host: 'slow.localhost' })).text, 'pending page')
      return lookup.calls
    }
    assert.equal(await readsAfter(0), 1)
    assert.equal(await readsAfter(999), 1, 'kept for a second')
    assert.equal(await readsAfter(1), 2, 'read again after a second')
    // Still pending (their making failed): each further read waits twice as long, up to 5 minutes.
    assert.equal(await readsAfter(1_999), 2)
    assert.equal(await readsAfter(1), 3, 'then after 2 s')
    assert.equal(await readsAfter(3_999), 3)
    assert.equal(await readsAfter(1), 4, 'then after 4 s')
    for (let i = 0; i < 12; i++) await readsAfter(5 * 60_000)
    const capped = lookup.calls
    assert.equal(await readsAfter(5 * 60_000 - 1), capped, 'at most every 5 minutes')
    assert.equal(await readsAfter(1), capped + 1)

    // Made at last: the version is kept until the site changes.
    lookup.add('w6', 'slow', 1, [page])
    server.site.invalidate('slow')
    const settled = await readsAfter(0)
    assert.equal(await readsAfter(60 * 60_000), settled, 'no variants pending: no more reads')

    // A new version with variants pending starts again at a second.
    lookup.add('w6', 'slow', 2, [{ ...(await blob('index.html', 'pending page', 'text/html', false)), variantsPending: true }])
    server.site.invalidate('slow')
    const fresh = await readsAfter(0)
    assert.equal(await readsAfter(1_000), fresh + 1)
  })

  it('drops cached previews when the slug now belongs to another website', async () => {
    const lookup = new MemoryLookup()
    lookup.add('old', 'swap', 1, [await blob('index.html', 'old owner', 'text/html')])
    const server = await start(lookup)
    assert.equal((await send(server, '/', { host: 'swap--v1.localhost' })).text, 'old owner')
    lookup.versions.delete('swap')
    lookup.add('new', 'swap', 1, [await blob('index.html', 'new owner', 'text/html')])
    server.site.invalidate('swap')
    assert.equal((await send(server, '/', { host: 'swap.localhost' })).text, 'new owner')
    assert.equal((await send(server, '/', { host: 'swap--v1.localhost' })).text, 'new owner')
  })

  it('serves a draft at its preview host until its label or its slug changes, and not from the instant it expires', async () => {
    const lookup = new MemoryLookup()
    lookup.add('w7', 'studio', 1, [await blob('index.html', 'studio live', 'text/html')])
    let now = 1_000_000
    const draftId = 'drf_k3x9a0bq2z'
    const host = 'studio--dk3x9a0bq2z.localhost'
    const setDraft = async (text: string) =>
      lookup.drafts.set(`studio ${draftId}`, {
        websiteId: 'w7',
        slug: 'studio',
        versionId: `${draftId}.${text}`,
        number: 1,
        files: [await blob('index.html', text, 'text/html')],
        expiresAt: new Date(1_060_000).toISOString(),
      })
    await setDraft('draft one')
    const server = await start(lookup, 1 << 20, undefined, () => now)
    const draft = await send(server, '/', { host })
    assert.equal(draft.text, 'draft one')
    assert.equal(draft.headers['x-robots-tag'], 'noindex')
    assert.equal((await send(server, '/', { host: 'studio.localhost' })).text, 'studio live')
    const calls = lookup.calls

    await setDraft('draft two')
    assert.equal((await send(server, '/', { host })).text, 'draft one', 'served from cache')
    server.site.invalidate('studio--dk3x9a0bq2z')
    assert.equal((await send(server, '/', { host })).text, 'draft two')
    assert.equal((await send(server, '/', { host: 'studio.localhost' })).text, 'studio live')
    assert.equal(lookup.calls, calls + 1, "the draft's label drops its preview alone")

    await setDraft('draft three')
    server.site.invalidate('studio')
    assert.equal((await send(server, '/', { host })).text, 'draft three', "the slug's change drops its drafts' previews")

    const reads = lookup.calls
    now = 1_059_999
    assert.equal((await send(server, '/', { host })).text, 'draft three')
    assert.equal(lookup.calls, reads, 'kept until it expires')
    now = 1_060_000
    assert.equal((await send(server, '/', { host })).status, 404, 'expired: gone at once, with no event')
    for (const other of ['studio--dk3x9a0bq2y.localhost', 'studio--d.localhost', 'other--dk3x9a0bq2z.localhost']) {
      assert.equal((await send(server, '/', { host: other })).status, 404, other)
    }
  })

  it('serves correct bytes through a tiny blob cache (eviction) and with no cache', async () => {
    const files: ServedFile[] = []
    const contents: string[] = []
    // Budget 400 bytes: only blobs up to 100 bytes are cached, and the small ones alone overflow it.
    for (let i = 0; i < 12; i++) {
      const content = i % 2 ? `small file ${i} `.padEnd(80 + i, '.') : `a larger file number ${i} `.repeat(i + 5)
      contents.push(content)
      files.push(await blob(`f${i}.txt`, content, 'text/plain'))
    }
    const lookup = new MemoryLookup()
    lookup.add('w6', 'tiny', 1, files)
    const cacheable = files.filter((f) => f.size <= 100).reduce((sum, f) => sum + f.size, 0)
    assert.ok(cacheable > 400, 'the cacheable identity blobs alone exceed the budget')
    for (const cacheBytes of [400, 0]) {
      const server = await start(lookup, cacheBytes)
      for (let round = 0; round < 3; round++) {
        for (let i = 0; i < files.length; i++) {
          for (const ae of ['identity', 'br', 'gzip']) {
            const r = await send(server, `/f${i}.txt`, { host: 'tiny.localhost', headers: { 'Accept-Encoding': ae } })
            assert.equal(r.status, 200)
            assert.equal(r.text, contents[i], `f${i} ${ae} (cache ${cacheBytes})`)
          }
        }
      }
      const stats = server.site.stats()
      assert.ok(stats.blobBytes <= cacheBytes, `cache within budget: ${JSON.stringify(stats)}`)
      if (cacheBytes > 0) assert.ok(stats.blobEntries > 0)
      else assert.equal(stats.blobEntries, 0)
    }
  })

  it('answers lookup and blob store failures with a plain 500 page and logs them', async () => {
    const lookup = new MemoryLookup()
    const missing: ServedFile = {
      path: 'index.html',
      hash: sha256(Buffer.from('never stored')),
      size: 12,
      contentType: 'text/html',
      brSize: null,
      gzipSize: null,
    }
    lookup.add('w7', 'broken', 1, [missing])
    const server = await start(lookup)
    const noBlob = await send(server, '/', { host: 'broken.localhost' })
    assert.equal(noBlob.status, 500)
    assert.doesNotMatch(noBlob.text, /ENOENT|at \w|\.ts:/)
    assert.equal(server.errors.length, 1)
    lookup.failWith = new Error('database is down')
    const noDb = await send(server, '/', { host: 'other.localhost' })
    assert.equal(noDb.status, 500)
    assert.match(noDb.headers['content-type']!, /^text\/html/)
    assert.doesNotMatch(noDb.text, /database is down/)
    assert.equal(server.errors.length, 2)
    lookup.failWith = null
    assert.equal((await send(server, '/', { host: 'other.localhost' })).status, 404, 'errors are not cached')
  })
})

describe('content answers', () => {
  const PAGE = `<!doctype html><title>Entry</title>${'<p>rendered once, served like a file</p>'.repeat(40)}`
  const page = memoryFile('posts-hello', 'text/html', Buffer.from(PAGE), zlib.brotliCompressSync(PAGE), zlib.gzipSync(PAGE))

  /** A responder answering from a table, synchronously or through a promise, and recording what it was asked. */
  function responder(answers: Record<string, ContentAnswer>, async: boolean) {
    const asked: Array<{ target: string; label: string }> = []
    const content: ContentResponder = {
      answer(target: string, version: PreparedVersion) {
        asked.push({ target, label: version.label })
        const path = target.split('?')[0]!
        if (!(path in answers)) return undefined
        return async ? Promise.resolve(answers[path]!) : answers[path]!
      },
      invalidate: () => {},
      invalidateAll: () => {},
      stats: () => ({ renders: asked.length, cached: 0 }),
    }
    return { content, asked }
  }

  for (const async of [false, true]) {
    it(`serves an answered page like a published file (${async ? 'built' : 'cached'})`, async () => {
      const lookup = new MemoryLookup()
      lookup.add('c1', 'blog', 1, [
        await blob('index.html', 'home', 'text/html'),
        await blob('sitemap.xml', '<urlset/>', 'application/xml', false),
        await blob('_templates/posts.html', '<h1>{{ entry.title }}</h1>', 'text/html', false),
      ])
      const { content, asked } = responder(
        {
          '/posts-hello': { kind: 'file', file: page },
          '/posts/': { kind: 'redirect', location: '/posts' },
          '/posts-gone': { kind: 'missing' },
        },
        async,
      )
      const server = await start(lookup, 1 << 20, undefined, undefined, content)
      const host = 'blog.localhost'
      const plain = await send(server, '/posts-hello', { host })
      assert.equal(plain.status, 200)
      assert.equal(plain.text, PAGE)
      assert.equal(plain.headers.etag, page.identity.etag)
      assert.equal(plain.headers.vary, 'Accept-Encoding')
      for (const encoding of ['br', 'gzip']) {
        const r = await send(server, '/posts-hello', { host, headers: { 'Accept-Encoding': encoding } })
        assert.equal(r.headers['content-encoding'], encoding)
        assert.equal(r.text, PAGE)
        assert.ok(r.raw.length < Buffer.byteLength(PAGE))
      }
      const range = await send(server, '/posts-hello', { host, headers: { Range: 'bytes=2-8', 'Accept-Encoding': 'br' } })
      assert.equal(range.status, 206)
      assert.equal(range.text, PAGE.slice(2, 9))
      assert.equal((await send(server, '/posts-hello', { host, headers: { Range: 'bytes=99999-' } })).status, 416)
      assert.equal((await send(server, '/posts-hello', { host, headers: { 'If-None-Match': page.identity.etag } })).status, 304)
      const head = await send(server, '/posts-hello', { host, method: 'HEAD', headers: { 'Accept-Encoding': 'gzip' } })
      assert.equal(head.raw.length, 0)
      assert.equal(head.headers['content-length'], String(page.gzip!.size))
      const redirect = await send(server, '/posts/?page=2', { host })
      assert.equal(redirect.status, 301)
      assert.equal(redirect.headers.location, '/posts?page=2')
      assert.equal((await send(server, '/posts-gone', { host })).status, 404)
      assert.equal((await send(server, 'http://blog.localhost/posts-hello', { host })).text, PAGE, 'absolute-form target')
      // The templates folder is never a file; the bundle's sitemap.xml is offered to the responder first.
      assert.equal((await send(server, '/_templates/posts.html', { host })).status, 404)
      assert.equal((await send(server, '/sitemap.xml', { host })).text, '<urlset/>', 'not answered: the file as it is')
      assert.ok(asked.some((a) => a.target === '/sitemap.xml' && a.label === 'blog'))
      assert.ok(asked.some((a) => a.target === '/_templates/posts.html'))
      assert.equal((await send(server, '/posts-gone', { host: 'blog--v1.localhost' })).headers['x-robots-tag'], 'noindex')
      assert.equal(asked.at(-1)!.label, 'blog--v1')
      assert.equal(server.site.stats().content.renders, asked.length)
    })
  }

  it('answers a failed content answer with the plain 500 page', async () => {
    const lookup = new MemoryLookup()
    lookup.add('c2', 'fails', 1, [await blob('index.html', 'home', 'text/html')])
    const content: ContentResponder = {
      answer: () => Promise.reject(new Error('database is down')),
      invalidate: () => {},
      invalidateAll: () => {},
      stats: () => ({ renders: 0, cached: 0 }),
    }
    const server = await start(lookup, 1 << 20, undefined, undefined, content)
    const r = await send(server, '/posts-hello', { host: 'fails.localhost' })
    assert.equal(r.status, 500)
    assert.doesNotMatch(r.text, /database is down/)
    assert.equal(server.errors.length, 1)
  })
})
