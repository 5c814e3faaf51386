/**
 * Rich text renders in worker threads with a time and a memory limit: a value over either fails
 * alone (RICH_TEXT_TOO_COSTLY) while the server goes on answering. What a batch of maximal
 * pathological values does to a running server is in rich-text-pool.e2e.test.ts.
 */
import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { TRANSACTION_MAX_CHARS } from '../../src/content/entries.service.ts'
import { EntriesRepository } from '../../src/content/entries.repository.ts'
import { RichTextPool } from '../../src/content/rich-text.pool.ts'
import { RICH_TEXT_BATCH_MAX_CHARS, RICH_TEXT_MAX_CHARS, RICH_TEXT_MEMORY_MB } from '../../src/core/limits.ts'
import { PATHOLOGICAL_RICH_TEXT, siteWithCollection } from '../helpers/content.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

/** A time limit no render here comes near, for the tests where only the memory limit or the answers matter. */
const NO_TIME_LIMIT_MS = 10 * 60_000

describe('rich-text worker pool', () => {
  test('a value over the time limit fails alone, the thread is replaced, and the event loop stays free', async () => {
    // A limit far below the pathological value's cost (seconds) and far above a small value's
    // (milliseconds), so a loaded machine changes neither outcome.
    const pool = new RichTextPool({ threads: 2, timeLimitMs: 1000, memoryMb: RICH_TEXT_MEMORY_MB, idleTimeoutMs: 1000 })
    // A server in this process, asked while the costly value renders: it must answer at once.
    const server = http.createServer((_req, res) => res.end('ok'))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
    try {
      await pool.render({ markdown: 'warm' })
      const costly = pool.render({ html: PATHOLOGICAL_RICH_TEXT })
      const others = Promise.all([pool.render({ markdown: '*fine*' }), fetch(url).then((r) => r.text())])
      await assert.rejects(costly, (error: any) => error.code === 'RICH_TEXT_TOO_COSTLY' && /longer than 1000 ms/.test(error.message))
      const [fine, answer] = await others
      assert.equal(fine.html, '<p><em>fine</em></p>\n')
      assert.equal(answer, 'ok')
      // The stopped thread was replaced: the pool goes on rendering.
      assert.equal((await pool.render({ html: '<p onclick="x()">after</p>' })).html, '<p>after</p>')
    } finally {
      server.close()
      await pool.close()
    }
  })

  test('a value over the memory limit fails alone; the process lives on', async () => {
    const pool = new RichTextPool({ threads: 1, timeLimitMs: NO_TIME_LIMIT_MS, memoryMb: 64, idleTimeoutMs: 1000 })
    try {
      await assert.rejects(pool.render({ html: PATHOLOGICAL_RICH_TEXT }), (error: any) => error.code === 'RICH_TEXT_TOO_COSTLY' && /64 MiB/.test(error.message))
      assert.equal((await pool.render({ markdown: '# ok' })).html, '<h1>ok</h1>\n')
    } finally {
      await pool.close()
    }
  })

  test('values asked for together render together, each with its own result', async () => {
    const pool = new RichTextPool({ threads: 2, timeLimitMs: NO_TIME_LIMIT_MS, memoryMb: RICH_TEXT_MEMORY_MB, idleTimeoutMs: 1000 })
    try {
      const results = await Promise.allSettled(
        Array.from({ length: 50 }, (_, i) => (i === 7 ? pool.render({ html: '<b>'.repeat(50_000) }) : pool.render({ markdown: `item *${i}*` }))),
      )
      results.forEach((result, i) => {
        if (i === 7) assert.equal(result.status === 'rejected' && result.reason.code, 'VALIDATION_FAILED')
        else assert.equal(result.status === 'fulfilled' && result.value.html, `<p>item <em>${i}</em></p>\n`)
      })
    } finally {
      await pool.close()
    }
  })
})

