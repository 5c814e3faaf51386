/**
 * Posts to `/_forms/{name}` on a site's host: taken only for a form the served version declares,
 * urlencoded or multipart (files stored as blobs), answered with a redirect (to a same-site
 * `_next`, or the thank-you page) or JSON; every limit and the honeypot refuse or store nothing;
 * throttled per client address with Retry-After; a protected site only with its unlock.
 */
import assert from 'node:assert/strict'
import http from 'node:http'
import { performance } from 'node:perf_hooks'
import { describe, test } from 'node:test'
import { FORM_BODY_MAX_BYTES, FORM_BODY_SECONDS, FORM_SUBMISSION_LIMITS } from '../../src/core/limits.ts'
import { safeReturnPath } from '../../src/core/site-address.ts'
import { createVersion, sha256 } from '../helpers/factories.ts'
import { multipart, postForm, restaurantBundle, urlencoded } from '../helpers/forms.ts'
import { bundle, SITE_DOMAIN, sharedTestServers, type TestServer } from '../helpers/server.ts'
import { cookieOf, unlockSite } from '../helpers/site-unlock.ts'
import { STORES } from '../helpers/stores.ts'

const sharedServer = sharedTestServers()
/** How long, in real time, the slow-body test moves the mocked clock before it gives up. */
const REAL_WAIT_MS = 30_000
const UNTHROTTLED = { PLINTH_FORM_RATE_PER_SITE: '1000000', PLINTH_FORM_RATE_PER_ADDRESS: '1000000' }

async function restaurant(server: TestServer, files = restaurantBundle()) {
  const owner = await server.user()
  const created = await server.api('POST', '/v1/websites', { token: owner.token, body: { category: 'restaurant', files } })
  assert.equal(created.status, 201, created.text)
  return { owner, websiteId: created.body.websiteId as string, slug: created.body.slug as string }
}

const submissionsOf = async (server: TestServer, site: { owner: { token: string }; websiteId: string }, form = 'booking') => {
  const res = await server.api('GET', `/v1/websites/${site.websiteId}/forms/${form}/submissions`, { token: site.owner.token })
  assert.equal(res.status, 200, res.text)
  return res.body.items as any[]
}

