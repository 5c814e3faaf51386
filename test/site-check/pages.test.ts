/**
 * What each page of a site needs for its visitors and reviewers: MISSING_TITLE, MISSING_LANG,
 * MISSING_VIEWPORT, MISSING_ALT and DUPLICATE_ID, judged on HTML documents only (not on SVG
 * files, templates or a <noscript>'s markup).
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { page, siteWarnings, triples } from '../helpers/site-check.ts'

describe("a page's own warnings", () => {
  test('a page without title, lang or viewport: one warning each, naming the fix', async () => {
    const files = [{ path: 'index.html', content: '<!doctype html><html><head><meta charset="utf-8"></head><body><p>Hi</p></body></html>' }]
    const warnings = await siteWarnings(files)
    assert.deepEqual(triples(warnings), [
      ['MISSING_TITLE', 'index.html', undefined],
      ['MISSING_LANG', 'index.html', undefined],
      ['MISSING_VIEWPORT', 'index.html', undefined],
    ])
    assert.match(warnings[0]!.message, /add one to <head>/)
    assert.match(warnings[1]!.message, /<html lang="en">/)
    assert.match(warnings[2]!.message, /<meta name="viewport" content="width=device-width, initial-scale=1">/)
  })

  test('an empty title or lang counts as none; lang added by a second <html> tag and xml:lang count', async () => {
    const empty = [{ path: 'index.html', content: '<!doctype html><html lang=" "><meta name="viewport" content="width=device-width"><title>  </title>' }]
    assert.deepEqual(
      (await siteWarnings(empty)).map((w) => w.code),
      ['MISSING_TITLE', 'MISSING_LANG'],
    )
    const late = [{ path: 'index.html', content: '<!doctype html><meta name="viewport" content="width=device-width"><title>t</title><html lang="fr">' }]
    assert.deepEqual(await siteWarnings(late), [])
    const xml = [{ path: 'index.html', content: '<!doctype html><html xml:lang="de"><meta name=VIEWPORT content="width=device-width"><title>t</title>' }]
    assert.deepEqual(await siteWarnings(xml), [])
  })

  test("an SVG's <title> is no page title; SVG files and templates are not pages", async () => {
    const files = [
      {
        path: 'index.html',
        content:
          '<!doctype html><html lang="en"><meta name="viewport" content="width=device-width"><svg><title>icon</title></svg><img src="logo.svg" alt="Logo">',
      },
      { path: 'logo.svg', content: '<svg xmlns="http://www.w3.org/2000/svg"><circle r="4"/></svg>' },
      { path: '_templates/entry.html', content: '<article>{{ entry.title }}</article>' },
    ]
    assert.deepEqual(triples(await siteWarnings(files)), [['MISSING_TITLE', 'index.html', undefined]])
  })

  test('an image without alt, at its line; alt="" (decorative) is fine', async () => {
    const files = [
      page('index.html', '<img src="a.png" alt="">\n<img src="b.png">\n<picture><source srcset="c.webp"><img src="c.png"></picture>\n<img srcset="d.png 1x">'),
    ]
    for (const name of ['a.png', 'b.png', 'c.png', 'c.webp', 'd.png']) files.push({ path: name, content: 'eA==', contentEncoding: 'base64' } as never)
    const warnings = await siteWarnings(files)
    assert.deepEqual(triples(warnings), [
      ['MISSING_ALT', 'index.html', 2],
      ['MISSING_ALT', 'index.html', 3],
      ['MISSING_ALT', 'index.html', 4],
    ])
    assert.match(warnings[0]!.message, /^index\.html shows "b\.png" without alt text: add alt="what it shows" \(alt="" for a decorative image\)\.$/)
  })

  test('an id given twice: once per id, at its second use, naming the first', async () => {
    const files = [
      page(
        'index.html',
        '<main id="main">\n<p id="main">again</p>\n<p id="main">and again</p>\n<a name="main"></a><p id="x"></p><template><p id="x"></p></template>\n<svg><g id="x"></g></svg>',
      ),
    ]
    const warnings = await siteWarnings(files)
    assert.deepEqual(triples(warnings), [
      ['DUPLICATE_ID', 'index.html', 2],
      ['DUPLICATE_ID', 'index.html', 5],
    ])
    assert.match(warnings[0]!.message, /^index\.html has id="main" again \(first on line 1\)/)
  })

  test('markup a browser runs without JavaScript (<noscript>) counts for its links, not for ids or alt', async () => {
    const files = [page('index.html', '<p id="a">a</p><noscript><p id="a">a</p><img src="fallback.png"></noscript>')]
    assert.deepEqual(triples(await siteWarnings(files)), [['BROKEN_LINK', 'index.html', 1]])
  })
})
