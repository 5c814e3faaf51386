import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { PublishViolation } from '../../src/core/errors.ts'
import { BUNDLE_LIMITS, type BundleLimits } from '../../src/core/limits.ts'
import { SITE_POLICY } from '../../src/core/site-policy.ts'
import { type BundleFileInput, checkBundle } from '../../src/publishing/authoring-rules.ts'
import { contentTypeFor } from '../../src/publishing/content-rules.ts'

const INDEX = { path: 'index.html', content: '<!doctype html><title>Home</title><p>Hello</p>' }

/** Checks index.html plus the given files; returns the violations. */
function check(...files: BundleFileInput[]): PublishViolation[] {
  const hasIndex = files.some((f) => f.path === 'index.html')
  return checkBundle(hasIndex ? files : [INDEX, ...files]).violations
}

/** Checks a page whose body is `html` (as index.html). */
function checkPage(html: string): PublishViolation[] {
  return check({ path: 'index.html', content: `<!doctype html><html><head><title>t</title></head><body>${html}</body></html>` })
}

const codes = (violations: PublishViolation[]) => violations.map((v) => v.code)

function assertOne(violations: PublishViolation[], code: string, path?: string, detail?: string): PublishViolation {
  assert.deepEqual(codes(violations), [code], JSON.stringify(violations, null, 2))
  const v = violations[0]!
  if (path !== undefined) assert.equal(v.path, path)
  if (detail !== undefined) assert.equal(v.detail, detail)
  assert.ok(v.message.length > 40, 'the message explains the problem')
  return v
}

const b64 = (text: string | Buffer) => Buffer.from(text).toString('base64')

describe('contentTypeFor', () => {
  test('infers the content type from the extension', () => {
    assert.equal(contentTypeFor('index.html'), 'text/html')
    assert.equal(contentTypeFor('about.htm'), 'text/html')
    assert.equal(contentTypeFor('css/site.css'), 'text/css')
    assert.equal(contentTypeFor('js/app.js'), 'text/javascript')
    assert.equal(contentTypeFor('js/app.mjs'), 'text/javascript')
    assert.equal(contentTypeFor('img/logo.svg'), 'image/svg+xml')
    assert.equal(contentTypeFor('img/photo.PNG'), 'image/png')
  })

  test('falls back to application/octet-stream for unknown extensions', () => {
    assert.equal(contentTypeFor('LICENSE'), 'application/octet-stream')
    assert.equal(contentTypeFor('data.unknownext'), 'application/octet-stream')
  })

  test('an override wins and is reduced to a lowercase bare type', () => {
    assert.equal(contentTypeFor('page.txt', 'Text/HTML; charset=UTF-8'), 'text/html')
    assert.equal(contentTypeFor('index.html', 'text/plain'), 'text/plain')
  })
})

describe('a valid bundle', () => {
  const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff, 0x10])
  const files: BundleFileInput[] = [
    {
      path: 'index.html',
      content:
        '<!doctype html><link rel="stylesheet" href="css/site.css"><script type="module" src="js/app.js"></script><img src="img/logo.png" alt="logo"><p>Héllo ✓ 😀</p>',
    },
    { path: 'css/site.css', content: '@import "base.css";\nbody { background: url(../img/logo.png) }\n', contentEncoding: 'utf8' },
    { path: 'css/base.css', content: 'body{margin:0}\t\r\n\f' },
    { path: 'js/app.js', content: "import { x } from './lib.js'\nconsole.log(x, 'https://example.com')\n" },
    { path: 'js/lib.js', content: 'export const x = 1\n' },
    { path: 'img/logo.png', content: b64(png), contentEncoding: 'base64' },
    { path: 'data/readme', content: 'plain', contentType: 'text/plain; charset=utf-8' },
  ]

  test('has no violations and its decoded bytes equal the input', () => {
    const result = checkBundle(files)
    assert.deepEqual(result.violations, [])
    assert.deepEqual(
      result.files.map((f) => f.path),
      files.map((f) => f.path),
    )
    assert.deepEqual(result.files[0]!.bytes, Buffer.from(files[0]!.content, 'utf8'))
    assert.deepEqual(result.files[5]!.bytes, png)
    assert.equal(
      result.totalBytes,
      result.files.reduce((n, f) => n + f.bytes.length, 0),
    )
    assert.deepEqual(
      result.files.map((f) => f.contentType),
      ['text/html', 'text/css', 'text/css', 'text/javascript', 'text/javascript', 'image/png', 'text/plain'],
    )
  })

  test('the default limits are 40 files, 2 MiB per file, 8 MiB per bundle, 15 pages, 100 violations', () => {
    assert.deepEqual(
      { ...BUNDLE_LIMITS },
      {
        maxFiles: 40,
        maxFileBytes: 2 * 1024 * 1024,
        maxBundleBytes: 8 * 1024 * 1024,
        maxHtmlPages: 15,
        maxViolations: 100,
      },
    )
  })

  test('relative and root-relative URLs are not external', () => {
    assert.deepEqual(
      checkPage('<script src="app.js"></script><script src="./js/x.js"></script><link rel=stylesheet href="/css/site.css"><base href="/sub/">'),
      [],
    )
    assert.deepEqual(check({ path: 'a.css', content: '@import "base.css"; @import url(./print.css) print; @import url(/x.css);' }), [])
    assert.deepEqual(check({ path: 'a.js', content: "import a from './a.js'; import b from '/b.js'; import('../c.js'); export * from 'bare-specifier'" }), [])
  })

  test('external images, links, media, fonts and icons are not flagged', () => {
    assert.deepEqual(
      checkPage(
        '<img src="https://images.example.com/a.png"><a href="https://example.com">x</a><video src="https://v.example.com/a.mp4"></video>' +
          '<link rel="icon" href="https://example.com/favicon.ico"><link rel="preload" as="image" href="https://example.com/a.png">' +
          '<link rel="preconnect" href="https://fonts.gstatic.com"><form action="https://example.com/submit"></form>',
      ),
      [],
    )
    assert.deepEqual(
      check({
        path: 'a.css',
        content: '@font-face { font-family: X; src: url(https://fonts.example.com/x.woff2) } body { background: url("https://example.com/bg.png") }',
      }),
      [],
    )
  })

  test('a URL inside an HTML comment, a <textarea> or a plain string is not a script', () => {
    assert.deepEqual(checkPage('<!-- <script src="https://x.com/a.js"></script> --><textarea><script src="https://x.com/b.js"></script></textarea>'), [])
    assert.deepEqual(check({ path: 'a.js', content: "const url = 'https://cdn.example.com/lib.js'; fetch(url)" }), [])
  })
})