for (const store of STORES) {
  describe(`form posts (${store.name})`, { skip: store.skip }, () => {
    const start = () => sharedServer(store.name, UNTHROTTLED)

    test('a urlencoded post is stored and answered with a 303 to the thank-you page, which is accessible', async () => {
      const server = await start()
      const site = await restaurant(
        server,
        bundle('Chez', [
          { path: 'book.html', content: '<form method="post" action="/_forms/booking"><input name="name" required><input type="email" name="email"></form>' },
        ]),
      )
      const res = await postForm(server, site.slug, '/_forms/booking', urlencoded({ name: 'Ada', email: 'Ada@Example.com', extra: 'kept' }))
      assert.equal(res.status, 303, res.text)
      assert.equal(res.headers.location, '/_forms/booking/thanks')
      const thanks = await server.site(site.slug, '/_forms/booking/thanks')
      assert.equal(thanks.status, 200)
      assert.match(thanks.body.toString(), /<html lang="en">[\s\S]*<h1>Thank you<\/h1>/)
      const [stored, ...others] = await submissionsOf(server, site)
      assert.equal(others.length, 0)
      assert.match(stored.id, /^sub_/)
      assert.deepEqual(stored.data, { name: 'Ada', email: 'Ada@Example.com', extra: 'kept' })
      assert.equal(stored.spam, false)
      const row = await server.server.db.kysely.selectFrom('form_submissions').select('email').where('id', '=', stored.id).executeTakeFirstOrThrow()
      assert.equal(row.email, 'ada@example.com')
    })

    test('_next leads to a path of the same site; an off-site _next is ignored; the site’s thanks.html is used when it has one', async () => {
      const server = await start()
      const site = await restaurant(server, restaurantBundle([{ path: 'thanks.html', content: '<!doctype html><title>Thanks</title><p>Merci</p>' }]))
      const to = async (next: string) => (await postForm(server, site.slug, '/_forms/booking', urlencoded({ name: 'A', _next: next }))).headers.location
      assert.equal(await to('/booked.html?x=1'), '/booked.html?x=1')
      for (const offSite of ['https://evil.example/', '//evil.example/x', '/\\evil.example', 'javascript:alert(1)'])
        assert.equal(await to(offSite), '/thanks.html', offSite)
      assert.equal((await submissionsOf(server, site)).length, 5)
    })

    test('a post that asks for JSON gets 201 with the submission id, and errors as the envelope', async () => {
      const server = await start()
      const site = await restaurant(server)
      const res = await postForm(server, site.slug, '/_forms/booking', urlencoded({ name: 'Grace', party: '4' }), { accept: 'application/json' })
      assert.equal(res.status, 201, res.text)
      assert.match(res.json.submissionId, /^sub_[A-Za-z0-9]{22}$/)
      const one = await server.api('GET', `/v1/websites/${site.websiteId}/forms/booking/submissions/${res.json.submissionId}`, { token: site.owner.token })
      assert.equal(one.status, 200, one.text)
      assert.deepEqual(one.body.data, { name: 'Grace', party: '4' })
      const missing = await postForm(server, site.slug, '/_forms/booking', urlencoded({ party: '4' }), { accept: 'application/json' })
      assert.equal(missing.status, 422, missing.text)
      assert.equal(missing.json.error.code, 'VALIDATION_FAILED')
      assert.equal(missing.json.error.fields.name, 'is required')
      const wrongType = await postForm(server, site.slug, '/_forms/booking', JSON.stringify({ name: 'x' }), {
        accept: 'application/json',
        contentType: 'application/json',
      })
      assert.equal(wrongType.status, 415, wrongType.text)
      assert.equal((await submissionsOf(server, site)).length, 1)
    })

    test('a multipart post stores its files as blobs that owners download', async () => {
      const server = await start()
      const site = await restaurant(server)
      const bytes = Buffer.from('%PDF-1.4 wishes\n')
      const { body, contentType } = await multipart([
        ['name', 'Linus'],
        ['notes', 'Près de la fenêtre'],
        ['menu', { filename: 'wishes.pdf', type: 'application/pdf', bytes }],
      ])
      const res = await postForm(server, site.slug, '/_forms/booking', body, { contentType, accept: 'application/json' })
      assert.equal(res.status, 201, res.text)
      const [stored] = await submissionsOf(server, site)
      assert.deepEqual(stored.data, { name: 'Linus', notes: 'Près de la fenêtre' })
      assert.equal(stored.files.length, 1)
      assert.deepEqual(
        { ...stored.files[0], url: undefined },
        { field: 'menu', filename: 'wishes.pdf', contentType: 'application/pdf', size: bytes.length, url: undefined },
      )
      const path = new URL(stored.files[0].url).pathname
      const file = await fetch(server.url + path, { headers: { authorization: `Bearer ${site.owner.token}` } })
      assert.equal(file.status, 200)
      assert.match(file.headers.get('content-disposition')!, /^attachment/)
      assert.equal(file.headers.get('content-type'), 'application/octet-stream')
      assert.deepEqual(Buffer.from(await file.arrayBuffer()), bytes)
      const stranger = await server.user()
      assert.equal((await fetch(server.url + path, { headers: { authorization: `Bearer ${stranger.token}` } })).status, 404)
      // An empty file input sends a part with no file name: no file is stored.
      const empty = await multipart([
        ['name', 'Empty'],
        ['menu', { filename: '', type: 'application/octet-stream', bytes: Buffer.alloc(0) }],
      ])
      assert.equal((await postForm(server, site.slug, '/_forms/booking', empty.body, { contentType: empty.contentType })).status, 303)
      assert.deepEqual((await submissionsOf(server, site))[0].files, [])
    })

    test('other methods on a form path are 405 naming POST among those it takes', async () => {
      const server = await start()
      const site = await restaurant(server)
      for (const method of ['PUT', 'DELETE', 'OPTIONS']) {
        const res = await server.site(site.slug, '/_forms/booking', { method })
        assert.equal(res.status, 405, method)
        assert.equal(res.headers.allow, 'GET, HEAD, POST', method)
      }
      assert.equal((await server.site(site.slug, '/index.html', { method: 'PUT' })).headers.allow, 'GET, HEAD')
    })

    test('a file is taken only by a file input the form declares: any other field refuses the post, storing nothing', async () => {
      const server = await start()
      const site = await restaurant(server)
      const file = { filename: 'big.bin', type: 'application/octet-stream', bytes: Buffer.alloc(64 * 1024, 1) }
      for (const field of ['notes', 'undeclared']) {
        const { body, contentType } = await multipart([
          ['name', 'Mallory'],
          [field, file],
        ])
        const res = await postForm(server, site.slug, '/_forms/booking', body, { contentType, accept: 'application/json' })
        assert.equal(res.status, 422, res.text)
        assert.deepEqual(res.json.error.fields, { [field]: 'takes no file: the form declares no file input of this name' })
      }
      assert.deepEqual(await submissionsOf(server, site), [])
    })

    test(`a body still arriving after ${FORM_BODY_SECONDS} seconds is refused with 408, and nothing is stored`, async (t) => {
      const server = await start()
      const site = await restaurant(server)
      const { port } = new URL(server.url)
      const body = urlencoded({ name: 'Slow', notes: 'x'.repeat(1000) })
      t.mock.timers.enable({ apis: ['setTimeout'] })
      const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = http.request(
          {
            host: '127.0.0.1',
            port,
            path: '/_forms/booking',
            method: 'POST',
            agent: false,
            headers: {
              host: `${site.slug}.${SITE_DOMAIN}`,
              accept: 'application/json',
              'content-type': 'application/x-www-form-urlencoded',
              'content-length': String(body.length),
            },
          },
          (res) => {
            let text = ''
            res.on('data', (c) => (text += c))
            res.on('end', () => resolve({ status: res.statusCode ?? 0, text }))
          },
        )
        req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? undefined : reject(error)))
        // Half the body, then nothing more.
        req.write(body.slice(0, body.length / 2))
      })
      let answered: { status: number; text: string } | undefined
      void answer.then((a) => (answered = a))
      // The clock moves a second a turn until the server answers: only the form's own deadline ends
      // the wait. The server may take many turns to reach the body (a database query first), so
      // the turns are bounded by real time, which the mocked clock does not move.
      const started = performance.now()
      while (answered === undefined && performance.now() - started < REAL_WAIT_MS) {
        await new Promise((resolve) => setImmediate(resolve))
        t.mock.timers.tick(1000)
      }
      t.mock.timers.reset()
      assert.ok(answered, `no answer within ${REAL_WAIT_MS / 1000} s of real time, the clock moved on meanwhile`)
      const res = answered
      assert.equal(res.status, 408, res.text)
      assert.equal(JSON.parse(res.text).error.code, 'REQUEST_TIMEOUT')
      assert.deepEqual(await submissionsOf(server, site), [])
    })

    test('only forms the served version declares take posts: 404 otherwise, and after a version without it goes live; a draft takes none', async () => {
      const server = await start()
      const site = await restaurant(server)
      for (const path of ['/_forms/contact', '/_forms/Booking', '/_forms/booking/extra', '/_forms/']) {
        const res = await postForm(server, site.slug, path, urlencoded({ name: 'x' }), { accept: 'application/json' })
        assert.equal(res.status, 404, `${path}: ${res.text}`)
      }
      const html = await postForm(server, site.slug, '/_forms/contact', urlencoded({ name: 'x' }))
      assert.equal(html.status, 404)
      assert.match(html.text, /Form not found/)
      assert.equal((await postForm(server, site.slug, '/other', urlencoded({ name: 'x' }))).status, 405)
      await createVersion(server, site.owner, site.websiteId, { files: bundle('No forms') })
      assert.equal((await postForm(server, site.slug, '/_forms/booking', urlencoded({ name: 'x' }), { accept: 'application/json' })).status, 404)
      // The version that declares it still takes posts on its preview host.
      assert.equal((await postForm(server, `${site.slug}--v1`, '/_forms/booking', urlencoded({ name: 'Preview' }), { accept: 'application/json' })).status, 201)
      assert.equal((await server.site(site.slug, '/_forms/booking/thanks')).status, 404)
      // A draft's preview shows the form but takes no posts: 405, as JSON or as a page, and nothing is stored.
      const draft = await server.api('POST', `/v1/websites/${site.websiteId}/drafts`, { token: site.owner.token, body: { baseVersion: 1 } })
      assert.equal(draft.status, 201, draft.text)
      const draftHost = new URL(draft.body.previewUrl).hostname.split('.')[0]!
      assert.match((await server.site(draftHost, '/book.html')).body.toString(), /action="\/_forms\/booking"/)
      const refused = await postForm(server, draftHost, '/_forms/booking', urlencoded({ name: 'Draft' }), { accept: 'application/json' })
      assert.equal(refused.status, 405, refused.text)
      assert.equal(refused.headers.allow, 'GET, HEAD')
      assert.equal(refused.json.error.code, 'METHOD_NOT_ALLOWED')
      assert.match(refused.json.error.message, /draft's preview takes no form posts/)
      const page = await postForm(server, draftHost, '/_forms/booking', urlencoded({ name: 'Draft' }))
      assert.equal(page.status, 405)
      assert.match(page.text, /<h1>Forms are not taken here<\/h1>[\s\S]*published version/)
      const listed = await server.api('GET', `/v1/websites/${site.websiteId}/forms`, { token: site.owner.token })
      assert.deepEqual(
        listed.body.items.map((f: any) => [f.name, f.live, f.submissions]),
        [['booking', false, 1]],
      )
    })

    test('a body busboy cannot read (no field name, an unknown charset) is 400 and stores nothing; the server lives on', async () => {
      const server = await start()
      const site = await restaurant(server)
      const boundary = 'XB'
      const parts = (...bodies: string[]) => `${bodies.map((part) => `--${boundary}\r\n${part}\r\n`).join('')}--${boundary}--\r\n`
      const formData = `multipart/form-data; boundary=${boundary}`
      const cases: Array<[string, string, string, RegExp]> = [
        ['a urlencoded body in an unknown charset', 'name=A&b=2', 'application/x-www-form-urlencoded; charset=x', /cannot be read/],
        [
          'a part with no name',
          parts('Content-Disposition: form-data\r\n\r\nv', 'Content-Disposition: form-data; name="name"\r\n\r\nA'),
          formData,
          /has no name/,
        ],
        ['a part with an empty name', parts('Content-Disposition: form-data; name=""\r\n\r\nv'), formData, /has no name/],
        ['a part named only by name*', parts(`Content-Disposition: form-data; name*=utf-8''n%C3%A4me\r\n\r\nv`), formData, /has no name/],
        [
          'a part in an unknown charset',
          parts('Content-Disposition: form-data; name="name"\r\nContent-Type: text/plain; charset=bogus\r\n\r\nv'),
          formData,
          /charset/,
        ],
        [
          'a file with no field name',
          parts('Content-Disposition: form-data; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello'),
          formData,
          /file has no field name/,
        ],
      ]
      for (const [what, body, contentType, message] of cases) {
        const res = await postForm(server, site.slug, '/_forms/booking', body, { contentType, accept: 'application/json' })
        assert.equal(res.status, 400, `${what}: ${res.text}`)
        assert.equal(res.json.error.code, 'BAD_REQUEST', what)
        assert.match(res.json.error.message, message, what)
      }
      assert.deepEqual(await submissionsOf(server, site), [])
      assert.equal((await postForm(server, site.slug, '/_forms/booking', urlencoded({ name: 'A' }), { accept: 'application/json' })).status, 201)
    })

    test('a _next outside printable ASCII is sent percent-encoded; one that is not valid Unicode is ignored', async () => {
      assert.equal(safeReturnPath('/bad\ud800'), null)
      const server = await start()
      const site = await restaurant(server, restaurantBundle([{ path: 'thanks.html', content: '<!doctype html><title>Thanks</title><p>Merci</p>' }]))
      const to = async (next: string) => {
        const res = await postForm(server, site.slug, '/_forms/booking', urlencoded({ name: 'A', _next: next }))
        assert.equal(res.status, 303, `${next}: ${res.text}`)
        return res.headers.location
      }
      assert.equal(await to('/réservé ✓.html?q=été'), '/r%C3%A9serv%C3%A9%20%E2%9C%93.html?q=%C3%A9t%C3%A9')
      assert.equal(await to('/a\u007fb'), '/a%7Fb')
      assert.equal(await to('/already%20encoded'), '/already%20encoded')
    })

    test('every limit refuses with 413 or 422 and stores nothing; the honeypot looks accepted and stores nothing', async () => {
      const server = await start()
      const site = await restaurant(server)
      const limits = FORM_SUBMISSION_LIMITS
      const json = { accept: 'application/json' }
      const cases: Array<[string, Promise<{ status: number; json: any }>, number]> = [
        [
          'too many fields',
          postForm(
            server,
            site.slug,
            '/_forms/booking',
            urlencoded(Array.from({ length: limits.maxFields + 1 }, (_, i): [string, string] => [`f${i}`, 'x'])),
            json,
          ),
          422,
        ],
        ['a value too long', postForm(server, site.slug, '/_forms/booking', urlencoded({ name: 'x'.repeat(limits.maxValueBytes + 1) }), json), 413],
        [
          'a field name too long',
          postForm(server, site.slug, '/_forms/booking', urlencoded({ name: 'A', ['n'.repeat(limits.maxFieldNameChars + 1)]: 'x' }), json),
          422,
        ],
        [
          'fields too large together',
          postForm(
            server,
            site.slug,
            '/_forms/booking',
            urlencoded(Array.from({ length: 9 }, (_, i): [string, string] => [`f${i}`, 'x'.repeat(limits.maxValueBytes - 10)])),
            json,
          ),
          413,
        ],
        [
          'a declared body too large',
          postForm(server, site.slug, '/_forms/booking', 'x', { ...json, headers: { 'content-length': String(FORM_BODY_MAX_BYTES + 1) } }).catch(() => ({
            status: 413,
            json: { error: { code: 'PAYLOAD_TOO_LARGE' } },
          })),
          413,
        ],
      ]
      const file = (n: number, size: number) =>
        ['menu', { filename: `f${n}.bin`, type: 'application/octet-stream', bytes: Buffer.alloc(size, 1) }] as [
          string,
          { filename: string; type: string; bytes: Buffer },
        ]
      const big = await multipart([['name', 'A'], file(0, limits.maxFileBytes + 1)])
      cases.push(['a file too large', postForm(server, site.slug, '/_forms/booking', big.body, { ...json, contentType: big.contentType }), 413])
      const many = await multipart([['name', 'A'], ...Array.from({ length: limits.maxFiles + 1 }, (_, i) => file(i, 10))])
      cases.push(['too many files', postForm(server, site.slug, '/_forms/booking', many.body, { ...json, contentType: many.contentType }), 422])
      const heavy = await multipart([['name', 'A'], file(0, limits.maxFileBytes), file(1, limits.maxFileBytes), file(2, 1024)])
      cases.push(['files too large together', postForm(server, site.slug, '/_forms/booking', heavy.body, { ...json, contentType: heavy.contentType }), 413])
      for (const [what, answer, status] of cases) {
        const res = await answer
        assert.equal(res.status, status, `${what}: ${JSON.stringify(res.json)}`)
        assert.equal(res.json.error.code, status === 413 ? 'PAYLOAD_TOO_LARGE' : 'VALIDATION_FAILED', what)
      }
      const honeypot = await postForm(server, site.slug, '/_forms/booking', urlencoded({ name: 'Bot', _gotcha: 'http://spam.example' }))
      assert.equal(honeypot.status, 303)
      assert.equal(honeypot.headers.location, '/_forms/booking/thanks')
      const honeypotJson = await postForm(server, site.slug, '/_forms/booking', urlencoded({ name: 'Bot', _gotcha: 'x' }), json)
      assert.equal(honeypotJson.status, 201)
      assert.match(honeypotJson.json.submissionId, /^sub_/)
      assert.equal((await submissionsOf(server, site)).length, 0)
      // No byte of a refused file was stored.
      const hashes = [sha256(Buffer.alloc(10, 1)), sha256(Buffer.alloc(1024, 1)), sha256(Buffer.alloc(limits.maxFileBytes, 1))]
      assert.equal((await server.server.db.kysely.selectFrom('blobs').select('hash').where('hash', 'in', hashes).execute()).length, 0)
    })

    test('a protected site takes posts only from a visitor who unlocked it', async () => {
      const server = await start()
      const site = await restaurant(server)
      const set = await server.api('PUT', `/v1/websites/${site.websiteId}/password`, { token: site.owner.token, body: { password: 'members only please' } })
      assert.equal(set.status, 204, set.text)
      const locked = await postForm(server, site.slug, '/_forms/booking', urlencoded({ name: 'Locked out' }))
      assert.equal(locked.status, 401)
      assert.match(locked.text, /This site is protected/)
      const script = await postForm(server, site.slug, '/_forms/booking', urlencoded({ name: 'Locked out' }), { accept: 'application/json' })
      assert.equal(script.status, 401)
      assert.equal(script.json.error.code, 'AUTH_REQUIRED', 'a script asking for JSON gets the envelope')
      assert.match(script.json.error.message, /protected by a password/)
      const unlocked = await unlockSite(server, site.slug, 'members only please')
      const res = await postForm(server, site.slug, '/_forms/booking', urlencoded({ name: 'Member' }), {
        accept: 'application/json',
        headers: { cookie: cookieOf(unlocked) },
      })
      assert.equal(res.status, 201, res.text)
      assert.deepEqual(
        (await submissionsOf(server, site)).map((s) => s.data.name),
        ['Member'],
      )
    })
  })

  describe(`form post rate limits (${store.name})`, { skip: store.skip }, () => {
    test('posts over the per-address limit wait, told Retry-After, and store nothing', async () => {
      const server = await sharedServer(store.name, { PLINTH_FORM_RATE_PER_ADDRESS: '2', PLINTH_TRUST_PROXY: 'loopback' })
      const site = await restaurant(server)
      const from = (address: string) => ({ accept: 'application/json', headers: { 'x-forwarded-for': address } })
      for (let i = 0; i < 2; i++)
        assert.equal((await postForm(server, site.slug, '/_forms/booking', urlencoded({ name: `n${i}` }), from('203.0.113.7'))).status, 201)
      const refused = await postForm(server, site.slug, '/_forms/booking', urlencoded({ name: 'third' }), from('203.0.113.7'))
      assert.equal(refused.status, 429, refused.text)
      assert.equal(refused.json.error.code, 'RATE_LIMITED')
      const wait = Number(refused.headers['retry-after'])
      assert.ok(wait >= 1 && wait <= 60, String(refused.headers['retry-after']))
      const page = await postForm(server, site.slug, '/_forms/booking', urlencoded({ name: 'fourth' }), { headers: { 'x-forwarded-for': '203.0.113.7' } })
      assert.equal(page.status, 429)
      assert.ok(page.headers['retry-after'])
      // Another address is counted apart.
      assert.equal((await postForm(server, site.slug, '/_forms/booking', urlencoded({ name: 'other' }), from('198.51.100.1'))).status, 201)
      assert.equal((await submissionsOf(server, site)).length, 3)
    })
  })
}
