import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import {
  INVALID_REDIRECTS,
  MAX_REDIRECT_LINE_CHARS,
  MAX_REDIRECT_RULES,
  MAX_RULE_VIOLATIONS,
  matchRedirect,
  parseRedirects,
  type RedirectMatch,
  type RedirectRules,
  type RuleViolation,
} from '../../src/publishing/redirect-rules.ts'

/** Parses a file that must have no violations. */
function rules(text: string): RedirectRules {
  const parsed = parseRedirects(text)
  assert.deepEqual(parsed.violations, [], JSON.stringify(parsed.violations, null, 2))
  return parsed.rules
}

/** The match for a request target ("/path?query"), the path decoded as serving decodes it. */
function match(parsed: RedirectRules, target: string, fileExists = false): RedirectMatch | null {
  const q = target.indexOf('?')
  const path = decodeURIComponent(q === -1 ? target : target.slice(0, q))
  return matchRedirect(parsed, path, q === -1 ? '' : target.slice(q), fileExists)
}

const redirect = (status: number, location: string) => ({ status, location })
const rewrite = (status: number, rewritePath: string, search = '') => ({ status, rewritePath, search })

/** The file's one violation, at `line`, whose message matches `pattern`. */
function violation(text: string, line: number, pattern: RegExp): RuleViolation {
  const { violations } = parseRedirects(text)
  assert.equal(violations.length, 1, JSON.stringify(violations, null, 2))
  const v = violations[0]!
  assert.equal(v.code, INVALID_REDIRECTS)
  assert.equal(v.path, '_redirects')
  assert.equal(v.line, line)
  assert.ok(v.detail.startsWith(`line ${line}: `), v.detail)
  assert.ok(v.message.startsWith(`_redirects, line ${line}: `), v.message)
  assert.match(v.message, pattern)
  return v
}

describe("Cloudflare Pages' examples", () => {
  test('the complete example file', () => {
    const parsed = rules(
      [
        '/home301 / 301',
        '/home302 / 302',
        '/querystrings /?query=string 301',
        '/twitch https://twitch.tv',
        '/trailing /trailing/ 301',
        '/notrailing/ /nottrailing 301',
        '/page/ /page2/#fragment 301',
        '/blog/* https://blog.my.domain/:splat',
        '/products/:code/:name /products?code=:code&name=:name',
      ].join('\n'),
    )
    assert.equal(parsed.list.length, 9)
    assert.deepEqual(match(parsed, '/home301'), redirect(301, '/'))
    assert.deepEqual(match(parsed, '/home302'), redirect(302, '/'))
    // The target's own query replaces the request's (as Cloudflare's redirect handler does).
    assert.deepEqual(match(parsed, '/querystrings?utm=x'), redirect(301, '/?query=string'))
    // Plinth's default status is Netlify's 301 (Cloudflare's is 302).
    assert.deepEqual(match(parsed, '/twitch?ref=1'), redirect(301, 'https://twitch.tv/?ref=1'))
    assert.deepEqual(match(parsed, '/trailing'), redirect(301, '/trailing/'))
    assert.equal(match(parsed, '/trailing/'), null, 'a redirect to the very URL requested is skipped')
    assert.deepEqual(match(parsed, '/notrailing/'), redirect(301, '/nottrailing'))
    assert.deepEqual(match(parsed, '/page/?a=1'), redirect(301, '/page2/?a=1#fragment'))
    assert.deepEqual(match(parsed, '/blog/2024/hello-world'), redirect(301, 'https://blog.my.domain/2024/hello-world'))
    assert.deepEqual(match(parsed, '/products/123/blue-shoes'), redirect(301, '/products?code=123&name=blue-shoes'))
  })

  test('the advanced features Cloudflare supports', () => {
    const parsed = rules(
      [
        '/home / 301',
        '/blog/* /posts/:splat',
        '/archive/:year/:month/:date/:slug /news/:year/:month/:date/:slug',
        '/docs/* /news/:splat 200',
        '/movies/:title /media/:title',
        '/about/faq/* /about/faqs 200',
      ].join('\n'),
    )
    assert.deepEqual(match(parsed, '/home'), redirect(301, '/'))
    assert.deepEqual(match(parsed, '/blog/a/b'), redirect(301, '/posts/a/b'))
    assert.deepEqual(match(parsed, '/archive/2024/05/17/launch'), redirect(301, '/news/2024/05/17/launch'))
    assert.deepEqual(match(parsed, '/docs/intro?x=1'), rewrite(200, '/news/intro', '?x=1'))
    assert.deepEqual(match(parsed, '/movies/up'), redirect(301, '/media/up'))
    assert.deepEqual(match(parsed, '/about/faq/shipping'), rewrite(200, '/about/faqs'))
  })

  test('rewrites are not chained: only the first matching rule applies', () => {
    const parsed = rules('/a /b 200\n/b /c 200')
    assert.deepEqual(match(parsed, '/a'), rewrite(200, '/b'))
    assert.deepEqual(match(parsed, '/b'), rewrite(200, '/c'))
  })

  test('the features Cloudflare lists as unsupported', () => {
    // Rewrites with other statuses: Netlify's 404 is supported.
    assert.deepEqual(match(rules('/blog/* /blog/404.html 404'), '/blog/gone'), rewrite(404, '/blog/404.html'))
    violation('/shop id=:id /blog/:id 301', 1, /query parameter "id=:id".*not support/)
    violation('workers.example.com/* workers.example.com/blog/:splat 301', 1, /does not start with "\/"/)
    violation('/ /us 302 Country=us', 1, /condition "Country=us".*not supported/)
    violation('/* /preview/:splat 302 Cookie=preview', 1, /condition "Cookie=preview"/)
  })
})