describe('MISSING_INDEX', () => {
  test('a bundle without index.html is missing its index', () => {
    const v = checkBundle([{ path: 'home.html', content: '<p>hi</p>' }]).violations
    assertOne(v, 'MISSING_INDEX')
    assert.equal(v[0]!.path, undefined)
  })

  test('the index must be exactly "index.html" at the root (paths are case-sensitive)', () => {
    assert.deepEqual(codes(checkBundle([{ path: 'Index.html', content: 'x' }]).violations), ['MISSING_INDEX'])
    assert.deepEqual(codes(checkBundle([{ path: 'site/index.html', content: 'x' }]).violations), ['MISSING_INDEX'])
    assert.deepEqual(codes(checkBundle([]).violations), ['MISSING_INDEX'])
  })
})

describe('size and count limits', () => {
  test('more than 40 files is too many files, and the other rules are still checked', () => {
    const files = [INDEX, ...Array.from({ length: 40 }, (_, i) => ({ path: `f${i}.txt`, content: 'x' }))]
    files.push({ path: 'bad.html', content: '<iframe src="x.html"></iframe>' })
    const v = checkBundle(files).violations
    assert.deepEqual(codes(v), ['TOO_MANY_FILES', 'IFRAME'])
    assert.match(v[0]!.message, /42 files; at most 40/)
  })

  test('exactly 40 files is allowed', () => {
    const files = [INDEX, ...Array.from({ length: 39 }, (_, i) => ({ path: `f${i}.txt`, content: 'x' }))]
    assert.deepEqual(checkBundle(files).violations, [])
  })

  test('a file larger than 2 MiB once decoded is too large', () => {
    const max = BUNDLE_LIMITS.maxFileBytes
    const v = check(
      { path: 'ok.bin', content: b64(Buffer.alloc(max, 1)), contentEncoding: 'base64' },
      { path: 'big.bin', content: b64(Buffer.alloc(max + 1, 1)), contentEncoding: 'base64' },
    )
    assertOne(v, 'FILE_TOO_LARGE', 'big.bin', `${max + 1} bytes`)
  })

  test('the size limit counts UTF-8 bytes, not characters', () => {
    const limits: BundleLimits = { ...BUNDLE_LIMITS, maxFileBytes: 10 }
    assert.deepEqual(codes(checkBundle([{ path: 'index.html', content: 'ééééé' }], limits).violations), [])
    assert.deepEqual(codes(checkBundle([{ path: 'index.html', content: 'éééééé' }], limits).violations), ['FILE_TOO_LARGE'])
  })

  test('a bundle over 8 MiB in total is too large', () => {
    const chunk = Buffer.alloc(2 * 1024 * 1024, 7)
    const files: BundleFileInput[] = [INDEX, ...[1, 2, 3, 4].map((i) => ({ path: `big${i}.bin`, content: b64(chunk), contentEncoding: 'base64' as const }))]
    const result = checkBundle(files)
    assertOne(result.violations, 'BUNDLE_TOO_LARGE')
    assert.equal(result.totalBytes, 4 * chunk.length + INDEX.content.length)
  })

  test('more than 15 HTML pages is too many pages, counted by content type', () => {
    const pages = Array.from({ length: 14 }, (_, i) => ({ path: `p${i}.html`, content: '<p>x</p>' }))
    assert.deepEqual(check(...pages), []) // 15 with index.html
    assert.deepEqual(codes(check(...pages, { path: 'extra.htm', content: '<p>x</p>' })), ['TOO_MANY_PAGES'])
    assert.deepEqual(codes(check(...pages, { path: 'extra.txt', content: '<p>x</p>', contentType: 'text/html' })), ['TOO_MANY_PAGES'])
    assert.deepEqual(check(...pages, { path: 'extra.html', content: '<p>x</p>', contentType: 'text/plain' }), [])
  })
})

describe('INVALID_PATH', () => {
  const bad: Array<[string, string]> = [
    ['../etc/passwd', 'a ".." segment (path traversal)'],
    ['a/../../b', 'a ".." segment in the middle'],
    ['a/./b', 'a "." segment'],
    ['./index.js', 'a leading "." segment'],
    ['/abs', 'an absolute path'],
    ['a\\b', 'a backslash'],
    ['..\\..\\x', 'backslash traversal'],
    ['a//b', 'an empty segment'],
    ['dir/', 'a trailing slash'],
    ['', 'an empty path'],
    ['a\u0000b.html', 'a NUL character'],
    ['a\nb', 'a newline'],
    ['a\u007fb', 'DEL'],
    ['page.html?x=1', 'a question mark'],
    ['page.html#top', 'a hash'],
    ['100%.html', 'a percent sign'],
    ['x'.repeat(256), 'a segment longer than 255 bytes'],
    [`d/${'é'.repeat(128)}`, 'a segment longer than 255 bytes in UTF-8'],
    [Array.from({ length: 11 }, () => 'x'.repeat(99)).join('/'), 'a path longer than 1024 characters'],
    ['bad\ud800.txt', 'a lone surrogate'],
    ['invoice\u202egnp.html', 'a right-to-left override (shows as invoicelmth.png)'],
    ['a\u2066b\u2069.html', 'a bidirectional isolate'],
    ['a\u200fb.html', 'a right-to-left mark'],
  ]
  for (const [path, what] of bad) {
    test(`a path with ${what} is invalid: ${JSON.stringify(path.slice(0, 40))}`, () => {
      const v = check({ path, content: 'x' })
      assertOne(v, 'INVALID_PATH', path)
    })
  }

  test('ordinary but unusual paths are valid', () => {
    for (const path of ['Über uns/Fichier é.txt', '.well-known/security.txt', 'a..b/c.txt', 'x'.repeat(255), 'a-b_c~d(1)!.txt', 'README']) {
      assert.deepEqual(check({ path, content: 'x' }), [], path)
    }
  })

  test('the message says why the path is invalid and what a good path looks like', () => {
    const v = assertOne(check({ path: '/css/site.css', content: 'x' }), 'INVALID_PATH')
    assert.match(v.message, /starts with "\/"/)
    assert.match(v.message, /css\/site\.css/)
  })
})

