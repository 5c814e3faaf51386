import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'
import { scanText } from '../../src/publishing/authoring-rules.ts'
import { ContentScanPool } from '../../src/publishing/content-scans.pool.ts'

describe('content rules in worker threads', () => {
  const pool = new ContentScanPool({ threads: 1, timeLimitMs: 10_000, memoryMb: 256, idleTimeoutMs: 5_000 })
  // A limit the checks of a 1.8 MB page (about 400 ms here) cannot fit in, and a small file easily does.
  const strict = new ContentScanPool({ threads: 1, timeLimitMs: 100, memoryMb: 256, idleTimeoutMs: 5_000 })
  after(async () => {
    await pool.close()
    await strict.close()
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
    const found = await pool.scan(scans, 50)
    assert.deepEqual(
      found,
      scans.map((scan) => scanText(scan, 50)),
    )
    assert.deepEqual(
      found.map((list) => list.map((v) => v.code)),
      [['IFRAME', 'EXTERNAL_URL'], ['EXTERNAL_URL'], ['SERVICE_WORKER'], []],
    )
  })

  test('a file whose checks run past the time limit is stopped and named as CONTENT_TOO_COMPLEX; the pool goes on', async () => {
    const heavy = `<!doctype html><title>heavy</title>${'<div><p>a <b>b</b> <i>c</i></p></div>'.repeat(50_000)}`
    const [found] = await strict.scan([{ path: 'heavy.html', contentType: 'text/html', text: heavy }], 50)
    assert.equal(found!.length, 1)
    assert.equal(found![0]!.code, 'CONTENT_TOO_COMPLEX')
    assert.equal(found![0]!.path, 'heavy.html')
    assert.match(found![0]!.message, /heavy\.html/)
    // The same pool still answers a small file afterwards (its stopped thread was replaced).
    const [small] = await strict.scan([{ path: 'small.html', contentType: 'text/html', text: '<iframe></iframe>' }], 50)
    assert.deepEqual(
      small!.map((v) => v.code),
      ['IFRAME'],
    )
  })
})
