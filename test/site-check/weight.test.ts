/**
 * What a page costs its visitors: PAGE_TOO_HEAVY (over 1 MiB with everything it loads, stylesheets'
 * and scripts' own loads included, each file once) and IMAGE_OVERSIZED (an image far larger than
 * the size the page shows it at, when every <img> showing it says one), on real PNG headers.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, test } from 'node:test'
import { PAGE_WEIGHT_LIMIT } from '../../src/site-check/page-weight.ts'
import { page, pngOf, siteWarnings, triples } from '../helpers/site-check.ts'

const binary = (path: string, bytes: Buffer) => ({ path, content: bytes.toString('base64'), contentEncoding: 'base64' as const })
const KiB = 1024

describe('PAGE_TOO_HEAVY', () => {
  test('a page over the limit with the images, stylesheets, fonts and modules it loads, naming the heaviest', async () => {
    const files = [
      page(
        'index.html',
        '<link rel="stylesheet" href="site.css"><img src="hero.jpg" alt=""><script type="module" src="app.js"></script><a href="light.html">light</a>',
      ),
      page('light.html', '<link rel="stylesheet" href="site.css"><a href="index.html">home</a>'),
      { path: 'site.css', content: "@font-face { font-family: F; src: url('font.woff2') } body { font-family: F }" },
      { path: 'app.js', content: "import './lib.js'" },
      { path: 'lib.js', content: `export const data = '${'x'.repeat(300 * KiB)}'` },
      binary('hero.jpg', randomBytes(400 * KiB)),
      binary('font.woff2', randomBytes(350 * KiB)),
    ]
    const warnings = await siteWarnings(files)
    assert.deepEqual(triples(warnings), [['PAGE_TOO_HEAVY', 'index.html', undefined]])
    assert.match(
      warnings[0]!.message,
      /^index\.html weighs 1\.03 MiB with the files it loads \(heaviest: hero\.jpg 400 KiB, font\.woff2 350 KiB, lib\.js 300 KiB\): shrink them/,
    )
    assert.match(warnings[0]!.message, /stay under 1 MiB\.$/)
  })

  test('each file counts once; links, srcset alternatives and media played on demand do not count', async () => {
    const big = randomBytes(PAGE_WEIGHT_LIMIT / 2 + KiB)
    const files = [
      page(
        'index.html',
        '<img src="a.png" alt=""><img src="a.png" alt=""><img src="a.png" srcset="b.png 2x" alt=""><a href="b.png">big</a><video src="clip.mp4" poster="a.png"></video>',
      ),
      binary('a.png', big),
      binary('b.png', big),
      binary('clip.mp4', randomBytes(PAGE_WEIGHT_LIMIT)),
    ]
    assert.deepEqual(await siteWarnings(files), [])
  })
})

describe('IMAGE_OVERSIZED', () => {
  const photo = pngOf(2000, 1500, 40 * KiB)

  test('an image more than twice the largest width the page shows it at, at its first <img>', async () => {
    const files = [
      page(
        'index.html',
        '<p>Our team</p>\n<img src="team.png" width="300" height="225" alt="The team">\n<img src="team.png" width="400" alt="Again"><a href="gallery.html">more</a>',
      ),
      page('gallery.html', '<img src="team.png" width="1200" alt="The team, large"><a href="index.html">home</a>'),
      binary('team.png', photo),
    ]
    const warnings = await siteWarnings(files)
    assert.deepEqual(triples(warnings), [['IMAGE_OVERSIZED', 'index.html', 2]])
    assert.match(
      warnings[0]!.message,
      /^index\.html shows team\.png \(2000×1500 pixels, 40 KiB\) at most 400 pixels wide: publish a copy about 800 pixels wide for this page \(or give the <img> a srcset\)\.$/,
    )
  })

  test('a height alone says the size too', async () => {
    const files = [page('index.html', '<img src="team.png" height="100" alt="Team">'), binary('team.png', photo)]
    assert.deepEqual(
      (await siteWarnings(files)).map((w) => w.code),
      ['IMAGE_OVERSIZED'],
    )
  })

  test('not when any <img> of the page leaves the size unsaid, has a srcset, or the file is small or not an image the check reads', async () => {
    const files = [
      page('a.html', '<img src="team.png" width="100" alt=""><img src="team.png" alt="">'),
      page('b.html', '<img src="team.png" width="100" srcset="team.png 2000w" sizes="100px" alt=""><a href="a.html">a</a><a href="c.html">c</a>'),
      page('c.html', '<img src="icon.png" width="16" alt=""><img src="photo.webp" width="10" alt="">'),
      page('index.html', '<a href="b.html">b</a>'),
      binary('team.png', photo),
      binary('icon.png', pngOf(512, 512, 8 * KiB)),
      binary('photo.webp', randomBytes(64 * KiB)),
    ]
    assert.deepEqual(await siteWarnings(files), [])
  })
})
