/**
 * Images of entries on every store: URLs fetched from a real local image host (allowed by
 * PLINTH_FETCH_ALLOW_HOSTS), and the forms that fetch nothing, as a self-hosted instance needs
 * them: a library path of this site, an upload of the caller, an inline data: image. In image
 * fields and in rich text alike; refusals name the field, stay short and store nothing.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { deflateSync } from 'node:zlib'
import type { Kysely } from 'kysely'
import { siteWithCollection, startImageHost } from '../helpers/content.ts'
import { PNG } from '../helpers/factories.ts'
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

const dataUrl = (bytes: Buffer, type = 'image/png') => `data:${type};base64,${bytes.toString('base64')}`
const LIBRARY = /^\/_assets\/[0-9a-f]{64}\.png$/
/** Longest message a refusal of an image may have: it says why, never repeating the value. */
const SHORT = 300

for (const store of STORES) {
  describe(`entry images that need no fetch (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    before(async () => {
      // No host is allowed: anything fetched from 127.0.0.1 would be refused, as on a self-hosted instance.
      server = await startTestServer(store.name)
    })
    after(async () => {
      await server?.close()
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

    async function site() {
      const owner = await siteWithCollection(server)
      const website = await server.api('GET', `/v1/websites/${owner.websiteId}`, { token: owner.user.token })
      return { ...owner, token: owner.user.token, slug: website.body.slug as string }
    }

    async function importAsset(token: string, websiteId: string, body: unknown): Promise<string> {
      const res = await server.api('POST', `/v1/websites/${websiteId}/assets`, { token, body })
      assert.equal(res.status, 201, res.text)
      return res.body.url
    }

    /** Reserves an upload, PUTs the bytes to its signed URL, and answers its id. */
    async function upload(token: string, bytes: Buffer, filename = 'photo.png'): Promise<string> {
      const reserved = await server.api('POST', '/v1/uploads', { token, body: { files: [{ filename, size: bytes.length }] } })
      assert.equal(reserved.status, 201, reserved.text)
      const { uploadId, uploadUrl } = reserved.body.uploads[0]
      const target = new URL(uploadUrl)
      const put = await server.api('PUT', target.pathname + target.search, { body: bytes, headers: { 'content-type': 'application/octet-stream' } })
      assert.equal(put.status, 200, put.text)
      return uploadId
    }

    const batch = (token: string, base: string, entries: unknown[]) => server.api('POST', `${base}/entries/batch`, { token, body: { entries } })

    test('an image field naming a library path from importAsset renders on the site page, and the site serves the image', async () => {
      const s = await site()
      const path = await importAsset(s.token, s.websiteId, { url: dataUrl(png(10)) })
      assert.match(path, LIBRARY)
      const put = await server.api('PUT', `${s.base}/entries/hello`, { token: s.token, body: { data: { title: 'Hello', cover: path } } })
      assert.equal(put.status, 201, put.text)
      assert.equal(put.body.data.cover, path)
      assert.equal(put.body.rendered.cover, path)

      const page = await server.site(s.slug, '/posts-hello')
      assert.equal(page.status, 200)
      assert.ok(page.body.toString().includes(`<img src="${path}"`), 'the entry page shows the library image')
      const image = await server.site(s.slug, path)
      assert.equal(image.status, 200)
      assert.equal(image.headers['content-type'], 'image/png')
      assert.deepEqual(image.body, png(10))

      // With a baseUrl too, a library path names this site's library and is never resolved against it.
      const based = await server.api('PUT', `${s.base}/entries/based`, {
        token: s.token,
        body: { baseUrl: 'http://127.0.0.1:9/', data: { title: 'Based', cover: path } },
      })
      assert.equal(based.status, 201, based.text)
      assert.equal(based.body.rendered.cover, path)
    })

    test('an upload of the caller names an image; data keeps its library path; sending it again is unchanged', async () => {
      const s = await site()
      const uploadId = await upload(s.token, png(20))
      const entry = { slug: 'uploaded', data: { title: 'Uploaded', cover: `upload:${uploadId}` } }
      const first = await batch(s.token, s.base, [entry])
      const [result] = first.body.results
      assert.equal(result.status, 'created', JSON.stringify(result.error))
      assert.match(result.entry.rendered.cover, LIBRARY)
      assert.equal(result.entry.data.cover, result.entry.rendered.cover, 'data holds the library path, not the upload')
      const again = await batch(s.token, s.base, [entry])
      assert.equal(again.body.results[0].status, 'unchanged')
      const image = await server.site(s.slug, result.entry.rendered.cover)
      assert.deepEqual(image.body, png(20))
    })

    test('an inline data: PNG is decoded into the library', async () => {
      const s = await site()
      const put = await server.api('PUT', `${s.base}/entries/inline`, { token: s.token, body: { data: { title: 'Inline', cover: dataUrl(PNG) } } })
      assert.equal(put.status, 201, put.text)
      assert.match(put.body.rendered.cover, LIBRARY)
      assert.equal(put.body.data.cover, put.body.rendered.cover, 'data does not repeat the inline bytes')
      const again = await server.api('PUT', `${s.base}/entries/inline`, { token: s.token, body: { data: { title: 'Inline', cover: dataUrl(PNG) } } })
      assert.equal(again.headers.get('entry-status'), 'unchanged')
      assert.deepEqual((await server.site(s.slug, put.body.rendered.cover)).body, PNG)
    })

    test('markdown images and <img> take each form, and point at the library', async () => {
      const s = await site()
      const library = await importAsset(s.token, s.websiteId, { url: dataUrl(png(30)) })
      const forms = { library, upload: `upload:${await upload(s.token, png(31))}`, inline: dataUrl(png(32)) }
      const entries = Object.entries(forms).flatMap(([name, src]) => [
        { slug: `md-${name}`, data: { title: name, body: { markdown: `A picture:\n\n![${name}](${src})` } } },
        { slug: `html-${name}`, data: { title: name, body: { html: `<p><img src="${src}" alt="${name}"></p>` } } },
      ])
      const res = await batch(s.token, s.base, entries)
      assert.deepEqual(res.body.counts, { created: 6, updated: 0, unchanged: 0, failed: 0 }, JSON.stringify(res.body.results.map((r: any) => r.error)))
      const grey = { library: 30, upload: 31, inline: 32 } as Record<string, number>
      for (const result of res.body.results) {
        const name = result.slug.split('-')[1]
        const src = /<img[^>]* src="([^"]+)"/.exec(result.entry.rendered.body)?.[1]
        assert.match(src ?? '', LIBRARY, `${result.slug}: ${result.entry.rendered.body}`)
        assert.doesNotMatch(result.entry.rendered.body, /upload:|data:/)
        assert.deepEqual((await server.site(s.slug, src)).body, png(grey[name]!), result.slug)
        if (name === 'library') assert.equal(src, library)
      }
      const page = await server.site(s.slug, '/posts-md-upload')
      assert.match(page.body.toString(), /<img src="\/_assets\/[0-9a-f]{64}\.png" alt="upload">/)
    })

    test("another user's upload and another site's library path are refused like unknown ones, and nothing is stored", async () => {
      const s = await site()
      const other = await site()
      const theirUpload = await upload(other.token, png(40))
      const theirAsset = await importAsset(other.token, other.websiteId, { url: dataUrl(png(41)) })
      const entriesBefore = await count('entries')
      const assetsBefore = await count('assets')
      const res = await batch(s.token, s.base, [
        { slug: 'their-upload', data: { title: 'x', cover: `upload:${theirUpload}` } },
        { slug: 'no-upload', data: { title: 'x', cover: 'upload:upl_doesNotExist0000000000' } },
        { slug: 'their-asset', data: { title: 'x', cover: theirAsset } },
        { slug: 'no-asset', data: { title: 'x', cover: `/_assets/${'0'.repeat(64)}.png` } },
        { slug: 'their-upload-md', data: { title: 'x', body: { markdown: `![x](upload:${theirUpload})` } } },
        { slug: 'their-asset-html', data: { title: 'x', body: { html: `<img src="${theirAsset}" alt="x">` } } },
        { slug: 'bad-path', data: { title: 'x', cover: '/_assets/../secret.png' } },
        { slug: 'bad-upload', data: { title: 'x', body: { html: '<img src="upload:nope" alt="x">' } } },
      ])
      assert.deepEqual(res.body.counts, { created: 0, updated: 0, unchanged: 0, failed: 8 })
      const [theirs, missing, asset, noAsset, md, html, badPath, badUpload] = res.body.results
      for (const r of res.body.results) {
        assert.equal(r.error.code, 'VALIDATION_FAILED', r.slug)
        assert.ok(r.error.message.length < SHORT, r.error.message)
      }
      assert.equal(theirs.error.field, 'data.cover')
      assert.match(theirs.error.fields['data.cover'], /is not a known upload of yours/)
      assert.equal(theirs.error.fields['data.cover'].replace(theirUpload, 'ID'), missing.error.fields['data.cover'].replace('upl_doesNotExist0000000000', 'ID'))
      assert.match(asset.error.fields['data.cover'], /is not an image in this site's library/)
      assert.equal(asset.error.fields['data.cover'].replace(theirAsset, 'P'), noAsset.error.fields['data.cover'].replace(`/_assets/${'0'.repeat(64)}.png`, 'P'))
      assert.equal(md.error.field, 'data.body')
      assert.match(md.error.message, /is not a known upload of yours/)
      assert.equal(html.error.field, 'data.body')
      assert.match(html.error.message, /is not an image in this site's library/)
      assert.match(badPath.error.fields['data.cover'], /is not a library path/)
      assert.match(badUpload.error.fields['data.body'], /"upload:nope" is not an upload/)

      assert.equal(await count('entries'), entriesBefore)
      assert.equal(await count('assets'), assetsBefore, "nothing is copied from another user's upload")
      assert.equal((await server.api('GET', `${s.base}/entries/their-upload`, { token: s.token })).status, 404)
      const put = await server.api('PUT', `${s.base}/entries/their-asset`, { token: s.token, body: { data: { title: 'x', cover: theirAsset } } })
      assert.equal(put.status, 422)
      assert.equal(put.body.error.code, 'VALIDATION_FAILED')
      assert.ok(put.body.error.fields['data.cover'])
      // The owner of the upload may use it.
      const own = await batch(other.token, other.base, [{ slug: 'mine', data: { title: 'x', cover: `upload:${theirUpload}` } }])
      assert.equal(own.body.results[0].status, 'created', JSON.stringify(own.body.results[0].error))
    })

    test('an oversize or non-image data: URL is refused with a short message that does not repeat it', async () => {
      const s = await site()
      const assetsBefore = await count('assets')
      const oversize = dataUrl(Buffer.concat([png(50), Buffer.alloc(2 * 1024 * 1024)]))
      const text = dataUrl(Buffer.from('hello, world: not a picture at all. '.repeat(60)), 'image/png')
      const plain = dataUrl(Buffer.from('just text'), 'text/plain')
      const svg = dataUrl(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'), 'image/svg+xml')
      assert.ok(text.length > 2000, 'a value longer than a URL may be')
      const sent = [oversize, text, plain, svg, text, 'data:image/png;base64']
      const res = await batch(s.token, s.base, [
        { slug: 'oversize', data: { title: 'x', cover: oversize } },
        { slug: 'text', data: { title: 'x', cover: text } },
        { slug: 'plain', data: { title: 'x', cover: plain } },
        { slug: 'svg', data: { title: 'x', cover: svg } },
        { slug: 'in-html', data: { title: 'x', body: { html: `<p><img src="${text}" alt="x"></p>` } } },
        { slug: 'no-comma', data: { title: 'x', cover: sent[5] } },
      ])
      assert.deepEqual(res.body.counts, { created: 0, updated: 0, unchanged: 0, failed: 6 })
      const [big, notImage, plainText, script, inHtml, noComma] = res.body.results
      res.body.results.forEach((r: any, i: number) => {
        assert.equal(r.error.code, 'VALIDATION_FAILED', r.slug)
        assert.ok(r.error.message.length < SHORT, `${r.slug}: ${r.error.message.length} characters`)
        const payload = sent[i]!.slice(sent[i]!.indexOf(',') + 1, sent[i]!.indexOf(',') + 21)
        const said = JSON.stringify(r.error)
        assert.ok(said.length < 2 * SHORT, said)
        if (sent[i]!.includes(',')) assert.ok(!said.includes(payload), `${r.slug} repeats the data: ${said}`)
      })
      assert.equal(big.error.field, 'data.cover')
      assert.match(big.error.message, /data\.cover.*inline \(data:\) image is 2097\d{3} bytes; images of at most 2097152 bytes \(2 MiB\)/)
      assert.match(notImage.error.fields['data.cover'], /not a recognized image/)
      assert.match(plainText.error.fields['data.cover'], /not a recognized image/)
      assert.match(script.error.fields['data.cover'], /SVG/)
      assert.equal(inHtml.error.field, 'data.body')
      assert.match(inHtml.error.message, /not a recognized image/)
      assert.match(noComma.error.fields['data.cover'], /no comma/)
      assert.equal(await count('assets'), assetsBefore)
      assert.equal((await server.api('GET', `${s.base}/entries`, { token: s.token })).body.items.length, 0)

      const put = await server.api('PUT', `${s.base}/entries/text`, { token: s.token, body: { data: { title: 'x', cover: text } } })
      assert.equal(put.status, 422)
      assert.equal(put.body.error.code, 'VALIDATION_FAILED')
      assert.ok(put.body.error.message.length < SHORT, put.body.error.message)
    })

    test('no message repeats a long URL, path or key in full', async () => {
      const s = await site()
      const long = `http://127.0.0.1:9/${'a'.repeat(1900)}.png`
      const key = `k${'x'.repeat(5000)}`
      const res = await batch(s.token, s.base, [
        { slug: 'fetched', data: { title: 'x', cover: long } },
        { slug: 'in-markdown', data: { title: 'x', body: { markdown: `![x](${long})` } } },
        { slug: 'relative', data: { title: 'x', cover: `pics/${'b'.repeat(1900)}.png` } },
        { slug: 'scheme', data: { title: 'x', cover: `${'c'.repeat(1500)}:x` } },
        { slug: 'key', data: { title: 'x', [key]: 1 } },
        { slug: 'y'.repeat(3000), data: { title: 'x' } },
        { slug: 'y'.repeat(3000), data: { title: 'x' } },
      ])
      const [fetched, markdown, relative, scheme, stray, dup] = res.body.results
      assert.equal(fetched.error.code, 'IMAGE_IMPORT_FAILED')
      assert.match(fetched.error.message, /loopback/)
      assert.equal(markdown.error.code, 'IMAGE_IMPORT_FAILED')
      assert.match(relative.error.message, /relative URL/)
      for (const r of [fetched, markdown, relative, scheme, stray, dup]) {
        const said = JSON.stringify(r.error)
        assert.ok(said.length < 1000, `${r.error.code}: ${said.length} characters`)
        for (const run of ['a', 'b', 'c', 'x', 'y']) assert.ok(!said.includes(run.repeat(100)), said)
      }
      assert.ok(Object.keys(stray.error.fields).some((k) => k.startsWith('data.kxxx') && k.endsWith('…')))
    })
  })
}
