import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'
import { type ScanOutcome, scanText } from '../../src/publishing/content-rules.ts'
import { batchesOf, CONTENT_SCAN_BATCH_CHARS, ContentScanPool } from '../../src/publishing/content-scans.pool.ts'
import type { SiteCheckInput } from '../../src/site-check/site-check.ts'
import { useCompiledThreadModules } from '../helpers/build.ts'
import { page as sitePage, siteWarnings } from '../helpers/site-check.ts'

await useCompiledThreadModules()

const page = (path: string, body: string) => ({ path, contentType: 'text/html', text: `<!doctype html><title>${path}</title>${body}` })
/** A page whose checks take about 400 ms here: far past a 100 ms limit. */
const HEAVY = page('heavy.html', '<div><p>a <b>b</b> <i>c</i></p></div>'.repeat(50_000))

describe('content rules in worker threads', () => {
  const pool = new ContentScanPool({ threads: 1, timeLimitMs: 10_000, memoryMb: 256, idleTimeoutMs: 5_000, batchChars: CONTENT_SCAN_BATCH_CHARS })
  // A limit the checks of a 1.8 MB page (about 400 ms here) cannot fit in, and a small file easily does.
  const strict = new ContentScanPool({ threads: 1, timeLimitMs: 100, memoryMb: 256, idleTimeoutMs: 5_000, batchChars: CONTENT_SCAN_BATCH_CHARS })
  // The same limit, with batches big enough to hold the heavy page and small files together.
  const strictWide = new ContentScanPool({ threads: 1, timeLimitMs: 100, memoryMb: 256, idleTimeoutMs: 5_000, batchChars: 8 * 1024 * 1024 })
  const twoThreads = new ContentScanPool({ threads: 2, timeLimitMs: 10_000, memoryMb: 256, idleTimeoutMs: 5_000, batchChars: CONTENT_SCAN_BATCH_CHARS })
  after(async () => {
    await pool.close()
    await strict.close()
    await strictWide.close()
    await twoThreads.close()
  })

  test('a small site check runs on the calling thread, a large one in a thread, each finding what the other would', async () => {
    const checked: SiteCheckInput[] = []
    const counting = new (class extends ContentScanPool {
      override checkSite(input: SiteCheckInput) {
        checked.push(input)
        return super.checkSite(input)
      }
    })({ threads: 1, timeLimitMs: 10_000, memoryMb: 256, idleTimeoutMs: 5_000, batchChars: CONTENT_SCAN_BATCH_CHARS })
    try {
      const small = [
        sitePage('index.html', '<a href="gone.html">gone</a> <a href="about.html">about</a>'),
        sitePage('about.html', '<a href="index.html">home</a>'),
      ]
      const large = [sitePage('index.html', Array.from({ length: 600 }, (_, i) => `<a href="p${i}.html">${i}</a>`).join(' '))]
      const smallWarnings = await siteWarnings(small, { scans: counting })
      assert.equal(checked.length, 0, 'the small check did not go to a thread')
      assert.deepEqual(smallWarnings, await siteWarnings(small))
      assert.deepEqual(
        smallWarnings.map((w) => w.code),
        ['BROKEN_LINK'],
      )
      const largeWarnings = await siteWarnings(large, { scans: counting })
      assert.equal(checked.length, 1, 'the large check went to a thread')
      assert.deepEqual(largeWarnings, await siteWarnings(large))
      assert.ok(largeWarnings.some((w) => w.code === 'BROKEN_LINK'))
    } finally {
      await counting.close()
    }
  })

  test("a page's forms are found in the thread with its rules, and no other file has any", async () => {
    const scans = [
      page('book.html', '<form method="post" action="/_forms/booking"><input name="guests" type="number" required><button>Book</button></form>'),
      page('plain.html', '<form method="get" action="/search"><input name="q"></form>'),
      { path: 'site.css', contentType: 'text/css', text: 'form { margin: 0 }' },
    ]
    const found = await pool.scan(scans, 50)
    assert.deepEqual(
      found.map((outcome) => outcome.forms),
      [[{ name: 'booking', fields: [{ name: 'guests', type: 'number', required: true }] }], [], []],
    )
  })

  test('a thread finds exactly what the same rules find on the calling thread, file by file', async () => {
    const scans = [
      {
        path: 'index.html',
        contentType: 'text/html',
        text: '<!doctype html><title>x</title><iframe src="a.html"></iframe><script src="https://cdn.example/x.js"></script>',
      },
      { path: 'site.css', contentType: 'text/css', text: '@import url("https://fonts.example/a.css"); body { color: red }' },
      { path: 'app.js', contentType: 'text/javascript', text: 'navigator.serviceWorker.register("/sw.js")' },
      { path: 'ok.html', contentType: 'text/html', text: '<!doctype html><title>fine</title><p>fine</p>' },
    ]
    const found = await pool.scan(scans, 50, true)
    assert.deepEqual(
      found,
      scans.map((scan) => scanText(scan, 50, true)),
    )
    assert.deepEqual(
      found.map(({ found: list }) => list.map((v) => v.code)),
      [['IFRAME', 'EXTERNAL_URL'], ['EXTERNAL_URL'], ['SERVICE_WORKER'], []],
    )
    assert.deepEqual(
      found[0]!.facts!.refs.map((ref) => [ref.url, ref.kind]),
      [['https://cdn.example/x.js', 'script']],
      "and each file's facts for the site check, from the same parse",
    )
  })

  test('a file whose checks run past the time limit is stopped and named as CONTENT_TOO_COMPLEX; the pool goes on', async () => {
    const [{ found }] = (await strict.scan([HEAVY], 50)) as [ScanOutcome]
    assert.equal(found.length, 1)
    assert.equal(found[0]!.code, 'CONTENT_TOO_COMPLEX')
    assert.equal(found[0]!.path, 'heavy.html')
    assert.match(found[0]!.message, /heavy\.html/)
    // The same pool still answers a small file afterwards (its stopped thread was replaced).
    const [small] = await strict.scan([{ path: 'small.html', contentType: 'text/html', text: '<iframe></iframe>' }], 50)
    assert.deepEqual(
      small!.found.map((v) => v.code),
      ['IFRAME'],
    )
  })

  test('the texts of a bundle checked in batches on two threads: the findings of each file, in bundle order', async () => {
    const scans = Array.from({ length: 25 }, (_, i) =>
      i % 5 === 0
        ? { path: `css/s${i}.css`, contentType: 'text/css', text: `@import url("https://fonts.example/${i}.css"); p { margin: ${i}px }` }
        : page(`p${i}.html`, `${'<p>text</p>'.repeat(i * 200)}${i % 3 === 0 ? '<iframe src="x.html"></iframe>' : ''}`),
    )
    assert.ok(batchesOf(scans, 2, CONTENT_SCAN_BATCH_CHARS).length >= 2)
    const found = await twoThreads.scan(scans, 50)
    assert.deepEqual(
      found,
      scans.map((scan) => scanText(scan, 50)),
    )
    assert.deepEqual(
      found[3]!.found.map((v) => v.code),
      ['IFRAME'],
    )
    assert.deepEqual(
      found[5]!.found.map((v) => v.code),
      ['EXTERNAL_URL'],
    )
    assert.deepEqual(found[1]!.found, [])
  })

  test('a batch stopped by its time limit has its files checked one by one: only the file over the limit fails', async () => {
    const scans = [page('a.html', '<iframe src="x.html"></iframe>'), HEAVY, page('b.html', '<p>fine</p>')]
    assert.equal(batchesOf(scans, 1, 8 * 1024 * 1024).length, 1)
    const found = await strictWide.scan(scans, 50)
    assert.deepEqual(
      found.map(({ found: list }) => list.map((v) => v.code)),
      [['IFRAME'], ['CONTENT_TOO_COMPLEX'], []],
    )
    assert.equal(found[1]!.found[0]!.path, 'heavy.html')
  })
})