describe('DUPLICATE_PATH', () => {
  test('the same path twice is a duplicate, reported once per path', () => {
    const v = check(
      { path: 'a.txt', content: '1' },
      { path: 'a.txt', content: '2' },
      { path: 'a.txt', content: '3' },
      { path: 'b.txt', content: '1' },
      { path: 'b.txt', content: '2' },
    )
    assert.deepEqual(
      v.map((x) => [x.code, x.path]),
      [
        ['DUPLICATE_PATH', 'a.txt'],
        ['DUPLICATE_PATH', 'b.txt'],
      ],
    )
    assert.match(v[0]!.message, /3 times/)
  })

  test('paths differing only in case are not duplicates', () => {
    assert.deepEqual(check({ path: 'A.txt', content: '1' }, { path: 'a.txt', content: '2' }), [])
  })

  test('a duplicated index.html is reported', () => {
    assert.deepEqual(codes(checkBundle([INDEX, INDEX]).violations), ['DUPLICATE_PATH'])
  })
})

describe('INVALID_ENCODING', () => {
  test('a NUL character in utf8 content is not text', () => {
    const v = assertOne(check({ path: 'a.txt', content: 'ab\u0000c' }), 'INVALID_ENCODING', 'a.txt', 'U+0000 at character 2')
    assert.match(v.message, /base64/)
  })

  test('other C0 controls are rejected but tab, newline, carriage return and form feed are allowed', () => {
    assert.deepEqual(check({ path: 'a.txt', content: 'a\tb\nc\r\nd\fe' }), [])
    assertOne(check({ path: 'a.txt', content: 'a\u000bb' }), 'INVALID_ENCODING', 'a.txt')
    assertOne(check({ path: 'a.txt', content: 'a\u001bb' }), 'INVALID_ENCODING', 'a.txt')
  })

  test('a lone surrogate in utf8 content is not valid Unicode', () => {
    assertOne(check({ path: 'a.txt', content: 'x\ud800y' }), 'INVALID_ENCODING', 'a.txt', 'U+D800 at character 1')
    assertOne(check({ path: 'b.txt', content: 'x\udc00' }), 'INVALID_ENCODING', 'b.txt')
    assert.deepEqual(check({ path: 'c.txt', content: 'emoji 😀 pair' }), [])
  })

  test('base64 with characters outside the alphabet is invalid', () => {
    assertOne(check({ path: 'a.bin', content: '###', contentEncoding: 'base64' }), 'INVALID_ENCODING', 'a.bin')
    assertOne(check({ path: 'b.bin', content: 'QUJD!', contentEncoding: 'base64' }), 'INVALID_ENCODING', 'b.bin')
  })

  test('base64 whose length is not a multiple of 4 is invalid', () => {
    const v = assertOne(check({ path: 'a.bin', content: 'abc', contentEncoding: 'base64' }), 'INVALID_ENCODING', 'a.bin')
    assert.match(v.message, /multiple of 4/)
    assertOne(check({ path: 'b.bin', content: 'QUJDR', contentEncoding: 'base64' }), 'INVALID_ENCODING', 'b.bin')
  })

  test('base64 padding must be at the end', () => {
    assertOne(check({ path: 'a.bin', content: 'QQ==QQ==', contentEncoding: 'base64' }), 'INVALID_ENCODING', 'a.bin')
    assertOne(check({ path: 'b.bin', content: 'Q===', contentEncoding: 'base64' }), 'INVALID_ENCODING', 'b.bin')
  })

  test('base64 may be wrapped over lines and use the URL-safe alphabet', () => {
    const bytes = Buffer.from([0xfb, 0xff, 0xbf, 0x00, 0x01])
    const result = checkBundle([
      INDEX,
      { path: 'a.bin', content: 'QUJD\nREVG\r\n', contentEncoding: 'base64' },
      { path: 'b.bin', content: `${bytes.toString('base64url')}=`, contentEncoding: 'base64' },
      { path: 'c.bin', content: '', contentEncoding: 'base64' },
    ])
    assert.deepEqual(result.violations, [])
    assert.equal(result.files[1]!.bytes.toString(), 'ABCDEF')
    assert.deepEqual(result.files[2]!.bytes, bytes)
    assert.equal(result.files[3]!.bytes.length, 0)
  })

  test('binary bytes sent as base64 are fine, whatever they contain', () => {
    assert.deepEqual(check({ path: 'a.bin', content: b64(Buffer.from([0, 1, 2, 0xd8, 0x00, 0xff])), contentEncoding: 'base64' }), [])
  })
})