describe("Netlify's examples", () => {
  test('the overview example, with its comment', () => {
    const parsed = rules(
      [
        '# Redirects from what the browser requests to what we serve',
        '/home              /',
        '/blog/my-post.php  /blog/my-post',
        '/news              /blog',
        '/cuties            https://www.petsofnetlify.com',
        '/authors/c%C3%A9line /authors/about-c%C3%A9line',
      ].join('\n'),
    )
    assert.deepEqual(
      parsed.list.map((r) => [r.line, r.status]),
      [
        [2, 301],
        [3, 301],
        [4, 301],
        [5, 301],
        [6, 301],
      ],
    )
    assert.deepEqual(match(parsed, '/home'), redirect(301, '/'))
    assert.deepEqual(match(parsed, '/blog/my-post.php'), redirect(301, '/blog/my-post'))
    assert.deepEqual(match(parsed, '/news?page=2'), redirect(301, '/blog?page=2'))
    assert.deepEqual(match(parsed, '/cuties'), redirect(301, 'https://www.petsofnetlify.com/'))
    // Rules are written %-encoded; requests are matched decoded, however they were encoded.
    assert.deepEqual(match(parsed, '/authors/c%C3%A9line'), redirect(301, '/authors/about-c%C3%A9line'))
    assert.deepEqual(match(parsed, '/authors/c%c3%a9line'), redirect(301, '/authors/about-c%C3%A9line'))
  })

  test('HTTP status codes', () => {
    const parsed = rules(
      [
        '# Redirect with a 301',
        '/home         /              301',
        '',
        '# Redirect with a 302',
        '/my-redirect  /              302',
        '',
        '# Show a custom 404 for this path',
        '/ecommerce    /store-closed  404',
        '',
        '# Rewrite a path',
        '/pass-through /index.html    200',
      ].join('\n'),
    )
    assert.deepEqual(
      parsed.list.map((r) => r.line),
      [2, 5, 8, 11],
    )
    assert.deepEqual(match(parsed, '/home'), redirect(301, '/'))
    assert.deepEqual(match(parsed, '/my-redirect'), redirect(302, '/'))
    assert.deepEqual(match(parsed, '/ecommerce'), rewrite(404, '/store-closed'))
    assert.deepEqual(match(parsed, '/pass-through'), rewrite(200, '/index.html'))
  })

  test('custom 404 pages per language', () => {
    const parsed = rules('/en/* /en/404.html 404\n/de/* /de/404.html 404')
    assert.deepEqual(match(parsed, '/en/missing/page'), rewrite(404, '/en/404.html'))
    assert.deepEqual(match(parsed, '/de/fehlt'), rewrite(404, '/de/404.html'))
    assert.equal(match(parsed, '/fr/manque'), null)
  })

  test('splats keep the structure of the path', () => {
    const parsed = rules('/news/*  /blog/:splat')
    assert.deepEqual(match(parsed, '/news/2004/01/10/my-story'), redirect(301, '/blog/2004/01/10/my-story'))
    assert.deepEqual(match(parsed, '/news'), redirect(301, '/blog/'), '"/news/*" also matches "/news"')
    assert.deepEqual(match(parsed, '/news/'), redirect(301, '/blog/'))
  })

  test('placeholders', () => {
    const parsed = rules('/news/:year/:month/:date/:slug  /blog/:year/:month/:date/:slug')
    assert.deepEqual(match(parsed, '/news/2004/02/12/my-story'), redirect(301, '/blog/2004/02/12/my-story'))
    assert.equal(match(parsed, '/news/2004/02/12'), null, 'every placeholder needs a segment')
    assert.equal(match(parsed, '/news/2004/02/12/my/story'), null, 'a placeholder matches one segment')
  })

  test('placeholders inside a target segment', () => {
    const parsed = rules('/news/:year/:month/:date /blog-:year-:month-:date.html')
    assert.deepEqual(match(parsed, '/news/2024/05/17'), redirect(301, '/blog-2024-05-17.html'))
  })

  test('rule order: the first match wins', () => {
    const parsed = rules(
      [
        '# This will redirect /jobs/customer-ninja-rockstar',
        '/jobs/customer-ninja-rockstar  /careers/support-engineer',
        '',
        '# This will redirect all paths under /jobs except the path above',
        '/jobs/*                        /careers/:splat',
      ].join('\n'),
    )
    assert.deepEqual(match(parsed, '/jobs/customer-ninja-rockstar'), redirect(301, '/careers/support-engineer'))
    assert.deepEqual(match(parsed, '/jobs/designer'), redirect(301, '/careers/designer'))
    // The other order: the splat comes first and wins.
    const reversed = rules('/jobs/* /careers/:splat\n/jobs/customer-ninja-rockstar /careers/support-engineer')
    assert.deepEqual(match(reversed, '/jobs/customer-ninja-rockstar'), redirect(301, '/careers/customer-ninja-rockstar'))
  })

  test('a trailing comment after the rule', () => {
    const parsed = rules('/blog/my-post.php  /blog/my-post # this is just an old leftover')
    assert.deepEqual(match(parsed, '/blog/my-post.php'), redirect(301, '/blog/my-post'))
  })

  test('history pushstate and single-page apps: /* /index.html 200', () => {
    const parsed = rules('/*    /index.html   200')
    assert.deepEqual(match(parsed, '/'), rewrite(200, '/index.html'))
    assert.deepEqual(match(parsed, '/app/settings/profile?tab=2'), rewrite(200, '/index.html', '?tab=2'))
    // A file that exists is served before the rewrite (Netlify's default shadowing).
    assert.equal(match(parsed, '/app.js', true), null)
  })

  test('shadowing: a rule applies where a file exists only when forced with "!"', () => {
    const parsed = rules('/app/*  /app/index.html  200\n/old.html /new.html 301!')
    assert.equal(parsed.list[0]!.force, false)
    assert.equal(parsed.list[1]!.force, true)
    assert.equal(match(parsed, '/app/main.js', true), null)
    assert.deepEqual(match(parsed, '/app/main.js'), rewrite(200, '/app/index.html'))
    assert.deepEqual(match(parsed, '/old.html', true), redirect(301, '/new.html'))
    const forced = rules('/app/  /app/index.html  200!')
    assert.deepEqual(match(forced, '/app/', true), rewrite(200, '/app/index.html'))
  })

  test('a forced rule later in the file still applies where a file shadows an earlier one', () => {
    const parsed = rules('/a/* /x 302\n/a/b /y 302!')
    assert.deepEqual(match(parsed, '/a/b'), redirect(302, '/x'))
    assert.deepEqual(match(parsed, '/a/b', true), redirect(302, '/y'))
  })

  test('the Netlify-only forms are refused, each with its reason', () => {
    violation('/store id=:id  /blog/:id  301', 1, /query parameter "id=:id"/)
    violation('/      page=news      /news', 1, /query parameter "page=news"/)
    violation('/articles id=:id tag=:tag /posts/:tag/:id 301', 1, /query parameter "id=:id"/)
    violation('/api/*  https://api.example.com/:splat  200', 1, /needs a redirect status.*never proxies/)
    violation('http://blog.yoursite.com/* https://www.yoursite.com/blog/:splat 301!', 1, /full URL: domain-level rules are not supported/)
    violation('/  /anz     302  Country=au,nz', 1, /condition "Country=au,nz"/)
    violation('/  /china   302  Country=cn,hk,tw', 1, /condition/)
    violation('/  /israel  302  Country=il', 1, /condition/)
    violation('/products /en/products 301 Language=en', 1, /condition "Language=en"/)
    violation('/admin/*  200!  Role=admin', 1, /no target.*\/app\/:splat 200/)
    violation('/app/*  200', 1, /no target/)
  })
})

