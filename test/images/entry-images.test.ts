import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { deflateSync } from 'node:zlib'
import { siteWithCollection, startImageHost } from '../helpers/content.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

/** A valid 1x1 PNG of the given grey level (so each one has other bytes). */
function png(grey: number): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    return c >>> 0
  })
  const crc = (buf: Buffer) => {
    let c = 0xffffffff
    for (const b of buf) c = crcTable[(c ^ b) & 0xff]! ^ (c >>> 8)
    return (c ^ 0xffffffff) >>> 0
  }
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data])
    const out = Buffer.alloc(body.length + 8)
    out.writeUInt32BE(data.length, 0)
    body.copy(out, 4)
    out.writeUInt32BE(crc(body), body.length + 4)
    return out
  }
  const ihdr = Buffer.from([0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0])
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(Buffer.from([0, grey]))),
    chunk('IEND', Buffer.alloc(0)),
  ])
}

for (const store of STORES) {
  describe(`entry images (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    let images: Awaited<ReturnType<typeof startImageHost>>
    let origin: string
    let hits: Map<string, number>
    before(async () => {
      images = await startImageHost((n) => png(n))
      ;({ origin, hits } = images)
      server = await startTestServer(store.name, images.env)
    })
    after(async () => {
      await server?.close()
      await images?.close()
    })

    test('image fields and rich-text images are imported once per URL and point at the library', async () => {
      const { user, base } = await siteWithCollection(server)
      const entries = [
        { slug: 'a', data: { title: 'A', cover: 'img/1.png', body: { html: '<p><img src="img/2.png" alt="two"></p>' } } },
        { slug: 'b', data: { title: 'B', cover: `${origin}/img/1.png`, body: { markdown: '![one](/img/1.png)' } } },
        { slug: 'c', data: { title: 'C', cover: 'img/missing.png' } },
      ]
      const res = await server.api('POST', `${base}/entries/batch`, { token: user.token, body: { baseUrl: `${origin}/`, entries } })
      assert.equal(res.status, 200, res.text)
      const [a, b, c] = res.body.results
      assert.equal(a.status, 'created', JSON.stringify(a.error))
      assert.equal(b.status, 'created', JSON.stringify(b.error))
      assert.equal(a.entry.data.cover, `${origin}/img/1.png`, 'data keeps the (absolute) source URL')
      assert.match(a.entry.rendered.cover, /^\/_assets\/[0-9a-f]{64}\.png$/)
      assert.equal(b.entry.rendered.cover, a.entry.rendered.cover, 'the same image is one library asset')
      assert.match(a.entry.rendered.body, /<img[^>]+src="\/_assets\/[0-9a-f]{64}\.png"/)
      assert.doesNotMatch(a.entry.rendered.body, /img\/2\.png/)
      assert.equal(c.status, 'failed')
      assert.equal(c.error.code, 'IMAGE_IMPORT_FAILED')
      assert.equal(c.error.field, 'data.cover')
      assert.equal(hits.get('/img/1.png'), 1, 'a URL is fetched once per collection')

      const again = await server.api('POST', `${base}/entries/batch`, { token: user.token, body: { baseUrl: `${origin}/`, entries: entries.slice(0, 2) } })
      assert.deepEqual(again.body.counts, { created: 0, updated: 0, unchanged: 2, failed: 0 })
      assert.equal(hits.get('/img/1.png'), 1, 'an unchanged entry fetches nothing')
      const moved = await server.api('POST', `${base}/entries/batch`, {
        token: user.token,
        body: { baseUrl: `${origin}/other/`, entries: entries.slice(0, 1) },
      })
      assert.equal(moved.body.results[0].status, 'failed', 'another baseUrl is other content (and here a missing image)')
    })
  })
}
