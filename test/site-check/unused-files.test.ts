/**
 * UNUSED_FILE: a file nothing on the site links, loads, imports or names, except the files a site
 * has for others than its pages (the list in src/site-check/unused-files.ts and the guide).
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { page, siteWarnings, triples } from '../helpers/site-check.ts'

const text = (path: string, content = 'x') => ({ path, content })

describe('UNUSED_FILE', () => {
  test('a page, an image and a script nothing uses: one warning each, in bundle order', async () => {
    const files = [
      page('index.html', '<p>Home</p>'),
      page('old.html', '<a href="/">home</a>'),
      text('img/unused.svg', '<svg></svg>'),
      text('js/legacy.js', '1'),
    ]
    const warnings = await siteWarnings(files)
    assert.deepEqual(triples(warnings), [
      ['UNUSED_FILE', 'old.html', undefined],
      ['UNUSED_FILE', 'img/unused.svg', undefined],
      ['UNUSED_FILE', 'js/legacy.js', undefined],
    ])
    assert.equal(warnings[0]!.message, 'Nothing on the site links, loads or names old.html: link it from a page, or remove it from the bundle.')
  })

  test('the files a site has for browsers, crawlers, services and Plinth are never unused', async () => {
    const wellKnown = [
      '404.html',
      'thanks.html',
      'robots.txt',
      'sitemap.xml',
      'favicon.ico',
      'favicon-32x32.png',
      'apple-touch-icon.png',
      'android-chrome-192x192.png',
      'mstile-150x150.png',
      'safari-pinned-tab.svg',
      'site.webmanifest',
      'manifest.json',
      'browserconfig.xml',
      'humans.txt',
      'ads.txt',
      'app-ads.txt',
      '.well-known/security.txt',
      '.well-known/assetlinks.json',
      'google1234abcd.html',
      'BingSiteAuth.xml',
      'CNAME',
      '_templates/entry.html',
      'docs/index.html',
    ]
    const files = [
      page('index.html', '<a href="docs/">docs</a><script src="app.js"></script>'),
      text('app.js', '1'),
      text('app.js.map', '{}'),
      ...wellKnown.filter((path) => path !== 'docs/index.html').map((path) => (path.endsWith('.html') ? page(path, '<a href="/">home</a>') : text(path))),
      page('docs/index.html', '<a href="/">home</a>'),
      text('_redirects', '/home / 301'),
      text('_headers', '/*\n  X-Frame-Options: DENY'),
    ]
    assert.deepEqual(await siteWarnings(files), [])
  })

  test("a file a script or an attribute names by its path is used (a script's fetch, a lazy image's data-src)", async () => {
    const files = [
      page('index.html', '<img data-src="img/lazy.jpg" alt=""><script type="module" src="js/app.js"></script>'),
      text('js/app.js', "const menu = await fetch('/data/menu.json').then((r) => r.json())\nexport default menu"),
      text('data/menu.json', '[]'),
      text('img/lazy.jpg', 'x'),
      text('data/other.json', '[]'),
    ]
    assert.deepEqual(triples(await siteWarnings(files)), [['UNUSED_FILE', 'data/other.json', undefined]])
  })

  test('a file only a _redirects rule leads to is used', async () => {
    const files = [
      page('index.html', '<a href="/promo">promo</a>'),
      page('promo-2024.html', '<a href="/">home</a>'),
      text('_redirects', '/promo /promo-2024.html 302'),
    ]
    assert.deepEqual(await siteWarnings(files), [])
  })

  test('a page linking only to itself is still unused', async () => {
    const files = [page('index.html', '<p>home</p>'), page('lonely.html', '<a href="lonely.html#top">top</a>')]
    assert.deepEqual(triples(await siteWarnings(files)), [['UNUSED_FILE', 'lonely.html', undefined]])
  })
})