describe('the file format', () => {
  test('comments, blank lines, indentation and tabs', () => {
    const parsed = rules(
      ['# comment', '', '   ', '  # indented comment', '\t/a\t\t/b\t302  ', '   /c   /d', '/e /f 301 # trailing', '/g /h #trailing'].join('\n'),
    )
    assert.deepEqual(
      parsed.list.map((r) => [r.line, r.from, r.to, r.status]),
      [
        [5, '/a', '/b', 302],
        [6, '/c', '/d', 301],
        [7, '/e', '/f', 301],
        [8, '/g', '/h', 301],
      ],
    )
  })

  test('a "#" inside a target is a fragment, not a comment', () => {
    assert.deepEqual(match(rules('/a /b#part'), '/a'), redirect(301, '/b#part'))
  })

  test('CRLF and lone CR line endings, and a byte order mark', () => {
    const crlf = parseRedirects('\ufeff# comment\r\n/a /b 302\r\n\r\n/c /d\r\n')
    assert.deepEqual(crlf.violations, [])
    assert.deepEqual(
      crlf.rules.list.map((r) => [r.line, r.from, r.to]),
      [
        [2, '/a', '/b'],
        [4, '/c', '/d'],
      ],
    )
    assert.deepEqual(
      parseRedirects('/a /b\r/c /d').rules.list.map((r) => r.line),
      [1, 2],
    )
    // The BOM is not part of the first rule's path.
    assert.deepEqual(match(rules('\ufeff/a /b'), '/a'), redirect(301, '/b'))
    violation('/a /b\r\n/c\r\n', 2, /no target/)
  })

  test('an empty file, or one of comments only, has no rules', () => {
    assert.deepEqual(rules('').list, [])
    assert.deepEqual(rules('# nothing yet\n\n').list, [])
    assert.equal(matchRedirect(rules(''), '/a', ''), null)
  })

  test('every supported status', () => {
    for (const status of [301, 302, 303, 307, 308]) assert.deepEqual(match(rules(`/a /b ${status}`), '/a'), redirect(status, '/b'))
    for (const status of [301, 302, 303, 307, 308])
      assert.deepEqual(match(rules(`/a https://example.com/b ${status}`), '/a'), redirect(status, 'https://example.com/b'))
    assert.deepEqual(match(rules('/a /b 200'), '/a'), rewrite(200, '/b'))
    assert.deepEqual(match(rules('/a /b 404'), '/a'), rewrite(404, '/b'))
    assert.deepEqual(match(rules('/a /b'), '/a'), redirect(301, '/b'))
    assert.deepEqual(match(rules('/a /b 307!'), '/a', true), redirect(307, '/b'))
  })
})