describe('EXTERNAL_URL: scripts in HTML', () => {
  const flagged: Array<[string, string, string]> = [
    ['an https script src', '<script src="https://cdn.example.com/x.js"></script>', 'https://cdn.example.com/x.js'],
    ['a protocol-relative script src (uppercase, unquoted)', '<SCRIPT SRC=//x.com/a.js></SCRIPT>', '//x.com/a.js'],
    ['an entity-encoded script src', '<script src="&#104;ttps://x.com/a.js"></script>', 'https://x.com/a.js'],
    ['a script src with a leading space', '<script src=" https://x.com/a.js"></script>', 'https://x.com/a.js'],
    ['a script src with a tab inside the scheme', '<script src="ht&#9;tps://x.com/a.js"></script>', 'ht tps://x.com/a.js'],
    ['a backslash protocol-relative script src', '<script src="\\\\x.com\\a.js"></script>', '\\\\x.com\\a.js'],
    ['a slash-backslash script src', '<script src="/\\x.com/a.js"></script>', '/\\x.com/a.js'],
    ['a data: script src', '<script src="data:text/javascript,alert(1)"></script>', 'data:text/javascript,alert(1)'],
    ['a javascript: script src', '<script src="javascript:alert(1)"></script>', 'javascript:alert(1)'],
    ['a module script src', '<script type="module" src="https://esm.sh/react"></script>', 'https://esm.sh/react'],
    ['an SVG script xlink:href', '<svg><script xlink:href="https://x.com/a.js"></script></svg>', 'https://x.com/a.js'],
    ['an SVG script href', '<svg><script href="//x.com/a.js"></script></svg>', '//x.com/a.js'],
    ['a script inside a template', '<template><script src="https://x.com/a.js"></script></template>', 'https://x.com/a.js'],
    ['a script in a table', '<table><script src="https://x.com/a.js"></script><tr><td>x</table>', 'https://x.com/a.js'],
    [
      'a script right after a noscript closes inside an attribute',
      '<noscript><p title="</noscript><script src=https://x.com/a.js></script>">',
      'https://x.com/a.js',
    ],
    ['a modulepreload link', '<link rel="modulepreload" href="https://x.com/m.js">', 'https://x.com/m.js'],
    ['a script preload link', '<link rel="preload" as="Script" href="https://x.com/a.js">', 'https://x.com/a.js'],
  ]
  for (const [what, html, detail] of flagged) {
    test(`${what} is external`, () => {
      assertOne(checkPage(html), 'EXTERNAL_URL', 'index.html', detail)
    })
  }

  test("a base href on another origin refuses nothing: the policy's base-uri makes browsers ignore it (BLOCKED_BY_POLICY)", () => {
    const result = checkBundle([
      { path: 'index.html', content: '<!doctype html><title>t</title><base href="https://cdn.example.com/"><script src="app.js"></script>' },
    ])
    assert.deepEqual(result.violations, [])
    assert.deepEqual(
      result.warnings.map((w) => [w.code, w.path, w.detail]),
      [['BLOCKED_BY_POLICY', 'index.html', 'https://cdn.example.com/']],
    )
    assert.match(result.warnings[0]!.message, /base-uri 'self'/)
  })

  test('the message names the file and the URL and says how to fix it', () => {
    const v = assertOne(checkPage('<script src="https://cdn.example.com/x.js"></script>'), 'EXTERNAL_URL')
    assert.match(v.message, /^index\.html loads the script https:\/\/cdn\.example\.com\/x\.js/)
    assert.match(v.message, /copy the file into the bundle/)
  })

  test('a long URL is truncated in the detail', () => {
    const v = assertOne(checkPage(`<script src="https://x.com/${'a'.repeat(500)}.js"></script>`), 'EXTERNAL_URL')
    assert.ok(v.detail!.length <= 200)
  })

  test('every external script on a page is reported, in document order', () => {
    const v = checkPage('<script src="https://a.com/1.js"></script><p>x</p><script src="https://b.com/2.js"></script>')
    assert.deepEqual(
      v.map((x) => x.detail),
      ['https://a.com/1.js', 'https://b.com/2.js'],
    )
  })

  test('an import map that maps to an external URL is external', () => {
    assertOne(
      checkPage('<script type="importmap">{"imports":{"vue":"https://unpkg.com/vue.js","./a.js":"./b.js"}}</script>'),
      'EXTERNAL_URL',
      'index.html',
      'https://unpkg.com/vue.js',
    )
    assert.deepEqual(checkPage('<script type="importmap">{"imports":{"vue":"./vendor/vue.js"}}</script>'), [])
  })

  test('an external script in an SVG file is external', () => {
    const svg =
      '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><script xlink:href="https://x.com/a.js"/><circle r="1"/></svg>'
    assertOne(check({ path: 'img/logo.svg', content: svg }), 'EXTERNAL_URL', 'img/logo.svg', 'https://x.com/a.js')
  })

  test('an HTML page sent as base64 is checked too, including UTF-16 with a byte-order mark', () => {
    assertOne(check({ path: 'a.html', content: b64('<script src="https://x.com/a.js"></script>'), contentEncoding: 'base64' }), 'EXTERNAL_URL', 'a.html')
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('<script src="https://x.com/b.js"></script>', 'utf16le')])
    assertOne(check({ path: 'b.html', content: utf16.toString('base64'), contentEncoding: 'base64' }), 'EXTERNAL_URL', 'b.html', 'https://x.com/b.js')
  })

  test('rules follow the content type: HTML served as text/plain is not scanned, and a .txt served as HTML is', () => {
    assert.deepEqual(check({ path: 'a.html', content: '<script src="https://x.com/a.js"></script>', contentType: 'text/plain' }), [])
    assertOne(check({ path: 'a.txt', content: '<script src="https://x.com/a.js"></script>', contentType: 'text/html; charset=utf-8' }), 'EXTERNAL_URL', 'a.txt')
  })
})

describe('EXTERNAL_URL: stylesheets', () => {
  test('a stylesheet link with a mixed-case rel token list is external', () => {
    assertOne(checkPage('<link rel="STYLESHEET preload" href=https://x.com/a.css>'), 'EXTERNAL_URL', 'index.html', 'https://x.com/a.css')
    assertOne(checkPage('<link rel="alternate stylesheet" href="//x.com/b.css">'), 'EXTERNAL_URL', 'index.html', '//x.com/b.css')
  })

  test('a style preload link is external', () => {
    assertOne(checkPage('<link rel=preload as=style href="https://fonts.googleapis.com/css2?family=Inter">'), 'EXTERNAL_URL')
  })

  test('a stylesheet link inside <noscript> is external', () => {
    assertOne(checkPage('<noscript><link rel="stylesheet" href="https://x.com/a.css"></noscript>'), 'EXTERNAL_URL', 'index.html', 'https://x.com/a.css')
  })

  for (const css of [
    '@import url("https://x.com/a.css");',
    "@import 'https://x.com/a.css';",
    '@import url(https://x.com/a.css) screen;',
    '@IMPORT "https://x.com/a.css" layer(base);',
    '@\\69mport "\\68ttps://x.com/a.css";',
  ]) {
    test(`${css} in a .css file is external`, () => {
      const v = assertOne(check({ path: 'css/site.css', content: `body{color:red}\n${css}` }), 'EXTERNAL_URL', 'css/site.css', 'https://x.com/a.css')
      assert.match(v.message, /@import/)
    })
    test(`${css} in a <style> element is external`, () => {
      assertOne(checkPage(`<style>${css} p{color:red}</style>`), 'EXTERNAL_URL', 'index.html', 'https://x.com/a.css')
    })
  }

  test('an @import in CSS that does not parse cleanly is still found', () => {
    assertOne(check({ path: 'a.css', content: 'a { color: ; } } @media {{ @import "//x.com/a.css" ' }), 'EXTERNAL_URL', 'a.css', '//x.com/a.css')
  })

  test('every @import in a stylesheet is reported', () => {
    const v = check({ path: 'a.css', content: '@import "https://a.com/1.css"; @import "local.css"; @import url(//b.com/2.css);' })
    assert.deepEqual(
      v.map((x) => x.detail),
      ['https://a.com/1.css', '//b.com/2.css'],
    )
  })
})

