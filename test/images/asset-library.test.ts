/**
 * The image library and importAsset over real HTTP on every store, with images served by a real
 * local HTTP server that PLINTH_FETCH_ALLOW_HOSTS allows (host and port). A URL is fetched once
 * per library, identical bytes are stored once, only raster images are kept, every refusal is
 * the envelope and stores nothing, and only owners and editors may import.
 */

import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import type { Kysely } from 'kysely'
import { BlobsRepository } from '../../src/blobs/blobs.repository.ts'
import { loadConfig } from '../../src/config.ts'
import { AssetLibrary } from '../../src/images/asset-library.ts'
import { AssetsRepository } from '../../src/images/assets.repository.ts'
import { assertError, createSite, PNG, siteWithMembers } from '../helpers/factories.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

const GIF = Buffer.from('R0lGODlhAgADAIAAAAAAAP///yH5BAEAAAAALAAAAAACAAMAAAIChF8AOw==', 'base64')
const SVG = Buffer.from('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(1)</script></svg>')
const HASH = /^[0-9a-f]{64}$/

for (const store of STORES) {
  describe(`image library and importAsset (${store.name})`, { skip: store.skip }, () => {
    let images: http.Server
    let origin = ''
    const hits = new Map<string, number>()
    let server: TestServer

    before(async () => {
      images = http.createServer((req, res) => {
        const path = req.url ?? '/'
        hits.set(path, (hits.get(path) ?? 0) + 1)
        const send = (type: string, body: Buffer | string) => res.writeHead(200, { 'content-type': type }).end(body)
        if (path.startsWith('/png')) return send('image/png', PNG)
        if (path === '/gif-as-png.png') return send('image/png', GIF)
        if (path === '/page.html') return send('image/png', '<!doctype html><p>not an image</p>')
        if (path === '/icon.svg') return send('image/svg+xml', SVG)
        if (path === '/huge.png') return send('image/png', Buffer.concat([PNG, Buffer.alloc(3 * 1024 * 1024)]))
        if (path === '/to-private') return void res.writeHead(302, { location: 'http://10.0.0.1/x.png' }).end()
        res.writeHead(404).end()
      })
      await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve))
      origin = `http://127.0.0.1:${(images.address() as AddressInfo).port}`
      server = await startTestServer(store.name, { PLINTH_FETCH_ALLOW_HOSTS: new URL(origin).host })
    })
    after(async () => {
      await server?.close()
      await new Promise<void>((resolve) => images.close(() => resolve()))
    })

    const db = () => server.server.db.kysely as unknown as Kysely<any>
    const count = async (table: string) =>
      Number(
        (
          await db()
            .selectFrom(table)
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      )
    const footprint = async () => ({ assets: await count('assets'), blobs: await count('blobs') })
    const site = () => createSite(server)
    const importAsset = (token: string, websiteId: string, body: unknown) => server.api('POST', `/v1/websites/${websiteId}/assets`, { token, body })

    test('importAsset by URL: 201 with the LibraryAsset, served from /_assets/{hash}.{ext}', async () => {
      const { owner, websiteId } = await site()
      const res = await importAsset(owner.token, websiteId, { url: `${origin}/png/first.png` })
      assert.equal(res.status, 201, res.text)
      assert.deepEqual(Object.keys(res.body).sort(), ['contentType', 'hash', 'height', 'id', 'size', 'sourceUrl', 'url', 'width'])
      assert.match(res.body.id, /^ast_[A-Za-z0-9]+$/)
      assert.match(res.body.hash, HASH)
      assert.equal(res.body.url, `/_assets/${res.body.hash}.png`)
      assert.equal(res.body.sourceUrl, `${origin}/png/first.png`)
      assert.equal(res.body.contentType, 'image/png')
      assert.equal(res.body.size, PNG.length)
      assert.deepEqual([res.body.width, res.body.height], [1, 1])
    })

    test('a URL is fetched once: again, or twice at once, returns the same asset without fetching', async () => {
      const { owner, websiteId } = await site()
      const url = `${origin}/png/once.png`
      const first = await importAsset(owner.token, websiteId, { url })
      const [again, concurrent] = await Promise.all([importAsset(owner.token, websiteId, { url }), importAsset(owner.token, websiteId, { url })])
      assert.equal(first.status, 201)
      assert.equal(again.body.id, first.body.id)
      assert.equal(concurrent.body.id, first.body.id)
      assert.equal(hits.get('/png/once.png'), 1)
    })

    test('an image fetched once for two entries of a collection; another collection has its own library; bytes stored once', async () => {
      const { websiteId } = await site()
      const at = new Date().toISOString()
      const collection = (id: string, name: string) => ({
        id,
        website_id: websiteId,
        name,
        label: name,
        fields: '[]',
        removed_fields: '[]',
        created_at: at,
        updated_at: at,
      })
      await db()
        .insertInto('collections')
        .values([collection(`col_a${websiteId}`, 'posts'), collection(`col_b${websiteId}`, 'news')])
        .execute()
      const library = new AssetLibrary({
        allowHosts: new Set(server.config.fetchAllowHosts),
        userAgent: 'Plinth test',
        repo: new AssetsRepository(db()),
        blobs: server.server.blobs,
        blobRows: new BlobsRepository(db()),
        blobVariants: server.server.blobVariants,
        maxImageBytes: server.config.bundleLimits.maxFileBytes,
      })
      const url = `${origin}/png/shared.png`
      const blobsBefore = await count('blobs')
      // Entry one and entry two of one batch ask at the same moment, entry three later.
      const [one, two] = await Promise.all([
        library.importFromUrl(websiteId, `col_a${websiteId}`, url),
        library.importFromUrl(websiteId, `col_a${websiteId}`, url),
      ])
      const three = await library.importFromUrl(websiteId, `col_a${websiteId}`, url)
      assert.equal(hits.get('/png/shared.png'), 1)
      assert.equal(one.id, two.id)
      assert.equal(three.id, one.id)
      const other = await library.importFromUrl(websiteId, `col_b${websiteId}`, url)
      assert.notEqual(other.id, one.id)
      assert.equal(other.hash, one.hash)
      assert.equal(hits.get('/png/shared.png'), 2)
      // The PNG's bytes were stored by an earlier test: no new blob at all.
      assert.equal(await count('blobs'), blobsBefore)
      const byHash = await db().selectFrom('assets').select('id').where('website_id', '=', websiteId).where('hash', '=', one.hash).execute()
      assert.equal(byHash.length, 2)
    })

    test('the type is sniffed from the bytes, not taken from the URL or the header', async () => {
      const { owner, websiteId } = await site()
      const res = await importAsset(owner.token, websiteId, { url: `${origin}/gif-as-png.png` })
      assert.equal(res.status, 201, res.text)
      assert.equal(res.body.contentType, 'image/gif')
      assert.equal(res.body.url, `/_assets/${res.body.hash}.gif`)
      assert.deepEqual([res.body.width, res.body.height], [2, 3])
    })

    test('inline data: images are decoded and kept by their bytes', async () => {
      const { owner, websiteId } = await site()
      const url = `data:image/png;base64,${PNG.toString('base64')}`
      const res = await importAsset(owner.token, websiteId, { url })
      assert.equal(res.status, 201, res.text)
      assert.equal(res.body.sourceUrl, null)
      const again = await importAsset(owner.token, websiteId, { url })
      assert.equal(again.body.id, res.body.id)
    })

    test('refusals are FETCH_FAILED with the reason, and store nothing', async () => {
      const { owner, websiteId } = await site()
      const cases: Array<[string, RegExp]> = [
        [`${origin}/page.html`, /not a recognized image|not a PNG/],
        [`${origin}/icon.svg`, /SVG is refused/],
        [`${origin}/huge.png`, /larger than 2097152 bytes/],
        [`${origin}/nothing.png`, /answered HTTP 404/],
        [`${origin}/to-private`, /10\.0\.0\.1 is a private address/],
        [`http://127.0.0.1:1/x.png`, /blocked: 127\.0\.0\.1 is a loopback address/],
        ['http://169.254.169.254/latest/meta-data/iam', /blocked: 169\.254\.169\.254/],
        ['http://[::1]/x.png', /blocked: ::1 is a loopback/],
        ['http://localhost/x.png', /blocked: localhost resolves to/],
        ['javascript:alert(1)', /not an absolute URL|javascript: URLs are not fetched/],
        ['ftp://example.com/x.png', /only http and https/],
        ['/relative/x.png', /not an absolute URL/],
        [`data:image/svg+xml;base64,${SVG.toString('base64')}`, /SVG is refused/],
        ['data:text/plain;base64,aGVsbG8=', /not a recognized image/],
        ['data:image/png,%E0%A4%A', /not valid percent-encoded data/],
        ['data:image/png;base64', /no comma/],
      ]
      const before = await footprint()
      for (const [url, message] of cases) assertError(await importAsset(owner.token, websiteId, { url }), 422, 'FETCH_FAILED', message)
      assert.deepEqual(await footprint(), before)
    })

    test('hostile bodies: VALIDATION_FAILED naming the field, nothing stored', async () => {
      const { owner, websiteId } = await site()
      const before = await footprint()
      const neither = await importAsset(owner.token, websiteId, {})
      assertError(neither, 422, 'VALIDATION_FAILED', /either url or uploadId/)
      const both = await importAsset(owner.token, websiteId, { url: `${origin}/png/x.png`, uploadId: 'upl_x' })
      assertError(both, 422, 'VALIDATION_FAILED', /not both/)
      assertError(await importAsset(owner.token, websiteId, { url: `${origin}/png/x.png`, collection: 'x' }), 422, 'VALIDATION_FAILED')
      assertError(await importAsset(owner.token, websiteId, { url: 42 }), 422, 'VALIDATION_FAILED')
      assertError(await importAsset(owner.token, websiteId, { url: 'x'.repeat(3000) }), 422, 'VALIDATION_FAILED')
      assertError(await importAsset(owner.token, websiteId, { uploadId: 'upl_nope' }), 422, 'VALIDATION_FAILED', /uploadId/)
      assert.deepEqual(await footprint(), before)
      assert.equal(hits.get('/png/x.png'), undefined)
    })

    test('importAsset from a completed upload', async () => {
      const { owner, websiteId } = await site()
      const reserved = await server.api('POST', '/v1/uploads', { token: owner.token, body: { files: [{ filename: 'logo.gif', size: GIF.length }] } })
      assert.equal(reserved.status, 201, reserved.text)
      const upload = reserved.body.uploads[0]
      const target = new URL(upload.uploadUrl)
      const put = await fetch(server.url + target.pathname + target.search, { method: 'PUT', headers: upload.headers, body: GIF })
      assert.ok(put.ok, await put.text())
      const res = await importAsset(owner.token, websiteId, { uploadId: upload.uploadId })
      assert.equal(res.status, 201, res.text)
      assert.equal(res.body.contentType, 'image/gif')
      assert.equal(res.body.sourceUrl, null)
    })

    test('owners and editors may import; a stranger gets 404; no token 401', async () => {
      const {
        site: { websiteId },
        editor,
        stranger,
      } = await siteWithMembers(server)
      const ok = await importAsset(editor.token, websiteId, { url: `${origin}/png/editor.png` })
      assert.equal(ok.status, 201, ok.text)
      assertError(await importAsset(stranger.token, websiteId, { url: `${origin}/png/stranger.png` }), 404, 'NOT_FOUND')
      assertError(await importAsset(stranger.token, 'web_nope', { url: `${origin}/png/stranger.png` }), 404, 'NOT_FOUND')
      const anonymous = await server.api('POST', `/v1/websites/${websiteId}/assets`, { body: { url: `${origin}/png/anon.png` } })
      assertError(anonymous, 401, 'AUTH_REQUIRED')
      assert.equal(hits.get('/png/stranger.png'), undefined)
    })

    test('findByHash finds a site asset by its bytes (for serving /_assets/)', async () => {
      const { owner, websiteId } = await site()
      const res = await importAsset(owner.token, websiteId, { url: `${origin}/png/by-hash.png` })
      const repo = new AssetsRepository(server.server.db.kysely)
      assert.equal((await repo.findByHash(websiteId, res.body.hash))?.hash, res.body.hash)
      assert.equal(await repo.findByHash(websiteId, '0'.repeat(64)), undefined)
    })

    test('the OpenAPI document describes importAsset and its errors', async () => {
      const doc = (await server.api('GET', '/openapi.json')).body
      const op = doc.paths['/v1/websites/{websiteId}/assets'].post
      assert.equal(op.operationId, 'importAsset')
      assert.ok(doc.components.schemas.LibraryAsset)
      assert.match(op.responses['422'].description, /FETCH_FAILED/)
      assert.ok(op.responses['404'])
    })
  })
}

describe('PLINTH_FETCH_ALLOW_HOSTS', () => {
  test('parsed, normalized, and refused when malformed', () => {
    assert.deepEqual(loadConfig({}).fetchAllowHosts, [])
    assert.deepEqual(loadConfig({ PLINTH_FETCH_ALLOW_HOSTS: 'Images.Intranet, 10.0.0.5:8080,[::1]' }).fetchAllowHosts, [
      'images.intranet',
      '10.0.0.5:8080',
      '[::1]',
    ])
    assert.throws(() => loadConfig({ PLINTH_FETCH_ALLOW_HOSTS: 'http://x.test/' }), /PLINTH_FETCH_ALLOW_HOSTS/)
  })
})