describe('violations, each naming its line', () => {
  const cases: Array<[string, string, number, RegExp]> = [
    ['a path with no target', '# c\n/only', 2, /no target/],
    ['too many fields', '/a /b 301 extra', 1, /4 fields/],
    ['an unknown status', '\n/a /b 410', 2, /"410" is not a status Plinth supports/],
    ['a status that is no number', '/a /b permanent', 1, /"permanent" is not a status/],
    ['a status of four digits', '/a /b 3010', 1, /"3010" is not a status/],
    ['a doubled force mark', '/a /b 301!!', 1, /"301!!" is not a status/],
    ['a 200 rewrite to an external URL', '/a https://example.com/a 200', 1, /needs a redirect status/],
    ['a 404 to an external URL', '/a http://example.com/gone 404', 1, /needs a redirect status/],
    ['a forced rewrite to an external URL', '/a https://example.com/ 200!', 1, /needs a redirect status/],
    ['a from that is no path', 'old-page /new', 1, /"old-page" does not start with "\/"/],
    ['a from that is a full URL', 'https://example.com/a /b', 1, /full URL: domain-level rules are not supported/],
    ['a from with a query string', '/a?x=1 /b', 1, /contains "\?" or "#"/],
    ['a from with a fragment', '/a#top /b', 1, /contains "\?" or "#"/],
    ['a from starting with //', '//a /b', 1, /starts with "\/\/"/],
    ['two splats', '/a/*/b/* /c', 1, /more than one "\*"/],
    [':splat without a splat', '/a/:id /b/:splat', 1, /":splat" but "\/a\/:id" has no "\*"/],
    ['an unknown placeholder', '/posts/:year /archive/:year/:slug', 1, /":slug", which is no placeholder of "\/posts\/:year"/],
    ['a placeholder twice', '/:a/:a /b', 1, /":a" appears twice/],
    ['a placeholder named splat', '/:splat /b', 1, /":splat" is not a placeholder of its own/],
    ['a placeholder not starting with a letter', '/:1st /b', 1, /":1st" is not a placeholder/],
    ['a placeholder mixed with a splat', '/:a* /b', 1, /":a\*" is not a placeholder/],
    ['a target starting with //', '/a //evil.example/x', 1, /starts with "\/\/", which browsers read as another host/],
    ['a target starting with /\\', '/a /\\evil.example', 1, /starts with "\/\/"/],
    ['a target with a backslash', '/a /b\\c', 1, /backslash/],
    ['a javascript: target', '/a javascript:alert(1) 302', 1, /neither a path nor an http\(s\) URL/],
    ['a target without a leading slash', '/a new-page', 1, /"new-page" does not start with "\/"/],
    ['a target with a user name', '/a https://example.com@evil.example/ 302', 1, /user name before its host/],
    ['a placeholder in the target host', '/go/:site https://:site.example.com/ 302', 1, /placeholder in its host/],
    ['a splat in the target host', '/go/* https://:splat/ 302', 1, /placeholder in its host/],
    ['an invalid external URL', '/a https://exa mple.com', 1, /3 fields|not a status/],
    ['an external URL with no host', '/a https:///path 302', 1, /not a valid URL/],
    ['a bad %-escape in from', '/a%zz /b', 1, /"%" that is not a %XX escape/],
    ['a bad %-escape in the target', '/a /b%2 301', 1, /"%" that is not a %XX escape/],
    ['a %-escape that is not UTF-8 in from', '/caf%E9 /b', 1, /not UTF-8/],
    ['a %-escape that is not UTF-8 in a rewrite target', '/a /caf%E9 200', 1, /not UTF-8/],
    ['an escaped slash in from', '/a%2Fb /c', 1, /escaped "\/" \(%2F\)/],
    ['a NUL byte', '/a /b\u0000 301', 1, /control character/],
    ['an unpaired surrogate', '/a /b\ud800', 1, /unpaired UTF-16 surrogate/],
    ['a line too long', `/a /${'b'.repeat(MAX_REDIRECT_LINE_CHARS)}`, 1, /characters long, more than the 1000 allowed/],
  ]
  for (const [name, text, line, pattern] of cases) test(name, () => void violation(text, line, pattern))

  test('every violation of a file is listed, in line order, and the good rules are kept', () => {
    const { rules: parsed, violations } = parseRedirects('/ok /fine\n/bad\n# comment\n/a /b 999\n/also /fine 302')
    assert.deepEqual(
      violations.map((v) => v.line),
      [2, 4],
    )
    assert.deepEqual(
      parsed.list.map((r) => r.from),
      ['/ok', '/also'],
    )
  })

  test('more than 1,000 rules', () => {
    const lines = ['# many rules', '']
    for (let i = 0; i < MAX_REDIRECT_RULES; i++) lines.push(`/old-${i} /new-${i}`)
    assert.equal(parseRedirects(lines.join('\n')).violations.length, 0, 'exactly 1,000 rules are fine')
    lines.push('/one-too-many /x', '/and-another /y')
    const { violations } = parseRedirects(lines.join('\n'))
    assert.equal(violations.length, 1)
    assert.equal(violations[0]!.line, MAX_REDIRECT_RULES + 3)
    assert.match(violations[0]!.message, /more than 1000 rules/)
  })

  test('a file that is wrong everywhere reports a bounded number of violations', () => {
    const { violations } = parseRedirects('nonsense\n'.repeat(5000))
    assert.equal(violations.length, MAX_RULE_VIOLATIONS)
  })
})

