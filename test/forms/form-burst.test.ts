/**
 * A burst of 500 submissions to one form from 50 connections at once, on every store: each post
 * is either acknowledged (201 with its id) and then stored exactly as sent, or refused cleanly
 * with 429 and Retry-After once the site's limit is reached; none is lost or stored twice, and the
 * server goes on answering the API and other sites while it takes them (their answers are checked;
 * how long they took is reported, not asserted).
 */
import assert from 'node:assert/strict'
import http from 'node:http'
import { after, before, describe, test } from 'node:test'
import { restaurantBundle, urlencoded } from '../helpers/forms.ts'
import { bundle, SITE_DOMAIN, startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

const POSTS = 500
const CONNECTIONS = 50
/** The site's limit per minute: the burst goes past it, so some posts are refused. */
const SITE_LIMIT = 400

interface Answer {
  status: number
  headers: http.IncomingHttpHeaders
  text: string
}

function request(agent: http.Agent, port: number, host: string, method: string, path: string, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: http.OutgoingHttpHeaders = { host }
    if (body !== undefined) {
      headers['content-type'] = 'application/x-www-form-urlencoded'
      headers['content-length'] = Buffer.byteLength(body)
      headers.accept = 'application/json'
    }
    const req = http.request({ host: '127.0.0.1', port, path, method, agent, headers }, (res) => {
      let text = ''
      res.on('data', (c) => (text += c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

for (const store of STORES) {
  describe(`a burst of form posts (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    before(async () => {
      server = await startTestServer(store.name, { PLINTH_FORM_RATE_PER_SITE: String(SITE_LIMIT), PLINTH_FORM_RATE_PER_ADDRESS: '1000000' })
    })
    after(() => server?.close())

    test('500 posts from 50 connections: every acknowledged one is stored once, the rest are 429 with Retry-After, others are still served', async (t) => {
      const owner = await server.user()
      const created = await server.api('POST', '/v1/websites', { token: owner.token, body: { category: 'restaurant', files: restaurantBundle() } })
      assert.equal(created.status, 201, created.text)
      const other = await server.api('POST', '/v1/websites', { token: owner.token, body: { category: 'other', files: bundle('Neighbour') } })
      assert.equal(other.status, 201, other.text)
      const { websiteId, slug } = created.body as { websiteId: string; slug: string }
      const port = Number(new URL(server.url).port)
      const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS })
      const host = `${slug}.${SITE_DOMAIN}`

      let bursting = true
      const probes: Array<{ what: string; status: number; ms: number }> = []
      const probe = async () => {
        const probeAgent = new http.Agent({ keepAlive: true, maxSockets: 1 })
        while (bursting) {
          for (const [what, hostName, path] of [
            ['GET /v1', new URL(server.url).host, '/v1'],
            ['another site', `${other.body.slug}.${SITE_DOMAIN}`, '/'],
          ] as const) {
            const started = performance.now()
            const answer = await request(probeAgent, port, hostName, 'GET', path)
            probes.push({ what, status: answer.status, ms: performance.now() - started })
          }
        }
        probeAgent.destroy()
      }
      const probing = probe()
      const answers = await Promise.all(
        Array.from({ length: POSTS }, (_, i) =>
          request(agent, port, host, 'POST', '/_forms/booking', urlencoded({ name: `Guest ${i}`, party: String((i % 6) + 1), notes: `burst ${i}` })),
        ),
      )
      bursting = false
      await probing
      agent.destroy()

      const acknowledged = new Map<string, number>()
      let refused = 0
      for (const [i, answer] of answers.entries()) {
        if (answer.status === 201) {
          const id = (JSON.parse(answer.text) as { submissionId: string }).submissionId
          assert.ok(!acknowledged.has(id), 'each post gets an id of its own')
          acknowledged.set(id, i)
        } else {
          assert.equal(answer.status, 429, `post ${i}: ${answer.status} ${answer.text}`)
          assert.match(String(answer.headers['retry-after']), /^[1-9]\d*$/)
          assert.equal(JSON.parse(answer.text).error.code, 'RATE_LIMITED')
          refused++
        }
      }
      assert.equal(acknowledged.size + refused, POSTS)
      assert.ok(refused > 0, 'the burst went past the site limit')
      assert.ok(acknowledged.size <= SITE_LIMIT * 2, 'no more than the limit of the window (or two, should the burst straddle one) was taken')

      // Everything acknowledged is stored, as sent, once; nothing else is.
      const rows = await server.server.db.kysely.selectFrom('form_submissions').select(['id', 'data']).where('website_id', '=', websiteId).execute()
      assert.equal(rows.length, acknowledged.size)
      for (const row of rows) {
        const i = acknowledged.get(row.id)
        assert.ok(i !== undefined, `${row.id} was acknowledged`)
        assert.deepEqual(JSON.parse(row.data), { name: `Guest ${i}`, party: String((i % 6) + 1), notes: `burst ${i}` })
      }
      const listed = await server.api('GET', `/v1/websites/${websiteId}/forms`, { token: owner.token })
      assert.equal(listed.body.items[0].submissions, acknowledged.size)

      assert.ok(probes.length >= 2, 'the API and another site were asked during the burst')
      for (const p of probes) assert.equal(p.status, 200, `${p.what} answered during the burst`)
      const slowest = (what: string) => Math.max(...probes.filter((p) => p.what === what).map((p) => p.ms))
      t.diagnostic(
        `${acknowledged.size} stored, ${refused} refused; during the burst GET /v1 answered ${probes.filter((p) => p.what === 'GET /v1').length} times, slowest ${slowest('GET /v1').toFixed(1)} ms; another site slowest ${slowest('another site').toFixed(1)} ms`,
      )
    })
  })
}
