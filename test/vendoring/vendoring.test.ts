/**
 * Bringing external files into a bundle, with the fetching given: which references are found in
 * pages and stylesheets, where the copies go, how every reference is rewritten, integrity
 * attributes, and every bound (files, bytes, time, depth) failing with what to drop.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { describe, test } from 'node:test'
import { BUNDLE_LIMITS, VENDOR_LIMITS } from '../../src/core/limits.ts'
import { integrityMatches } from '../../src/vendoring/integrity.ts'
import { vendorPath } from '../../src/vendoring/vendor-paths.ts'
import { htmlReferences, rewriteHtml } from '../../src/vendoring/vendor-references.ts'
import { type FetchedFile, type VendorFetch, vendorFiles, type VendorSource } from '../../src/vendoring/vendoring.ts'

const sri = (bytes: string, algorithm = 'sha384') => `${algorithm}-${createHash(algorithm).update(bytes).digest('base64')}`

/** A fetcher answering from a table: a string body (type guessed from the URL) or a full answer; anything else fails as a 404 would. */
function tableFetch(table: Record<string, string | (Partial<FetchedFile> & { body?: string })>): VendorFetch & { asked: string[] } {
  const asked: string[] = []
  const fetcher = (url: string): Promise<FetchedFile> => {
    asked.push(url)
    const entry = table[url]
    if (entry === undefined) return Promise.reject(new Error(`${url} answered HTTP 404.`))
    if (typeof entry === 'string') return Promise.resolve({ bytes: Buffer.from(entry), contentType: null, finalUrl: url })
    return Promise.resolve({ bytes: entry.bytes ?? Buffer.from(entry.body ?? ''), contentType: entry.contentType ?? null, finalUrl: entry.finalUrl ?? url })
  }
  return Object.assign(fetcher, { asked })
}

const options = (fetch: VendorFetch, extra: Partial<Parameters<typeof vendorFiles>[1]> = {}) => ({
  fetch,
  bundleLimits: BUNDLE_LIMITS,
  bundle: { files: 2, bytes: 1000, paths: new Set(['index.html', 'css/site.css']) },
  ...extra,
})

describe('finding external references', () => {
  test('scripts, stylesheets, preloads, icons, images and srcsets, inline CSS; not relative or data: URLs', () => {
    const html = `<!doctype html><html><head>
      <script src="https://cdn.example/a.js"></script><script src="js/local.js"></script>
      <link rel="stylesheet" href="//fonts.example/css2?family=Inter">
      <link rel="preload" as="font" href="https://fonts.example/i.woff2" crossorigin>
      <link rel="icon" href="https://cdn.example/favicon.ico"><link rel="alternate" href="https://elsewhere.example/feed">
      <style>body { background: url(https://img.example/bg.png) } .x { background: url(data:image/png;base64,AA==) }</style>
      </head><body style="background-image: url('https://img.example/body.png')">
      <img src="https://img.example/a.png" srcset="https://img.example/a-2x.png 2x, local.png 3x">
      <picture><source srcset="https://img.example/b.webp 480w"></picture><a href="https://elsewhere.example/">x</a>
      <template><img src="https://img.example/in-template.png"></template></body></html>`
    assert.deepEqual(
      htmlReferences(html).map((r) => `${r.kind} ${r.url}`),
      [
        'script https://cdn.example/a.js',
        'style https://fonts.example/css2?family=Inter',
        'font https://fonts.example/i.woff2',
        'image https://cdn.example/favicon.ico',
        'asset https://img.example/bg.png',
        'asset https://img.example/body.png',
        'image https://img.example/a.png',
        'image https://img.example/a-2x.png',
        'image https://img.example/b.webp',
        'image https://img.example/in-template.png',
      ],
    )
  })

  test('a rewrite changes only the references, and drops crossorigin except on a font preload', () => {
    const html = `<p title='a &amp; b'>x</p><script crossorigin="anonymous" src=https://cdn.example/a.js defer></script><link rel=preload as=font href=https://f.example/x.woff2 crossorigin><img srcset="https://i.example/a.png 1x, b.png 2x">`
    const out = rewriteHtml(
      html,
      (url) => `_vendor/${new URL(url).host}${new URL(url).pathname}`,
      () => true,
    )
    assert.equal(
      out,
      `<p title='a &amp; b'>x</p><script src="_vendor/cdn.example/a.js" defer></script><link rel=preload as=font href="_vendor/f.example/x.woff2" crossorigin><img srcset="_vendor/i.example/a.png 1x, b.png 2x">`,
    )
  })
})