describe('EXTERNAL_URL: JavaScript modules', () => {
  const flagged: Array<[string, string, string]> = [
    ['a static import', 'import x from "https://esm.sh/x"\nx()', 'https://esm.sh/x'],
    ['a side-effect import', "import '//cdn.example.com/polyfill.js'", '//cdn.example.com/polyfill.js'],
    ['a re-export', "export { a } from 'https://x.com/a.js'", 'https://x.com/a.js'],
    ['an export-star', "export * from 'https://x.com/a.js'", 'https://x.com/a.js'],
    ['a dynamic import', "const m = await import('https://x.com/a.js')", 'https://x.com/a.js'],
    ['a dynamic import with escapes', "import('\\x68ttps://x.com/a.js')", 'https://x.com/a.js'],
    ['a dynamic import of a concatenated URL', "import('https://x.com/' + name + '.js')", 'https://x.com/'],
    ['a dynamic import of a template literal', 'import(`https://x.com/${name}.js`)', 'https://x.com/'],
    ['importScripts', "importScripts('lib.js', 'https://x.com/a.js')", 'https://x.com/a.js'],
    ['an import in a file that is not a valid module', "import x from 'https://x.com/a.js'\nfunction ( {", 'https://x.com/a.js'],
  ]
  for (const [what, js, detail] of flagged) {
    test(`${what} of an external URL in a .js file is external`, () => {
      assertOne(check({ path: 'js/app.js', content: js }), 'EXTERNAL_URL', 'js/app.js', detail)
    })
  }

  test('an external import in an .mjs file is external', () => {
    assertOne(check({ path: 'app.mjs', content: 'import x from "https://esm.sh/x"' }), 'EXTERNAL_URL', 'app.mjs')
  })

  test('an external import in an inline module script is external', () => {
    const v = assertOne(checkPage('<script type="module">import x from "https://esm.sh/x"; x()</script>'), 'EXTERNAL_URL', 'index.html', 'https://esm.sh/x')
    assert.match(v.message, /inline <script type="module">/)
  })

  test('a dynamic import in a classic inline script is external', () => {
    assertOne(checkPage('<script>import("https://x.com/a.js").then(m => m.run())</script>'), 'EXTERNAL_URL', 'index.html', 'https://x.com/a.js')
  })

  test('imports inside JS comments are not flagged', () => {
    assert.deepEqual(check({ path: 'a.js', content: "// import x from 'https://esm.sh/x'\n/* import('https://x.com') */\nexport const a = 1" }), [])
  })

  test('an external import in a text/babel script (run by an in-page transpiler) is external', () => {
    assertOne(
      checkPage('<script type="text/babel" data-type="module">import React from "https://esm.sh/react"</script>'),
      'EXTERNAL_URL',
      'index.html',
      'https://esm.sh/react',
    )
  })

  test('hostile JavaScript (a million unbalanced regex-like openers) is still checked', () => {
    const v = check({ path: 'a.js', content: `navigator.serviceWorker.register(1)\n${'[/'.repeat(500_000)}\n${'(/'.repeat(500_000)}` })
    assert.deepEqual(codes(v), ['SERVICE_WORKER'])
  })

  test('a script data block is not executed and not checked', () => {
    assert.deepEqual(checkPage('<script type="text/plain">import x from "https://esm.sh/x"</script>'), [])
  })
})