describe('matchRedirect', () => {
  test('the query string of the request is kept unless the target has its own', () => {
    const parsed = rules('/a /b\n/c /d?from=c\n/e https://example.com/f#top 302\n/g /h? 301')
    assert.deepEqual(match(parsed, '/a?x=1&y=2'), redirect(301, '/b?x=1&y=2'))
    assert.deepEqual(match(parsed, '/c?x=1'), redirect(301, '/d?from=c'))
    assert.deepEqual(match(parsed, '/e?x=1'), redirect(302, 'https://example.com/f?x=1#top'))
    assert.deepEqual(match(parsed, '/g?x=1'), redirect(301, '/h?'), 'a bare "?" drops the query')
  })

  test('trailing slashes: a rule matches the path with or without one', () => {
    const parsed = rules('/about /about-us\n/team/ /people')
    assert.deepEqual(match(parsed, '/about'), redirect(301, '/about-us'))
    assert.deepEqual(match(parsed, '/about/'), redirect(301, '/about-us'))
    assert.deepEqual(match(parsed, '/team'), redirect(301, '/people'))
    assert.deepEqual(match(parsed, '/team/'), redirect(301, '/people'))
    assert.equal(match(parsed, '/about//'), null, 'one trailing slash only')
  })

  test('a rule that would redirect to the URL requested is skipped, and the next rule applies', () => {
    const parsed = rules('/a/ /a 301\n/a /a-page 302')
    assert.deepEqual(match(parsed, '/a/'), redirect(301, '/a'))
    assert.deepEqual(match(parsed, '/a'), redirect(302, '/a-page'))
    // With a query of its own the target differs from the request: no loop, so no skip.
    assert.deepEqual(match(rules('/a /a?v=2'), '/a'), redirect(301, '/a?v=2'))
    assert.equal(match(rules('/a /a?v=2'), '/a?v=2'), null)
  })

  test('paths match case-sensitively, like the files of a site', () => {
    const parsed = rules('/About /about-us')
    assert.equal(match(parsed, '/about'), null)
    assert.deepEqual(match(parsed, '/About'), redirect(301, '/about-us'))
  })

  test('a splat inside a segment', () => {
    const parsed = rules('/old/*.php /new/:splat 301\n/img-* /images/:splat 302')
    assert.deepEqual(match(parsed, '/old/a/b.php'), redirect(301, '/new/a/b'))
    assert.equal(match(parsed, '/old/a/b.html'), null)
    assert.deepEqual(match(parsed, '/img-logo.png'), redirect(302, '/images/logo.png'))
    assert.deepEqual(match(parsed, '/img-'), redirect(302, '/images/'))
  })

  test('a splat between segments, and placeholders around it', () => {
    const parsed = rules('/docs/:version/*/edit /edit/:version/:splat 302')
    assert.deepEqual(match(parsed, '/docs/v2/guide/setup/edit'), redirect(302, '/edit/v2/guide/setup'))
    assert.equal(match(parsed, '/docs/v2/edit'), null, 'a splat between segments matches at least one')
  })

  test('captured values are %-encoded in the Location, and decoded in a rewrite path', () => {
    const parsed = rules('/r/* /to/:splat 301\n/q/:name /search?q=:name 302\n/w/* /pages/:splat 200')
    assert.deepEqual(match(parsed, '/r/caf%C3%A9/a%20b%3Fc'), redirect(301, '/to/caf%C3%A9/a%20b%3Fc'))
    assert.deepEqual(match(parsed, '/q/fish%20%26%20chips'), redirect(302, '/search?q=fish%20%26%20chips'))
    assert.deepEqual(match(parsed, '/w/caf%C3%A9'), rewrite(200, '/pages/café'))
  })

  test('literal non-ASCII text in a target is sent %-encoded', () => {
    assert.deepEqual(match(rules('/a /café 302'), '/a'), redirect(302, '/caf%C3%A9'))
    assert.deepEqual(match(rules('/a /café 200'), '/a'), rewrite(200, '/café'))
    assert.deepEqual(match(rules('/a https://bücher.example/ 302'), '/a'), redirect(302, 'https://xn--bcher-kva.example/'))
  })

  test('a splat can never turn a path of the site into another host', () => {
    const parsed = rules('/go/* /:splat 302\n/in/* /x/:splat 200')
    assert.deepEqual(match(parsed, '/go//evil.example/path'), redirect(302, '/evil.example/path'))
    assert.deepEqual(match(parsed, '/go/%2F%2Fevil.example'), redirect(302, '/evil.example'))
    assert.deepEqual(match(parsed, '/go/%5Cevil.example'), redirect(302, '/%5Cevil.example'))
    assert.deepEqual(match(parsed, '/in//a//b'), rewrite(200, '/x/a/b'))
  })

  test('rules without placeholders are found by path, in file order with the others', () => {
    const parsed = rules('/a/* /first\n/a/b /second\n/c /third\n/:x /fourth')
    assert.deepEqual(match(parsed, '/a/b'), redirect(301, '/first'))
    assert.deepEqual(match(parsed, '/c'), redirect(301, '/third'))
    assert.deepEqual(match(parsed, '/d'), redirect(301, '/fourth'))
    assert.equal(match(parsed, '/d/e'), null)
  })

  test('a path that is not one gives no match', () => {
    const parsed = rules('/* /index.html 200')
    assert.equal(matchRedirect(parsed, '', ''), null)
    assert.equal(matchRedirect(parsed, 'relative', ''), null)
  })

  test('a lone surrogate in a captured value gives no redirect rather than an exception', () => {
    assert.equal(matchRedirect(rules('/a/* /b/:splat'), '/a/\ud800', ''), null)
  })
})