describe('where copies go', () => {
  test('host (with its port), the URL path, an extension for the type, a hash of the query', () => {
    assert.equal(
      vendorPath(new URL('https://cdn.jsdelivr.net/npm/highlight.js@11.9.0/lib/x.min.js'), 'text/javascript'),
      '_vendor/cdn.jsdelivr.net/npm/highlight.js@11.9.0/lib/x.min.js',
    )
    assert.match(
      vendorPath(new URL('https://fonts.googleapis.com/css2?family=Inter:wght@400'), 'text/css'),
      /^_vendor\/fonts\.googleapis\.com\/css2-[0-9a-f]{10}\.css$/,
    )
    assert.equal(vendorPath(new URL('http://127.0.0.1:8123/'), 'text/javascript'), '_vendor/127.0.0.1_8123/index.js')
    assert.equal(vendorPath(new URL('https://x.example/a%20b/c%3Fd.png'), 'image/png'), '_vendor/x.example/a_b/c_d.png')
  })
})

describe('integrity', () => {
  test('the strongest algorithm decides; unknown tokens are skipped', () => {
    const bytes = Buffer.from('console.log(1)')
    assert.equal(integrityMatches(bytes, sri('console.log(1)')), true)
    assert.equal(integrityMatches(bytes, `${sri('console.log(1)', 'sha256')} ${sri('other')}`), false)
    assert.equal(integrityMatches(bytes, 'md5-abc'), null)
  })
})