describe('batches of texts', () => {
  const text = (chars: number, i: number) => ({ path: `f${i}.html`, contentType: 'text/html', text: 'x'.repeat(chars) })

  test('every text is in exactly one batch, each batch in ascending order and none empty', () => {
    const scans = [900, 10, 400, 400, 30, 1000, 5].map(text)
    for (const threads of [1, 2, 3, 8]) {
      const batches = batchesOf(scans, threads, 1000)
      assert.deepEqual(
        batches.flat().sort((a, b) => a - b),
        scans.map((_, i) => i),
      )
      for (const batch of batches) {
        assert.ok(batch.length > 0)
        assert.deepEqual(
          batch,
          [...batch].sort((a, b) => a - b),
        )
      }
    }
  })

  test('one batch per thread for an ordinary bundle, more (a multiple of the threads) for a big one, never more than texts', () => {
    const small = Array.from({ length: 21 }, (_, i) => text(24 * 1024, i))
    assert.equal(batchesOf(small, 2, 512 * 1024).length, 2)
    const big = Array.from({ length: 40 }, (_, i) => text(100 * 1024, i))
    assert.equal(batchesOf(big, 2, 512 * 1024).length, 8)
    assert.equal(batchesOf([text(10, 0)], 4, 512 * 1024).length, 1)
    assert.deepEqual(batchesOf([], 2, 512 * 1024), [])
  })

  test('the threads get about the same amount of text', () => {
    const sizes = [5000, 3000, 3000, 2000, 2000, 2000, 1000, 1000, 500, 500, 200, 100]
    const scans = sizes.map(text)
    const batches = batchesOf(scans, 2, 1_000_000)
    const chars = batches.map((batch) => batch.reduce((sum, i) => sum + sizes[i]!, 0))
    // Largest first into the lightest batch ends within the smallest files of each other here.
    assert.ok(Math.abs(chars[0]! - chars[1]!) <= 200, `batches of ${chars.join(' and ')} characters`)
  })
})