describe('IFRAME', () => {
  for (const tag of ['iframe', 'object', 'embed', 'portal', 'fencedframe']) {
    test(`an <${tag}> element is not allowed`, () => {
      assertOne(checkPage(`<p>x</p><${tag} src="https://example.com/"></${tag}>`), 'IFRAME', 'index.html')
    })
  }

  test('an <object> or <embed> showing an SVG image is refused with the advice to show it with <img src>', () => {
    const sphinx = assertOne(
      checkPage('<object data="_images/graphviz-1.svg" type="image/svg+xml"><p class="warning">digraph</p></object>'),
      'IFRAME',
      'index.html',
      '<object data="_images/graphviz-1.svg">',
    )
    assert.match(sphinx.message, /show the image with <img src="_images\/graphviz-1\.svg" alt="\.\.\."> instead/)
    assert.doesNotMatch(sphinx.message, /<a href/)
    for (const html of [
      '<object data="diagram.SVG?v=2"></object>',
      '<embed src="diagram.svg" type="image/svg+xml">',
      '<object data="d" type="Image/SVG+XML; charset=utf-8"></object>',
    ]) {
      assert.match(assertOne(checkPage(html), 'IFRAME').message, /<img src="/, html)
    }
    for (const html of ['<object data="paper.pdf" type="application/pdf"></object>', '<object type="image/svg+xml"></object>', '<embed src="movie.swf">']) {
      const message = assertOne(checkPage(html), 'IFRAME').message
      assert.doesNotMatch(message, /<img/, html)
      assert.match(message, /link to it with <a href/, html)
    }
  })

  test('a frameset and its frames are not allowed', () => {
    assert.deepEqual(
      codes(check({ path: 'index.html', content: '<html><frameset cols="50%,50%"><frame src="a.html"><frame src="b.html"></frameset></html>' })),
      ['IFRAME', 'IFRAME', 'IFRAME'],
    )
  })

  test('an iframe inside a <template> is found', () => {
    assertOne(checkPage('<template><iframe></template>'), 'IFRAME', 'index.html', '<iframe>')
  })

  test('an iframe inside <noscript> is found', () => {
    assertOne(checkPage('<noscript><iframe src="https://www.googletagmanager.com/ns.html"></iframe></noscript>'), 'IFRAME', 'index.html')
  })

  test('an uppercase, attribute-heavy iframe is found', () => {
    assertOne(checkPage('<IFRAME SRC=//youtube.com/embed/x ALLOWFULLSCREEN></IFRAME>'), 'IFRAME', 'index.html', '<iframe src="//youtube.com/embed/x">')
  })

  test('an iframe inside an SVG file (foreignObject) is found', () => {
    const svg =
      '<svg xmlns="http://www.w3.org/2000/svg"><foreignObject width="10" height="10"><iframe xmlns="http://www.w3.org/1999/xhtml" src="x.html"/></foreignObject></svg>'
    assertOne(check({ path: 'a.svg', content: svg }), 'IFRAME', 'a.svg')
  })

  test('the word iframe in text, comments or scripts is not an iframe', () => {
    assert.deepEqual(checkPage('<p>Do not use &lt;iframe&gt;</p><!-- <iframe> --><script>const tag = "<iframe>"</script>'), [])
  })
})

describe('SERVICE_WORKER', () => {
  test('a registration in an inline script is not allowed', () => {
    const v = assertOne(
      checkPage("<script>if ('serviceWorker' in navigator) navigator.serviceWorker.register('/sw.js')</script>"),
      'SERVICE_WORKER',
      'index.html',
    )
    assert.match(v.detail!, /serviceWorker\.register\('\/sw\.js'\)/)
  })

  test('a registration in an onload attribute is not allowed', () => {
    const v = assertOne(checkPage('<img src="a.png" onload="navigator.serviceWorker.register(\'/sw.js\')">'), 'SERVICE_WORKER', 'index.html')
    assert.match(v.message, /onload attribute/)
  })

  test('a registration in a body onload attribute is not allowed, even on a second <body> tag', () => {
    assertOne(checkPage('<p>x</p><body onload="navigator.serviceWorker.register(\'/sw.js\')">'), 'SERVICE_WORKER', 'index.html')
  })

  test('a registration in a javascript: URL is not allowed', () => {
    assertOne(checkPage('<a href="javascript:navigator.serviceWorker.register(\'/sw.js\')">go</a>'), 'SERVICE_WORKER', 'index.html')
  })

  test('a registration in a .js file is not allowed', () => {
    assertOne(
      check({ path: 'js/app.js', content: "window.addEventListener('load', () => {\n  navigator.serviceWorker.register('/sw.js')\n})" }),
      'SERVICE_WORKER',
      'js/app.js',
    )
  })

  for (const js of [
    "navigator.serviceWorker?.register('/sw.js')",
    "navigator.serviceWorker['register']('/sw.js')",
    'navigator.serviceWorker\n  .register("/sw.js")',
    "navigator['serviceWorker'].register('/sw.js')",
    'const c = navigator["serviceWorker"]; c.register("/sw.js")',
    "const { serviceWorker } = navigator; serviceWorker.register('/sw.js')",
  ]) {
    test(`${JSON.stringify(js)} registers a service worker`, () => {
      assertOne(check({ path: 'a.js', content: js }), 'SERVICE_WORKER', 'a.js')
    })
  }

  test('an event handler on a formatting element the parser re-creates is reported once', () => {
    assertOne(checkPage('<p><b onclick="navigator.serviceWorker.register(1)">bold<p>still bold<div>and here</b>'), 'SERVICE_WORKER', 'index.html')
  })

  test('a <link rel="serviceworker"> is not allowed', () => {
    assertOne(checkPage('<link rel="ServiceWorker" href="/sw.js">'), 'SERVICE_WORKER', 'index.html')
  })

  test('feature detection and commented-out registrations are not flagged', () => {
    assert.deepEqual(
      check({
        path: 'a.js',
        content:
          "if ('serviceWorker' in navigator) {}\n// navigator.serviceWorker.register('/sw.js')\n/* serviceWorker.register */ const u = 'http://x' // serviceWorker.register\n",
      }),
      [],
    )
  })
})

describe('collecting violations', () => {
  test('a bundle with many problems returns all of them in one result', () => {
    const result = checkBundle(
      [
        {
          path: 'home.html',
          content: '<script src="https://x.com/a.js"></script><iframe></iframe><script>navigator.serviceWorker.register("/sw.js")</script>',
        },
        { path: '../escape.txt', content: 'x' },
        { path: 'dup.txt', content: 'a' },
        { path: 'dup.txt', content: 'b' },
        { path: 'nul.txt', content: 'a\u0000' },
        { path: 'bad.bin', content: '###', contentEncoding: 'base64' },
        { path: 'big.txt', content: 'x'.repeat(101) },
        { path: 'site.css', content: '@import "https://x.com/a.css";' },
        { path: 'p2.html', content: '<p>2</p>' },
      ],
      { maxFiles: 5, maxFileBytes: 100, maxBundleBytes: 200, maxHtmlPages: 1, maxViolations: 100 },
    )
    assert.deepEqual(
      result.violations.map((v) => [v.code, v.path]),
      [
        ['MISSING_INDEX', undefined],
        ['TOO_MANY_FILES', undefined],
        ['BUNDLE_TOO_LARGE', undefined],
        ['TOO_MANY_PAGES', undefined],
        ['FILE_TOO_LARGE', 'home.html'],
        ['EXTERNAL_URL', 'home.html'],
        ['IFRAME', 'home.html'],
        ['SERVICE_WORKER', 'home.html'],
        ['INVALID_PATH', '../escape.txt'],
        ['DUPLICATE_PATH', 'dup.txt'],
        ['INVALID_ENCODING', 'nul.txt'],
        ['INVALID_ENCODING', 'bad.bin'],
        ['FILE_TOO_LARGE', 'big.txt'],
        ['EXTERNAL_URL', 'site.css'],
      ],
    )
  })

  test('per file, path, duplicate, encoding and size problems come before content problems', () => {
    const v = checkBundle([INDEX, { path: 'a//b.html', content: `<iframe></iframe>${'x'.repeat(50)}\u0001` }], {
      ...BUNDLE_LIMITS,
      maxFileBytes: 50,
    }).violations
    assert.deepEqual(codes(v), ['INVALID_PATH', 'INVALID_ENCODING', 'FILE_TOO_LARGE', 'IFRAME'])
  })

  test('10,000 files give TOO_MANY_FILES and a capped list that still contains each code', () => {
    const files: BundleFileInput[] = []
    for (let i = 0; i < 10_000; i++) files.push({ path: `dir//file${i}.txt`, content: 'x' })
    files.push({ path: 'dup.txt', content: '1' }, { path: 'dup.txt', content: '2' })
    files.push({ path: 'bad.bin', content: 'abc', contentEncoding: 'base64' })
    files.push({ path: 'frame.html', content: '<iframe></iframe>' })
    const { violations } = checkBundle(files)
    assert.equal(violations.length, BUNDLE_LIMITS.maxViolations)
    const seen = new Set(codes(violations))
    for (const code of ['MISSING_INDEX', 'TOO_MANY_FILES', 'INVALID_PATH', 'DUPLICATE_PATH', 'INVALID_ENCODING', 'IFRAME']) {
      assert.ok(seen.has(code), `${code} is listed`)
    }
    // Each code's first occurrence is kept; the rest of the room goes to the earliest violations.
    assert.equal(violations.filter((v) => v.code === 'DUPLICATE_PATH').length, 1)
    assert.deepEqual(
      violations.slice(0, 3).map((v) => v.path),
      [undefined, undefined, 'dir//file0.txt'],
    )
    assert.deepEqual(codes(violations.slice(-3)), ['DUPLICATE_PATH', 'INVALID_ENCODING', 'IFRAME'])
  })

  test('a cap smaller than the number of distinct codes still lists every code once', () => {
    const v = checkBundle(
      [
        { path: 'a//b', content: '\u0000' },
        { path: 'x.html', content: '<iframe></iframe><iframe></iframe>' },
      ],
      { ...BUNDLE_LIMITS, maxViolations: 2 },
    ).violations
    assert.deepEqual(codes(v), ['MISSING_INDEX', 'INVALID_PATH', 'INVALID_ENCODING', 'IFRAME'])
  })

  test('the result is deterministic', () => {
    const files: BundleFileInput[] = [
      { path: 'index.html', content: '<script src="https://a.com/x.js"></script><iframe></iframe><style>@import "//b.com/y.css";</style>' },
      { path: 'a.js', content: "import 'https://c.com/z.js'; navigator.serviceWorker.register('/sw.js')" },
    ]
    assert.deepEqual(checkBundle(files), checkBundle(files))
  })
})

describe('a maximal bundle', () => {
  test('an 8 MiB bundle with 15 dense HTML pages passes every rule', () => {
    const row =
      '<div class="card"><h2 title="x">Title</h2><p>Lorem <a href="p1.html">ipsum</a> <img src="img/a.png" alt=""> dolor <b>sit</b> amet.</p><button onclick="go(1)">Go</button></div>\n'
    const page = (i: number) =>
      `<!doctype html><html><head><link rel="stylesheet" href="site.css"><script type="module" src="app.js"></script></head><body>${row.repeat(Math.floor(480_000 / row.length))}<script>go(${i})</script></body></html>`
    const files: BundleFileInput[] = Array.from({ length: 15 }, (_, i) => ({ path: i === 0 ? 'index.html' : `p${i}.html`, content: page(i) }))
    files.push({ path: 'app.js', content: "import { a } from './lib.js'\n".concat('export function go(n) { return n / 2 } // comment\n'.repeat(8_000)) })
    files.push({ path: 'site.css', content: '.a { color: red; background: url(a.png) }\n'.repeat(8_000) })
    const total = files.reduce((n, f) => n + f.content.length, 0)
    files.push({ path: 'img/a.png', content: b64(Buffer.alloc(8 * 1024 * 1024 - total - 1024, 1)), contentEncoding: 'base64' })

    const result = checkBundle(files)
    assert.deepEqual(result.violations, [])
    assert.ok(result.totalBytes > 8 * 1024 * 1024 - 2048 && result.totalBytes <= 8 * 1024 * 1024)
  })
})

describe('warnings: what browsers will still block', () => {
  const page = (body: string) => ({ path: 'index.html', content: `<!doctype html><title>t</title>${body}` })
  const https = { httpsSites: true }

  test('plain-http images, media, fonts and icons are MIXED_CONTENT on an https site, and refuse nothing', () => {
    const result = checkBundle(
      [
        page(
          '<img src="http://img.example/a.png"><img srcset="https://x.example/1.png 1x, http://x.example/2.png 2x"><video poster="HTTP://v.example/p.jpg"></video><link rel="icon" href="http://x.example/f.ico"><a href="http://elsewhere.example/">a link is fine</a>',
        ),
        {
          path: 'site.css',
          content: "@font-face { font-family: F; src: url('http://fonts.example/f.woff2') } body { background: url(http://img.example/bg.png) }",
        },
      ],
      undefined,
      https,
    )
    assert.deepEqual(result.violations, [])
    assert.deepEqual(
      result.warnings.map((w) => [w.code, w.path, w.detail]),
      [
        ['MIXED_CONTENT', 'index.html', 'http://img.example/a.png'],
        ['MIXED_CONTENT', 'index.html', 'http://x.example/2.png'],
        ['MIXED_CONTENT', 'index.html', 'HTTP://v.example/p.jpg'],
        ['MIXED_CONTENT', 'index.html', 'http://x.example/f.ico'],
        ['MIXED_CONTENT', 'site.css', 'http://fonts.example/f.woff2'],
        ['MIXED_CONTENT', 'site.css', 'http://img.example/bg.png'],
      ],
    )
    assert.match(result.warnings[0]!.message, /index\.html loads http:\/\/img\.example\/a\.png over plain http/)
  })

  test('a form sent to another origin is BLOCKED_BY_POLICY on any site, never MIXED_CONTENT; forms sent to the site are not', () => {
    const result = checkBundle(
      [
        page(
          '<form method="post" action="https://forms.example/f/1"></form><form action="http://plain.example/post"><button formaction="//other.example/x">Go</button></form>' +
            '<form method="post" action="/_forms/booking"></form><form action="contact.html"><input type="submit" formaction="/search"></form><form action="javascript:void 0"></form>',
        ),
      ],
      undefined,
      https,
    )
    assert.deepEqual(result.violations, [])
    assert.deepEqual(
      result.warnings.map((w) => [w.code, w.detail]),
      [
        ['BLOCKED_BY_POLICY', 'https://forms.example/f/1'],
        ['BLOCKED_BY_POLICY', 'http://plain.example/post'],
        ['BLOCKED_BY_POLICY', '//other.example/x'],
      ],
    )
    assert.match(result.warnings[0]!.message, /index\.html sends a form to https:\/\/forms\.example\/f\/1 .*form-action 'self'\).*\/_forms\/\{name\}/)
    // An http instance warns of it too: the policy stops it whatever the scheme.
    assert.deepEqual(
      checkBundle([page('<form action="https://forms.example/f/1"></form>')]).warnings.map((w) => w.code),
      ['BLOCKED_BY_POLICY'],
    )
  })

  test('however many warnings a file has, its violations are all reported', () => {
    const images = Array.from({ length: 150 }, (_, i) => `<img src="http://img.example/${i}.png">`).join('')
    const frames = Array.from({ length: 3 }, (_, i) => `<iframe src="/f${i}.html"></iframe>`).join('')
    for (const options of [undefined, https]) {
      const result = checkBundle([page(images + frames)], undefined, options)
      assert.deepEqual(
        result.violations.map((v) => v.code),
        ['IFRAME', 'IFRAME', 'IFRAME'],
        `https sites: ${options?.httpsSites === true}`,
      )
    }
  })

  test('on an http site plain-http resources are no warning: the page is not https', () => {
    assert.deepEqual(checkBundle([page('<img src="http://img.example/a.png">')]).warnings, [])
  })

  test('eval and new Function are BLOCKED_BY_POLICY, wherever the script is; comments and look-alikes are not', () => {
    const result = checkBundle([
      page('<script>const f = new Function("a", "return a")</script><button onclick="eval(code)">x</button>'),
      { path: 'app.js', content: '// eval(old)\nmath.eval("1+1"); evaluate(x); const y = eval ("2")' },
    ])
    assert.deepEqual(result.violations, [])
    assert.deepEqual(
      result.warnings.map((w) => [w.code, w.path, w.detail]),
      [
        ['BLOCKED_BY_POLICY', 'index.html', 'new Function()'],
        ['BLOCKED_BY_POLICY', 'index.html', 'eval()'],
        ['BLOCKED_BY_POLICY', 'app.js', 'eval ()'],
      ],
    )
  })

  test('every spelling of compiling a string into code is BLOCKED_BY_POLICY, each named in the detail', () => {
    const spellings: Array<[string, string]> = [
      ['window.eval("1")', 'window.eval()'],
      ['globalThis.eval(code)', 'globalThis.eval()'],
      ["self['eval'](code)", "self['eval']()"],
      ['(0, eval)(code)', '(0, eval)()'],
      // Vue's full build compiles templates so.
      ['const render = Function("Vue", code)(runtime)', 'Function()'],
      ['return new Function(code)', 'new Function()'],
      // Alpine.js reaches the async function constructor so.
      ['let AsyncFunction = Object.getPrototypeOf(async function () {}).constructor', 'getPrototypeOf(async …).constructor'],
      ['const make = Object.getPrototypeOf(function* () {}).constructor', 'getPrototypeOf(function* …).constructor'],
      ['new AsyncFunction("scope", body)', 'new AsyncFunction()'],
      ['setTimeout("tick()", 100)', 'setTimeout() given a string'],
      ['window.setInterval(`poll(${id})`, 1000)', 'window.setInterval() given a string'],
    ]
    for (const [code, detail] of spellings) {
      const result = checkBundle([page('<p>x</p>'), { path: 'app.js', content: code }])
      assert.deepEqual(result.violations, [], code)
      assert.deepEqual(
        result.warnings.map((w) => [w.code, w.detail]),
        [['BLOCKED_BY_POLICY', detail]],
        code,
      )
    }
    const inPage = checkBundle([page('<button onclick="setTimeout(\'go()\', 10)">go</button><a href="javascript:window.eval(x)">x</a>')])
    assert.deepEqual(
      inPage.warnings.map((w) => w.detail),
      ['setTimeout() given a string', 'window.eval()'],
    )
  })

  test('ordinary code that merely looks like compiling strings is no warning', () => {
    const code = [
      'setTimeout(() => tick(), 100); window.setInterval(poll, 5)',
      'if (isFunction(f) && typeof f === "function" && f instanceof Function) f()',
      'math.eval("1 + 1"); evaluate(x); parser.Function("x"); timers.setTimeout("later")',
      // The global object in code that also runs outside browsers: a fallback browsers never reach.
      'var root = freeGlobal || freeSelf || Function("return this")()',
      '// new Function(old)\n/* setTimeout("x") */',
    ].join('\n')
    assert.deepEqual(checkBundle([page('<p>x</p>'), { path: 'app.js', content: code }]).warnings, [])
  })

  test("BLOCKED_BY_POLICY names the policy's script sources and the builds that need no eval", () => {
    const [warning] = checkBundle([page('<p>x</p>'), { path: 'vue.global.js', content: 'Function(code)()' }]).warnings
    assert.match(warning!.message, /^vue\.global\.js compiles a string into code with Function\(\)/)
    assert.ok(warning!.message.includes(`(script-src ${SITE_POLICY['script-src']!.join(' ')})`), warning!.message)
    assert.match(warning!.message, /@alpinejs\/csp/)
    assert.match(warning!.message, /Vue's runtime-only build/)
    assert.match(warning!.message, /pass a function, not a string, to setTimeout/)
  })

  test("a web app manifest from another site is BLOCKED_BY_POLICY, naming the policy's directive", () => {
    const result = checkBundle([page('<link rel="manifest" href="https://cdn.example/app.webmanifest"><link rel="manifest" href="app.webmanifest">')])
    assert.deepEqual(
      result.warnings.map((w) => w.code),
      ['BLOCKED_BY_POLICY'],
    )
    assert.match(result.warnings[0]!.message, /default-src 'self'/)
  })

  test('warnings come with violations but never stand in for them', () => {
    const result = checkBundle([page('<script src="https://cdn.example/x.js"></script><script>eval(1)</script>')])
    assert.deepEqual(codes(result.violations), ['EXTERNAL_URL'])
    assert.deepEqual(codes(result.warnings), ['BLOCKED_BY_POLICY'])
  })
})

describe('messages name files as they were given', () => {
  test('a message that starts with a file path keeps the path exactly, in every case; other subjects start a sentence', () => {
    const files: BundleFileInput[] = [
      INDEX,
      { path: 'css/style.css', content: '@import "https://x.com/a.css"; body { background: url(http://img.example/bg.png) }' },
      { path: 'Css/Theme.CSS', content: '@import "https://x.com/b.css";' },
      {
        path: 'js/app.js',
        content: 'import x from "https://esm.sh/x"\nimportScripts("https://x.com/w.js")\nnavigator.serviceWorker.register("/sw.js")\neval("1")',
      },
      { path: 'lib/Widget.mjs', content: 'import y from "https://esm.sh/y"' },
      {
        path: 'sub/page.html',
        content:
          '<!doctype html><title>t</title><base href="https://x.com/"><script src="https://x.com/a.js"></script><iframe></iframe>' +
          '<style>@import "https://x.com/c.css";</style><script type="module">import z from "https://esm.sh/z"</script>' +
          '<img src="a.png" onload="import(\'https://x.com/d.js\')"><a href="javascript:import(\'https://x.com/e.js\')">e</a>',
      },
    ]
    const result = checkBundle(files, undefined, { httpsSites: true })
    const messages = [...result.violations, ...result.warnings].filter((v) => v.path !== undefined)
    const startingWithPath = messages.filter((v) => v.message.toLowerCase().startsWith(v.path!.toLowerCase()))
    assert.ok(
      startingWithPath.length >= 10,
      JSON.stringify(
        messages.map((v) => v.message.slice(0, 60)),
        null,
        2,
      ),
    )
    for (const v of startingWithPath) assert.ok(v.message.startsWith(`${v.path} `), `${v.code}: ${v.message.slice(0, 80)}`)
    for (const path of ['css/style.css', 'Css/Theme.CSS', 'js/app.js', 'lib/Widget.mjs']) {
      assert.ok(
        messages.some((v) => v.path === path && v.message.startsWith(`${path} `)),
        `a message about ${path} starts with it`,
      )
    }
    assert.ok(messages.some((v) => v.message.startsWith('css/style.css imports the stylesheet https://x.com/a.css')))
    assert.ok(messages.some((v) => v.message.startsWith('js/app.js imports the module https://esm.sh/x')))

    // Inline code is named by a phrase, which starts its sentence with a capital.
    for (const start of [
      'A <style> element in sub/page.html imports',
      'An inline <script type="module"> in sub/page.html imports',
      'The onload attribute of a <img> in sub/page.html imports',
      'A javascript: URL in the href attribute of a <a> in sub/page.html imports',
    ]) {
      assert.ok(
        messages.some((v) => v.message.startsWith(start)),
        `${start}…\n${messages.map((v) => v.message.slice(0, 80)).join('\n')}`,
      )
    }
  })
})