describe('vendorFiles', () => {
  test('brings in a script, a stylesheet and the fonts it names, and rewrites each reference relative to its file', async () => {
    const css = '@font-face { font-family: X; src: url(../fonts/x.woff2) format(\'woff2\'), url("https://other.example/x.woff") }'
    const fetch = tableFetch({
      'https://cdn.example/lib/a.js': 'window.a = 1',
      'https://cdn.example/css/x.css': { body: css, contentType: 'text/css' },
      'https://cdn.example/fonts/x.woff2': { body: 'WOFF2', contentType: 'font/woff2' },
      'https://other.example/x.woff': 'WOFF',
    })
    const sources: VendorSource[] = [
      {
        path: 'blog/post.html',
        kind: 'html',
        text: `<script src="https://cdn.example/lib/a.js" integrity="${sri('window.a = 1')}" crossorigin="anonymous"></script><link rel="stylesheet" href="https://cdn.example/css/x.css" integrity="${sri(css)}">`,
      },
    ]
    const outcome = await vendorFiles(sources, options(fetch))
    assert.deepEqual(outcome.failures, [])
    assert.equal(
      outcome.rewritten.get('blog/post.html'),
      `<script src="../_vendor/cdn.example/lib/a.js" integrity="${sri('window.a = 1')}"></script><link rel="stylesheet" href="../_vendor/cdn.example/css/x.css">`,
    )
    const added = new Map(outcome.added.map((f) => [f.path, f]))
    assert.deepEqual([...added.keys()].sort(), [
      '_vendor/cdn.example/css/x.css',
      '_vendor/cdn.example/fonts/x.woff2',
      '_vendor/cdn.example/lib/a.js',
      '_vendor/other.example/x.woff',
    ])
    assert.equal(
      added.get('_vendor/cdn.example/css/x.css')!.bytes.toString(),
      '@font-face { font-family: X; src: url("../fonts/x.woff2") format(\'woff2\'), url("../../other.example/x.woff") }',
    )
    assert.equal(added.get('_vendor/cdn.example/lib/a.js')!.contentType, 'text/javascript')
    assert.deepEqual(
      outcome.vendored.find((f) => f.path.endsWith('a.js')),
      { url: 'https://cdn.example/lib/a.js', path: '_vendor/cdn.example/lib/a.js', bytes: 12 },
    )
  })

  test('a failed fetch, an integrity mismatch and an HTML answer each fail, naming the URL and the file; nothing is rewritten', async () => {
    const fetch = tableFetch({ 'https://cdn.example/a.js': 'changed', 'https://cdn.example/b.js': { body: '<html>', contentType: 'text/html; charset=utf-8' } })
    const outcome = await vendorFiles(
      [
        {
          path: 'index.html',
          kind: 'html',
          text: `<script src="https://cdn.example/a.js" integrity="${sri('original')}"></script><script src="https://cdn.example/b.js"></script><img src="https://cdn.example/gone.png">`,
        },
      ],
      options(fetch),
    )
    assert.deepEqual(outcome.failures.map((f) => [f.code, f.url, f.path]).sort(), [
      ['VENDOR_FETCH_FAILED', 'https://cdn.example/gone.png', 'index.html'],
      ['VENDOR_INTEGRITY_MISMATCH', 'https://cdn.example/a.js', 'index.html'],
      ['VENDOR_WRONG_TYPE', 'https://cdn.example/b.js', 'index.html'],
    ])
    assert.match(outcome.failures.find((f) => f.code === 'VENDOR_FETCH_FAILED')!.message, /404\. Drop the reference from index\.html/)
    assert.equal(outcome.rewritten.size, 0)
    assert.equal(outcome.added.length, 0)
  })

  test('more files than the bundle has room for: the ones that do not fit are named, and none is fetched', async () => {
    const images = Array.from({ length: 5 }, (_, i) => `https://img.example/${i}.png`)
    const fetch = tableFetch(Object.fromEntries(images.map((url) => [url, 'PNG'])))
    const outcome = await vendorFiles(
      [{ path: 'index.html', kind: 'html', text: images.map((u) => `<img src="${u}">`).join('') }],
      options(fetch, { bundleLimits: { ...BUNDLE_LIMITS, maxFiles: 5 } }),
    )
    assert.deepEqual(
      outcome.failures.map((f) => f.url),
      images.slice(3),
    )
    assert.match(outcome.failures[0]!.message, /holds 2 files and may hold 5, so only 3 external files fit/)
    assert.deepEqual(fetch.asked, [])
  })

  test('over the bundle bytes: fetching stops, naming the file and the largest ones before it', async () => {
    const fetch = tableFetch({ 'https://img.example/big.png': 'x'.repeat(600), 'https://img.example/more.png': 'y'.repeat(600) })
    const outcome = await vendorFiles(
      [{ path: 'index.html', kind: 'html', text: '<img src="https://img.example/big.png"><img src="https://img.example/more.png">' }],
      options(fetch, { bundleLimits: { ...BUNDLE_LIMITS, maxBundleBytes: 2000 }, limits: { ...VENDOR_LIMITS, concurrency: 1 } }),
    )
    assert.equal(outcome.failures.length, 1)
    assert.equal(outcome.failures[0]!.code, 'VENDOR_BUNDLE_TOO_LARGE')
    assert.match(
      outcome.failures[0]!.message,
      /more\.png \(600 bytes\) the bundle would hold 2200 bytes, over its limit of 2000 bytes.*big\.png \(600 bytes, from index\.html\)/,
    )
  })

  test('the time for all fetches runs out: what was not fetched is named', async () => {
    let clock = 0
    const fetch: VendorFetch = (url) => {
      clock += 40_000
      return Promise.resolve({ bytes: Buffer.from('x'), contentType: 'image/png', finalUrl: url })
    }
    const outcome = await vendorFiles(
      [{ path: 'index.html', kind: 'html', text: '<img src="https://a.example/1.png"><img src="https://a.example/2.png"><img src="https://a.example/3.png">' }],
      options(fetch, { limits: { ...VENDOR_LIMITS, concurrency: 1 }, now: () => clock }),
    )
    assert.deepEqual(
      outcome.failures.map((f) => [f.code, f.url]),
      [['VENDOR_TIME_LIMIT', 'https://a.example/3.png']],
    )
  })

  test('stylesheets importing stylesheets are followed only so deep', async () => {
    const table: Record<string, { body: string; contentType: string }> = {}
    for (let i = 0; i < 8; i++) table[`https://s.example/${i}.css`] = { body: `@import "${i + 1}.css";`, contentType: 'text/css' }
    const outcome = await vendorFiles(
      [{ path: 'index.html', kind: 'html', text: '<link rel="stylesheet" href="https://s.example/0.css">' }],
      options(tableFetch(table)),
    )
    assert.deepEqual(
      outcome.failures.map((f) => f.code),
      ['VENDOR_TOO_DEEP'],
    )
  })
})