describe('hostile input', () => {
  test('1,000 splat rules against a long path: linear matching, correct answer', () => {
    const lines: string[] = []
    for (let i = 0; i < MAX_REDIRECT_RULES - 1; i++) lines.push(`/${'a/'.repeat(20)}*${'b'.repeat(50)}${i}/:p${i}/end /x/:splat 302`)
    lines.push('/*/needle /found/:splat 302')
    const parsed = rules(lines.join('\n'))
    const long = `/${'a/'.repeat(20_000)}needle`
    assert.deepEqual(matchRedirect(parsed, long, ''), redirect(302, `/found/${'a/'.repeat(19_999)}a`))
    assert.equal(matchRedirect(parsed, `/${'a/'.repeat(20_000)}b`, ''), null)
    assert.equal(matchRedirect(parsed, `/${'*'.repeat(50_000)}`, ''), null)
  })

  test('1,000 exact rules: the last one is found', () => {
    const lines: string[] = []
    for (let i = 0; i < MAX_REDIRECT_RULES; i++) lines.push(`/page-${i} /p/${i}`)
    const parsed = rules(lines.join('\n'))
    assert.deepEqual(matchRedirect(parsed, '/page-999', ''), redirect(301, '/p/999'))
  })

  test('regex syntax in a rule is literal text', () => {
    const parsed = rules('/(a+)+$ /x 302\n/[a-z]{2}.* /y 302')
    assert.equal(match(parsed, '/aaaa'), null)
    assert.deepEqual(match(parsed, '/(a+)+$'), redirect(302, '/x'))
    assert.deepEqual(match(parsed, '/[a-z]{2}.html'), redirect(302, '/y'))
  })
})
