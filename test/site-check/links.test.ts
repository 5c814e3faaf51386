/**
 * BROKEN_LINK and MISSING_ANCHOR: an address in a page, a stylesheet or a script leads where the
 * site server would answer it (a file by the server's own rules, a content page, a `_redirects`
 * rule), or it is broken; a fragment names an element of the page it leads to.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { page, siteWarnings, triples } from '../helpers/site-check.ts'

describe('BROKEN_LINK', () => {
  test('a clean bundle gives an empty list', async () => {
    const files = [
      page(
        'index.html',
        '<a href="about.html">About</a> <a href="/docs/">Docs</a> <a href="docs">Docs</a> <a href="about">About</a> <link rel="stylesheet" href="css/site.css">',
      ),
      page('about.html', '<a href="/">Home</a> <a href="index.html#top">Top</a>'),
      page('docs/index.html', '<a href="../about.html?x=1">About</a> <script type="module" src="/js/app.js"></script>'),
      { path: 'css/site.css', content: "body { background: url('../img/bg.png') } @import 'print.css';" },
      { path: 'css/print.css', content: 'p { color: black }' },
      { path: 'js/app.js', content: "import { two } from './two.js'\nexport const one = two" },
      { path: 'js/two.js', content: 'export const two = 2' },
      { path: 'img/bg.png', content: 'cG5n', contentEncoding: 'base64' as const },
    ]
    assert.deepEqual(await siteWarnings(files), [])
  })

  test('a link, a src, a srcset candidate, a CSS url(), an @import and a module import to no file: each once, with its line', async () => {
    const files = [
      page(
        'index.html',
        [
          '<a href="missing.html">gone</a>',
          '<img src="img/none.png" alt="">',
          '<img src="img/a.png" srcset="img/a.png 1x, img/a@2x.png 2x" alt="">',
          '<link rel="stylesheet" href="site.css">',
          '<script type="module">import "./lib/absent.js"</script>',
        ].join('\n'),
      ),
      { path: 'img/a.png', content: 'cG5n', contentEncoding: 'base64' as const },
      { path: 'site.css', content: "@import 'theme.css';\nbody {\n  background: url(img/bg.jpg);\n}" },
    ]
    const warnings = await siteWarnings(files)
    assert.deepEqual(triples(warnings), [
      ['BROKEN_LINK', 'index.html', 1],
      ['BROKEN_LINK', 'index.html', 2],
      ['BROKEN_LINK', 'index.html', 3],
      ['BROKEN_LINK', 'index.html', 5],
      ['BROKEN_LINK', 'site.css', 1],
      ['BROKEN_LINK', 'site.css', 3],
    ])
    assert.match(warnings[0]!.message, /^index\.html links to "missing\.html", which is no file of the site.*: fix the address, add the file, or add a rule\.$/)
    assert.match(warnings[1]!.message, /shows the image "img\/none\.png"/)
    assert.match(warnings[2]!.message, /offers the image "img\/a@2x\.png"/)
    assert.match(warnings[3]!.message, /loads the script "\.\/lib\/absent\.js"/)
    assert.match(warnings[4]!.message, /^site\.css loads the stylesheet "theme\.css"/)
    assert.match(warnings[5]!.message, /^site\.css loads "img\/bg\.jpg"/, 'a stylesheet resolves its addresses from its own folder')
  })

  test('a module imports from its own folder; a bare specifier goes through an import map and is not judged', async () => {
    const files = [
      page('index.html', '<script type="module" src="js/main.js"></script>'),
      {
        path: 'js/main.js',
        content: "import { a } from './a.js'\nimport { b } from '../b.js'\nimport lit from 'lit'\nconst later = () => import('./lazy.js')",
      },
      { path: 'js/a.js', content: 'export const a = 1' },
    ]
    assert.deepEqual(triples(await siteWarnings(files)), [
      ['BROKEN_LINK', 'js/main.js', 2],
      ['BROKEN_LINK', 'js/main.js', 4],
    ])
  })

  test('content pages, collections, forms, library images and _redirects rules answer what is no file', async () => {
    const files = [
      page(
        'index.html',
        [
          '<a href="/posts-hello-world">a post</a>',
          '<a href="/posts">all posts</a> <a href="/posts.xml">feed</a>',
          '<a href="/sitemap.xml">sitemap</a>',
          '<form method="post" action="/_forms/contact"><button>Send</button></form>',
          `<img src="/_assets/${'a'.repeat(64)}.png" alt="">`,
          '<a href="/old-page">moved</a> <a href="/blog/2020/hello">old blog</a> <a href="/gone">gone for good</a>',
          '<a href="https://example.com/elsewhere">elsewhere</a> <a href="mailto:a@example.com">mail</a> <a href="tel:+1">call</a>',
        ].join('\n'),
      ),
      page('new-page.html', '<a href="/">home</a>'),
      page('blog.html', '<a href="/">home</a>'),
      { path: '_redirects', content: '/old-page /new-page.html 301\n/blog/* /blog.html 200\n/gone /404.html 404\n' },
      page('404.html', '<a href="/">home</a>'),
    ]
    assert.deepEqual(triples(await siteWarnings(files, { collectionNames: ['posts'] })), [['BROKEN_LINK', 'index.html', 6]])
  })

  test("a _redirects rule's target that is no file is a broken link of _redirects (the rule answers the page's link)", async () => {
    const files = [page('index.html', '<a href="/a">a</a>'), { path: '_redirects', content: '# moved\n/a /b.html 301\n' }]
    const warnings = await siteWarnings(files)
    assert.deepEqual(triples(warnings), [['BROKEN_LINK', '_redirects', 2]])
    assert.match(warnings[0]!.message, /^_redirects links to "\/b\.html"/)
  })

  test('a <base> inside the site moves where relative addresses lead; one on another origin is ignored, as browsers do', async () => {
    const within = [page('index.html', '<base href="/docs/"><a href="guide.html">guide</a>'), page('docs/guide.html', '<a href="/">home</a>')]
    assert.deepEqual(await siteWarnings(within), [])
    const foreign = [page('index.html', '<base href="https://cdn.example/"><a href="guide.html">guide</a>'), page('guide.html', '<a href="/">home</a>')]
    assert.deepEqual(
      (await siteWarnings(foreign)).map((w) => w.code),
      ['BLOCKED_BY_POLICY'],
    )
  })

  test('templates resolve from the site root and are not judged where rendering fills an address in', async () => {
    const files = [
      page('index.html', '<a href="/posts">posts</a>'),
      { path: '_templates/entry.html', content: '<link rel="stylesheet" href="/css/entry.css"><a href="{{ entry.url }}">x</a><a href="/missing">m</a>' },
      { path: 'css/entry.css', content: 'p { margin: 0 }' },
    ]
    assert.deepEqual(await siteWarnings(files, { collectionNames: ['posts'] }), [], 'the stylesheet a template loads is used')
  })
})

describe('MISSING_ANCHOR', () => {
  test('a fragment to a missing id, in the page or another; ids, <a name> and the top of the page are found', async () => {
    const files = [
      page(
        'index.html',
        [
          '<h2 id="menu">Menu</h2> <a name="legacy"></a>',
          '<a href="#menu">menu</a> <a href="#legacy">legacy</a> <a href="#top">top</a> <a href="#">nothing</a>',
          '<a href="#hours">hours</a>',
          '<a href="about.html#team">team</a> <a href="about.html#people">people</a>',
          '<a href="app.html#/settings">a route</a> <a href="#:~:text=menu">a text fragment</a>',
        ].join('\n'),
      ),
      page('about.html', '<section id="team">Team</section>'),
      page('app.html', '<div id="app"></div>'),
    ]
    const warnings = await siteWarnings(files)
    assert.deepEqual(triples(warnings), [
      ['MISSING_ANCHOR', 'index.html', 3],
      ['MISSING_ANCHOR', 'index.html', 4],
    ])
    assert.match(warnings[0]!.message, /^index\.html links to "#hours", but the page has no element with id="hours": add that id/)
    assert.match(warnings[1]!.message, /about\.html has no element with id="people"/)
  })

  test('an id inside a <template> is not in the page; an escaped fragment is looked up decoded', async () => {
    const files = [page('index.html', '<template><p id="later"></p></template><h2 id="café">Café</h2><a href="#later">l</a><a href="#caf%C3%A9">c</a>')]
    assert.deepEqual(triples(await siteWarnings(files)), [['MISSING_ANCHOR', 'index.html', 1]])
  })
})