for (const store of STORES) {
  describe(`rich text through the API (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    before(async () => {
      server = await startTestServer(store.name)
    })
    after(() => server?.close())

    test('putEntry answers 422 with the renderer refusal; a batch past its rich-text budget fails its tail alone', async () => {
      const { user, base } = await siteWithCollection(server)
      const deep = await server.api('PUT', `${base}/entries/deep`, {
        token: user.token,
        body: { data: { title: 'Deep', body: { html: '<b>'.repeat(50_000) } } },
      })
      assert.equal(deep.status, 422)
      assert.equal(deep.body.error.code, 'VALIDATION_FAILED')
      assert.ok(deep.body.error.fields['data.body'])

      const each = Math.floor(RICH_TEXT_MAX_CHARS / 2)
      const fit = Math.floor(RICH_TEXT_BATCH_MAX_CHARS / each)
      const entries = Array.from({ length: fit + 3 }, (_, i) => ({
        slug: `long-${i}`,
        data: { title: `Long ${i}`, ...(i === fit + 1 ? {} : { body: { markdown: `${'word '.repeat(each / 5 - 1)}end` } }) },
      }))
      const batch = await server.api('POST', `${base}/entries/batch`, { token: user.token, body: { entries } })
      assert.equal(batch.status, 200, batch.text)
      const statuses = batch.body.results.map((r: any) => r.status)
      assert.deepEqual(statuses.slice(0, fit), Array(fit).fill('created'))
      assert.equal(batch.body.results[fit].error.code, 'RICH_TEXT_BUDGET_EXCEEDED')
      assert.match(batch.body.results[fit].error.message, new RegExp(`${RICH_TEXT_BATCH_MAX_CHARS} characters`))
      assert.equal(statuses[fit + 1], 'created', 'an item without rich text is not held back')
      assert.equal(batch.body.results[fit + 2].error.code, 'RICH_TEXT_BUDGET_EXCEEDED')
    })

    test('a batch of long entries is stored in several transactions of bounded size, all of it', async (t) => {
      const { user, base } = await siteWithCollection(server)
      // Characters of rows per transaction: writeMany is one, an insert on its own another.
      const transactions: number[][] = []
      const chars = (row: { data: string; rendered: string }) => row.data.length + row.rendered.length
      // eslint-disable-next-line @typescript-eslint/unbound-method -- the originals, called below with the repository as `this`
      const { writeMany, insert } = EntriesRepository.prototype
      t.mock.method(EntriesRepository.prototype, 'writeMany', function (this: EntriesRepository, inserts: any[], replaces: any[]) {
        transactions.push([...inserts, ...replaces].map(chars))
        return writeMany.call(this, inserts, replaces)
      })
      t.mock.method(EntriesRepository.prototype, 'insert', function (this: EntriesRepository, row: any) {
        transactions.push([chars(row)])
        return insert.call(this, row)
      })

      const words = Math.floor(RICH_TEXT_MAX_CHARS / 2 / 5)
      const entries = [
        ...Array.from({ length: 6 }, (_, i) => ({
          slug: `long-${i}`,
          data: { title: `Long ${i}`, body: { markdown: `${'word '.repeat(words - 1)}end${i}` } },
        })),
        ...Array.from({ length: 4 }, (_, i) => ({ slug: `short-${i}`, data: { title: `Short ${i}`, body: { markdown: `Short *${i}*` } } })),
      ]
      const batch = await server.api('POST', `${base}/entries/batch`, { token: user.token, body: { entries } })
      assert.equal(batch.status, 200, batch.text)
      assert.deepEqual(batch.body.counts, { created: 10, updated: 0, unchanged: 0, failed: 0 })

      assert.ok(transactions.length > 1, `one transaction held ${transactions[0]?.length} rows`)
      assert.equal(transactions.flat().length, 10, 'every row is written once')
      for (const rows of transactions) {
        const total = rows.reduce((sum, n) => sum + n, 0)
        assert.ok(rows.length === 1 || total <= TRANSACTION_MAX_CHARS, `a transaction of ${rows.length} rows held ${total} characters`)
      }
      assert.ok(transactions.length < 10, 'rows that fit together share a transaction')

      for (const slug of ['long-0', 'long-5', 'short-3']) {
        const stored = await server.api('GET', `${base}/entries/${slug}`, { token: user.token })
        assert.equal(stored.status, 200, stored.text)
        assert.equal(stored.body.slug, slug)
      }
      const last = await server.api('GET', `${base}/entries/long-5`, { token: user.token })
      assert.ok(last.body.data.body.markdown.endsWith('end5'))
    })
  })
}
