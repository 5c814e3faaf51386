/**
 * Rich text: markdown rendered with raw HTML escaped, then everything sanitized for article
 * content. Hostile markup (scripts, handlers, dangerous URLs, frames, forms, styles, SVG) never
 * survives; images are listed and can be pointed at the library copy.
 */

import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { RICH_TEXT_MAX_DEPTH, renderRichText, rewriteImageSources } from '../../src/content/rich-text.ts'
import { RICH_TEXT_MAX_CHARS } from '../../src/core/limits.ts'
import { PNG_BASE64 } from '../helpers/factories.ts'

const html = (value: string) => renderRichText({ html: value }).html
const PNG_DATA = `data:image/png;base64,${PNG_BASE64}`

describe('rich text', () => {
  test('a script tag and a javascript: link are stripped', () => {
    const out = html('<p>Hello<script>alert(1)</script> <a href="javascript:alert(1)">click</a></p>')
    assert.equal(out, '<p>Hello <a>click</a></p>')
  })

  test('javascript: disguised by case, entities, whitespace and control characters is stripped', () => {
    for (const href of [
      'JaVaScRiPt:alert(1)',
      ' javascript:alert(1)',
      'java&#x09;script:alert(1)',
      'java\nscript:alert(1)',
      '&#106;avascript:alert(1)',
      'vbscript:msgbox(1)',
      'data:text/html,<script>alert(1)</script>',
    ]) {
      const out = html(`<a href="${href}">x</a>`)
      assert.equal(out, '<a>x</a>', href)
    }
  })

  test('event handlers, styles, frames, forms, objects, SVG and MathML are removed', () => {
    const out = html(
      '<p onclick="x()" style="background:url(https://evil.test/x)">a</p><img src="/a.png" onerror="x()">' +
        '<style>@import url(https://evil.test/x.css)</style><iframe src="https://evil.test"></iframe>' +
        '<form action="https://evil.test"><input name="q"><button>go</button></form><object data="x"></object><embed src="x">' +
        '<svg><script>alert(1)</script><circle onload="x()"/></svg><math><mi>x</mi></math><link rel="stylesheet" href="https://evil.test/x.css"><meta http-equiv="refresh" content="0;url=https://evil.test">',
    )
    assert.doesNotMatch(out, /on\w+=|style|iframe|form|input|object|embed|svg|math|script|link|meta|evil/i)
    assert.match(out, /<p>a<\/p><img src="\/a.png">/)
  })

  test('external links get rel="noopener nofollow"; relative, fragment and mailto links do not', () => {
    const out = html(
      '<a href="https://example.com/" target="_blank" rel="opener">e</a><a href="//example.com/x">p</a><a href="/about">r</a><a href="#top">f</a><a href="mailto:a@example.com">m</a>',
    )
    assert.equal(
      out,
      '<a href="https://example.com/" rel="noopener nofollow">e</a><a href="//example.com/x" rel="noopener nofollow">p</a><a href="/about">r</a><a href="#top">f</a><a href="mailto:a@example.com">m</a>',
    )
  })

  test('article structure survives: headings, lists, emphasis, code, quotes, tables, figures', () => {
    const source =
      '<h2>T</h2><ul><li><em>a</em> <strong>b</strong></li></ul><pre><code class="language-js">x</code></pre><blockquote>q</blockquote><table><thead><tr><th scope="col">h</th></tr></thead><tbody><tr><td colspan="2">d</td></tr></tbody></table><figure><img src="https://example.com/a.png" alt="A" width="10" height="5"><figcaption>c</figcaption></figure>'
    assert.equal(html(source), source)
  })

  test('img sources: http(s), relative and inline raster data are kept; others drop the image', () => {
    const out = renderRichText({
      html: `<img src="https://example.com/a.png"><img src="b/c.jpg"><img src="${PNG_DATA}"><img src="data:image/svg+xml;base64,PHN2Zz4="><img src="javascript:alert(1)"><img src="ftp://example.com/x.png"><img>`,
    })
    assert.deepEqual(out.images, ['https://example.com/a.png', 'b/c.jpg', PNG_DATA])
    assert.equal(out.html, `<img src="https://example.com/a.png"><img src="b/c.jpg"><img src="${PNG_DATA}">`)
  })

  test('images are listed once, in order of first appearance', () => {
    const out = renderRichText({ html: '<img src="/b.png"><p><img src="/a.png"></p><img src="/b.png">' })
    assert.deepEqual(out.images, ['/b.png', '/a.png'])
  })

  test('markdown: rendered, raw HTML escaped, dangerous links not made links', () => {
    const out = renderRichText({
      markdown: '# Title\n\n<script>alert(1)</script>\n\n[bad](javascript:alert(1)) [good](https://example.com) ![pic](https://example.com/p.png "P")',
    })
    assert.match(out.html, /^<h1>Title<\/h1>/)
    assert.match(out.html, /<p>&lt;script&gt;alert\(1\)&lt;\/script&gt;<\/p>/)
    assert.doesNotMatch(out.html, /href="javascript/i)
    assert.match(out.html, /<a href="https:\/\/example.com" rel="noopener nofollow">good<\/a>/)
    assert.deepEqual(out.images, ['https://example.com/p.png'])
  })

  test('rewriteImageSources points images at the library, and cannot bring in a bad URL', () => {
    const { html: clean } = renderRichText({ html: '<p><img src="a.png" alt="A"><img src="b.png"><img src="a.png"></p>' })
    const seen: string[] = []
    const out = rewriteImageSources(clean, (src) => {
      seen.push(src)
      return src === 'a.png' ? '/_assets/abc.png' : 'javascript:alert(1)'
    })
    assert.equal(out, '<p><img src="/_assets/abc.png" alt="A"><img src="/_assets/abc.png"></p>')
    assert.deepEqual(seen, ['a.png', 'b.png', 'a.png'])
  })

  test('upload: image sources stand until rewritten; none survives a rewrite, and no link keeps one', () => {
    const source = '<p><img src="upload:upl_abc" alt="A"><a href="upload:upl_abc">file</a></p>'
    const rendered = renderRichText({ html: source })
    assert.equal(rendered.html, '<p><img src="upload:upl_abc" alt="A"><a>file</a></p>')
    assert.deepEqual(rendered.images, ['upload:upl_abc'])
    assert.deepEqual(renderRichText({ markdown: '![A](upload:upl_abc)' }).images, ['upload:upl_abc'])
    assert.equal(
      rewriteImageSources(rendered.html, (src) => src),
      '<p><a>file</a></p>',
      'an upload left as it was is removed',
    )
    assert.equal(
      rewriteImageSources(rendered.html, () => '/_assets/abc.png'),
      '<p><img src="/_assets/abc.png" alt="A"><a>file</a></p>',
    )
  })

  test('deeply nested input is refused clearly, without crashing', () => {
    const deep = `${'<div>'.repeat(20_000)}x${'</div>'.repeat(20_000)}`
    assert.throws(
      () => renderRichText({ html: deep }),
      (error: any) => error.code === 'VALIDATION_FAILED' && /levels deep/.test(error.message),
    )
    const unclosed = '<b>'.repeat(50_000)
    assert.throws(
      () => renderRichText({ html: unclosed }),
      (error: any) => error.code === 'VALIDATION_FAILED',
    )
    // Nesting that deep markdown cannot produce: markdown-it caps its own nesting.
    assert.equal(typeof renderRichText({ markdown: `${'>'.repeat(50_000)} x` }).html, 'string')
    const fine = `${'<div>'.repeat(RICH_TEXT_MAX_DEPTH - 1)}x${'</div>'.repeat(RICH_TEXT_MAX_DEPTH - 1)}`
    assert.match(html(fine), /x/)
  })

  test('an element with thousands of attributes is refused clearly', () => {
    const attrs = Array.from({ length: 5000 }, (_, i) => `a${i}="x"`).join(' ')
    assert.throws(
      () => renderRichText({ html: `<p ${attrs}>x</p>` }),
      (error: any) => error.code === 'VALIDATION_FAILED' && /5000 attributes/.test(error.message),
    )
  })

  test('oversized input is refused clearly', () => {
    assert.throws(
      () => renderRichText({ markdown: 'a'.repeat(RICH_TEXT_MAX_CHARS + 1) }),
      (error: any) => error.code === 'VALIDATION_FAILED' && /characters/.test(error.message),
    )
  })

  test('many calls stay correct (one purifier reused)', () => {
    for (let i = 0; i < 300; i++) {
      const out = renderRichText({ markdown: `*${i}* <img src=x onerror=alert(1)> [l](https://example.com/${i})` })
      assert.match(out.html, new RegExp(`<em>${i}</em>`))
      assert.doesNotMatch(out.html, /<img/)
    }
  })
})
