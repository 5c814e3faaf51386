import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import {
  ALLOWED_HEADERS,
  type HeaderRules,
  headersFor,
  INVALID_HEADERS,
  MAX_HEADER_LINE_CHARS,
  MAX_HEADER_LINES,
  MAX_HEADER_RULES,
  parseHeaders,
} from '../../src/publishing/header-rules.ts'
import { MAX_RULE_VIOLATIONS, type RuleViolation } from '../../src/publishing/redirect-rules.ts'

/** Parses a file that must have no violations. */
function rules(text: string): HeaderRules {
  const parsed = parseHeaders(text)
  assert.deepEqual(parsed.violations, [], JSON.stringify(parsed.violations, null, 2))
  return parsed.rules
}

/** The violations of a file as [line, message] pairs. */
function violations(text: string): Array<[number, string]> {
  return parseHeaders(text).violations.map((v) => {
    assert.equal(v.code, INVALID_HEADERS)
    assert.equal(v.path, '_headers')
    assert.ok(v.message.startsWith(`_headers, line ${v.line}: `), v.message)
    assert.ok(v.detail.startsWith(`line ${v.line}: `), v.detail)
    return [v.line, v.message]
  })
}

/** The file's one violation, at `line`, whose message matches `pattern`. */
function violation(text: string, line: number, pattern: RegExp): void {
  const found = violations(text)
  assert.equal(found.length, 1, JSON.stringify(found, null, 2))
  assert.equal(found[0]![0], line)
  assert.match(found[0]![1], pattern)
}

const headers = (parsed: HeaderRules, path: string) => headersFor(parsed, path).map(([name, value]) => `${name}: ${value}`)

describe("Cloudflare Pages' examples", () => {
  const example = [
    '# This is a comment',
    '/secure/page',
    '  X-Frame-Options: DENY',
    '  X-Content-Type-Options: nosniff',
    '  Referrer-Policy: no-referrer',
    '',
    '/static/*',
    '  Access-Control-Allow-Origin: *',
    '  X-Robots-Tag: nosnippet',
    '',
    'https://myproject.pages.dev/*',
    '  X-Robots-Tag: noindex',
  ].join('\n')

  test('the attach example: the nosniff Plinth sends itself and the host rule are refused by line, saying what to do', () => {
    const found = violations(example)
    assert.deepEqual(
      found.map(([line]) => line),
      [4, 11],
    )
    assert.match(found[0]![1], /X-Content-Type-Options cannot be set: Plinth already sends "nosniff" on every response.*: remove the line/)
    assert.match(found[1]![1], /full URL: rules for one host are not supported/)
  })

  test('the attach example without what Plinth refuses: X-Frame-Options is a header a site may send', () => {
    const parsed = rules(
      example
        .split('\n')
        .slice(0, 10)
        .filter((line) => !line.includes('X-Content-Type-Options'))
        .join('\n'),
    )
    assert.deepEqual(headers(parsed, '/secure/page'), ['X-Frame-Options: DENY', 'Referrer-Policy: no-referrer'])
  })

  test('the attach example without what Plinth refuses: every matching rule applies, repeats joined', () => {
    const parsed = rules(
      [
        '/secure/page',
        '  Referrer-Policy: no-referrer',
        '',
        '/static/*',
        '  Access-Control-Allow-Origin: *',
        '  X-Robots-Tag: nosnippet',
        '',
        '/*',
        '  X-Robots-Tag: noindex',
      ].join('\n'),
    )
    assert.deepEqual(headers(parsed, '/secure/page'), ['Referrer-Policy: no-referrer', 'X-Robots-Tag: noindex'])
    assert.deepEqual(headers(parsed, '/static/image.jpg'), ['Access-Control-Allow-Origin: *', 'X-Robots-Tag: nosnippet, noindex'])
    assert.deepEqual(headers(parsed, '/home'), ['X-Robots-Tag: noindex'])
  })

  test('detaching a header with "!"', () => {
    // Cloudflare's own example: the detach removes the file's own policy, never the one Plinth sends.
    const example = rules("/*\n  Content-Security-Policy: default-src 'self';\n\n/*.jpg\n  ! Content-Security-Policy")
    assert.deepEqual(headers(example, '/index.html'), ["Content-Security-Policy: default-src 'self';"])
    assert.deepEqual(headers(example, '/img/cat.jpg'), [])
    const parsed = rules('/*\n  Cache-Control: no-cache\n  X-Robots-Tag: noindex\n\n/*.jpg\n  ! Cache-Control')
    assert.deepEqual(headers(parsed, '/index.html'), ['Cache-Control: no-cache', 'X-Robots-Tag: noindex'])
    assert.deepEqual(headers(parsed, '/img/cat.jpg'), ['X-Robots-Tag: noindex'])
  })

  test('a detach removes what earlier rules set, and a rule may set the header again', () => {
    const parsed = rules('/*\n  X-Tag: a\n/b/*\n  ! X-Tag\n  X-Tag: b\n/b/c\n  X-Tag: c')
    assert.deepEqual(headers(parsed, '/b/c'), ['X-Tag: b, c'])
  })

  test('placeholders: a value names them, and gets what the path matched', () => {
    const parsed = rules('/movies/:title\n  x-movie-name: You are watching ":title"')
    assert.deepEqual(headers(parsed, '/movies/casablanca'), ['x-movie-name: You are watching "casablanca"'])
    assert.deepEqual(headers(parsed, '/movies/up/'), ['x-movie-name: You are watching "up"'])
    assert.deepEqual(headers(parsed, '/movies'), [])
    assert.deepEqual(headers(parsed, '/movies/up/cast'), [])
  })

  test('splats: a value names ":splat", and gets what "*" matched', () => {
    const parsed = rules('/static/*\n  X-Robots-Tag: nosnippet\n  x-splat: :splat')
    assert.deepEqual(headers(parsed, '/static/image.jpg'), ['X-Robots-Tag: nosnippet', 'x-splat: image.jpg'])
    assert.deepEqual(headers(parsed, '/static/img/logo.png'), ['X-Robots-Tag: nosnippet', 'x-splat: img/logo.png'])
    assert.deepEqual(headers(parsed, '/static'), ['X-Robots-Tag: nosnippet', 'x-splat: '])
  })

  test('a word after ":" that names no placeholder of the rule stays as written', () => {
    const parsed = rules('/movies/:title\n  X-Section: movies:all :splat\n  Link: <https://example.com:443/x>; rel="preconnect"')
    assert.deepEqual(headers(parsed, '/movies/up'), ['X-Section: movies:all :splat', 'Link: <https://example.com:443/x>; rel="preconnect"'])
  })

  test('substituted values are the path as a URL writes it: escapes, not raw characters, reach the header', () => {
    const parsed = rules('/p/:name/*\n  X-Name: :name\n  X-Rest: [:splat]')
    // The path arrives decoded: spaces, quotes, non-ASCII and line breaks are %-encoded again.
    assert.deepEqual(headers(parsed, '/p/caf\u00e9 "x"/a\r\nSet-Cookie: b?c#d'), ['X-Name: caf%C3%A9%20%22x%22', 'X-Rest: [a%0D%0ASet-Cookie:%20b%3Fc%23d]'])
    for (const [, value] of headersFor(parsed, '/p/\u0000\u007f/\ud83d\ude00')) assert.match(value, /^[\x21-\x7e]*$/)
  })

  test('rules that fill values and rules that do not join as usual, per path', () => {
    const parsed = rules('/*\n  X-Tag: all\n/shop/:item\n  X-Tag: item-:item\n  X-Tag: again-:item\n/shop/*\n  X-Tag: shop')
    assert.deepEqual(headers(parsed, '/shop/pen'), ['X-Tag: all, item-pen, again-pen, shop'])
    assert.deepEqual(headers(parsed, '/shop/ink'), ['X-Tag: all, item-ink, again-ink, shop'])
    assert.deepEqual(headers(parsed, '/shop/a/b'), ['X-Tag: all, shop'])
  })

  test('the values of protective and Access-Control headers cannot name a placeholder', () => {
    for (const name of ['Access-Control-Allow-Origin', 'Content-Security-Policy', 'X-Frame-Options', 'Cross-Origin-Resource-Policy']) {
      violation(
        `/cors/:origin\n  ${name}: https://:origin`,
        2,
        new RegExp(`the value of ${name} names a placeholder: .*whoever writes the address would choose it`),
      )
    }
  })

  test('CORS for every asset', () => {
    const parsed = rules('/*\n  Access-Control-Allow-Origin: *')
    assert.deepEqual(headers(parsed, '/'), ['Access-Control-Allow-Origin: *'])
    assert.deepEqual(headers(parsed, '/fonts/a.woff2'), ['Access-Control-Allow-Origin: *'])
  })

  test('the host-specific examples are refused', () => {
    violation('https://:project.pages.dev/*\n  Access-Control-Allow-Origin: https://staging.:project.pages.dev/', 1, /full URL/)
    violation('https://:project.pages.dev/*\n  X-Robots-Tag: noindex', 1, /full URL/)
  })

  test('a canonical Link for proxied pages', () => {
    const parsed = rules('/about/faq/*\n  Link: </about/faqs>; rel="canonical"')
    assert.deepEqual(headers(parsed, '/about/faq/shipping'), ['Link: </about/faqs>; rel="canonical"'])
  })

  test('the hardening example: everything passes but the nosniff Plinth sends itself', () => {
    const example = [
      '/app/*',
      '  X-Frame-Options: DENY',
      '  X-Content-Type-Options: nosniff',
      '  Referrer-Policy: no-referrer',
      '  Permissions-Policy: document-domain=()',
      "  Content-Security-Policy: script-src 'self'; frame-ancestors 'none';",
    ]
    violation(example.join('\n'), 3, /X-Content-Type-Options cannot be set: Plinth already sends "nosniff"/)
    const parsed = rules(example.filter((line) => !line.includes('nosniff')).join('\n'))
    assert.deepEqual(headers(parsed, '/app/x'), [
      'X-Frame-Options: DENY',
      'Referrer-Policy: no-referrer',
      'Permissions-Policy: document-domain=()',
      "Content-Security-Policy: script-src 'self'; frame-ancestors 'none';",
    ])
  })
})

describe("Netlify's examples", () => {
  test('the syntax example with comments inside the rule: X-Frame-Options passes, X-XSS-Protection is obsolete', () => {
    violation(
      [
        '# a path:',
        '/templates/index.html',
        '  # headers for that path:',
        '  X-Frame-Options: DENY',
        '  X-XSS-Protection: 1; mode=block',
        '# another path:',
        '/templates/index2.html',
        '  # headers for that path:',
        '  X-Frame-Options: SAMEORIGIN',
      ].join('\n'),
      5,
      /X-XSS-Protection cannot be set: browsers no longer read it.*remove the line/,
    )
    const parsed = rules(
      [
        '# a path:',
        '/templates/index.html',
        '  # headers for that path:',
        '  X-Frame-Options: DENY',
        '/templates/index2.html',
        '  X-Frame-Options: SAMEORIGIN',
      ].join('\n'),
    )
    assert.deepEqual(headers(parsed, '/templates/index.html'), ['X-Frame-Options: DENY'])
    assert.deepEqual(headers(parsed, '/templates/index2.html'), ['X-Frame-Options: SAMEORIGIN'])
  })

  test('multi-value headers given on several lines', () => {
    const parsed = rules(
      ['/*', '  cache-control: max-age=0', '  cache-control: no-cache', '  cache-control: no-store', '  cache-control: must-revalidate'].join('\n'),
    )
    assert.deepEqual(headers(parsed, '/a'), ['cache-control: max-age=0, no-cache, no-store, must-revalidate'])
  })

  test('long-lived caching of fingerprinted assets', () => {
    const parsed = rules('/assets/*\n  Cache-Control: public, max-age=31536000, immutable')
    assert.deepEqual(headers(parsed, '/assets/app.3f2a.js'), ['Cache-Control: public, max-age=31536000, immutable'])
    assert.deepEqual(headers(parsed, '/index.html'), [])
  })

  test('Basic-Auth is refused in favour of the site password', () => {
    violation('/something/*\n  Basic-Auth: someuser:somepassword anotheruser:anotherpassword', 2, /set a site password instead/)
  })

  test('a header outside the allowed list is refused, the message naming what is allowed', () => {
    violation(
      '/path\n  test: one',
      2,
      /test is not a header a site may set: allowed are Cache-Control, Link, .*Permissions-Policy, Content-Security-Policy, .*Cross-Origin-Resource-Policy and custom X- headers/,
    )
  })
})

describe('which headers a site may set', () => {
  test('every allowed header, and custom X- headers', () => {
    const names = [...ALLOWED_HEADERS, 'X-Custom-Thing', 'x-lower-case', 'X-Powered-By']
    const parsed = rules(`/*\n${names.map((name) => `  ${name}: v`).join('\n')}`)
    assert.deepEqual(
      headers(parsed, '/'),
      names.map((name) => `${name}: v`),
    )
  })

  test('header names are matched case-insensitively', () => {
    const parsed = rules('/*\n  cache-control: a\n  CACHE-CONTROL: b\n/x\n  Cache-Control: c')
    assert.deepEqual(headers(parsed, '/x'), ['cache-control: a, b, c'])
    violation('/*\n  x-content-TYPE-options: x', 2, /cannot be set/)
  })

  const refused: Array<[string, RegExp]> = [
    ['Content-Security-Policy-Report-Only', /report-only policy is not supported: try a policy on a preview version .* with Content-Security-Policy instead/],
    ['X-Content-Security-Policy', /legacy name .*: write Content-Security-Policy instead/],
    ['X-WebKit-CSP', /legacy name .*: write Content-Security-Policy instead/],
    ['X-Content-Type-Options', /Plinth already sends "nosniff".*: remove the line/],
    ['X-XSS-Protection', /browsers no longer read it.*: remove the line/],
    ['Set-Cookie', /may not set cookies.*localStorage/],
    ['Content-Type', /contentType at publish/],
    ['Strict-Transport-Security', /TLS set-up in front of Plinth/],
    ['Connection', /hop-by-hop/],
    ['Keep-Alive', /hop-by-hop/],
    ['Transfer-Encoding', /hop-by-hop/],
    ['TE', /hop-by-hop/],
    ['Trailer', /hop-by-hop/],
    ['Upgrade', /hop-by-hop/],
    ['Proxy-Authenticate', /hop-by-hop/],
    ['Proxy-Connection', /hop-by-hop/],
    ['Content-Length', /computes it.*: remove the line/],
    ['Content-Encoding', /computes it/],
    ['ETag', /computes it/],
    ['Vary', /computes it/],
    ['Location', /_redirects rule/],
    ['X-Accel-Redirect', /instructs the reverse proxy in front of Plinth: remove the line/],
    ['X-Accel-Buffering', /instructs the reverse proxy/],
    ['X-Sendfile', /instructs the reverse proxy/],
    ['X-LiteSpeed-Location', /instructs the reverse proxy/],
    ['Server', /not a header a site may set/],
    ['Access-Control-Allow-Private-Network', /not a header a site may set.*name your own data X-Something/],
    ['Origin-Agent-Cluster', /not a header a site may set/],
  ]
  for (const [name, pattern] of refused) {
    test(`${name} is refused, naming the line`, () => {
      violation(`# comment\n/*\n  X-Fine: yes\n  ${name}: value`, 4, new RegExp(`${name}.*`))
      violation(`# comment\n/*\n  X-Fine: yes\n  ${name}: value`, 4, pattern)
      violation(`/*\n  X-Fine: yes\n  ! ${name}`, 3, pattern)
    })
  }

  test('protective headers are accepted: they can only narrow what a page may do', () => {
    const parsed = rules(
      [
        '/*',
        "  Content-Security-Policy: default-src 'none'; img-src 'self'",
        '  X-Frame-Options: sameorigin',
        '  Cross-Origin-Opener-Policy: same-origin; report-to="coop"',
        '  Cross-Origin-Embedder-Policy: require-corp',
        '  Cross-Origin-Resource-Policy: same-site',
        '/embed/*',
        '  ! X-Frame-Options',
        "  Content-Security-Policy: frame-ancestors 'self'",
      ].join('\n'),
    )
    assert.deepEqual(headers(parsed, '/embed/a'), [
      "Content-Security-Policy: default-src 'none'; img-src 'self', frame-ancestors 'self'",
      'Cross-Origin-Opener-Policy: same-origin; report-to="coop"',
      'Cross-Origin-Embedder-Policy: require-corp',
      'Cross-Origin-Resource-Policy: same-site',
    ])
  })

  test('a protective header with a value browsers do not read is refused, naming the values they do', () => {
    violation('/*\n  X-Frame-Options: ALLOW-FROM https://a.example', 2, /ALLOW-FROM is obsolete.*Content-Security-Policy: frame-ancestors .* instead/)
    violation('/*\n  X-Frame-Options: same-origin', 2, /"same-origin" is not a value of X-Frame-Options: browsers read DENY, SAMEORIGIN/)
    violation('/*\n  Cross-Origin-Opener-Policy: same-orgin', 2, /is not a value of Cross-Origin-Opener-Policy: browsers read same-origin, /)
    violation('/*\n  Cross-Origin-Embedder-Policy: yes', 2, /browsers read require-corp, credentialless, unsafe-none/)
    violation('/*\n  Cross-Origin-Resource-Policy: *', 2, /browsers read same-origin, same-site, cross-origin/)
  })

  test('no rule can set, remove or weaken the Content-Security-Policy under another name, nor sneak one past a check', () => {
    const attempts = [
      '/*\n  Content-Security-Policy-Report-Only: default-src *',
      '/*\n  X-Content-Security-Policy: default-src *',
      '/*\n  X-WebKit-CSP: default-src *',
      '/*\n  ! X-Content-Security-Policy',
      '/*\n  Content-Security-Policy: default-src \u00e9',
      '/*\n  X-Fine: a\r\n  Content-Security-Policy\u0000: x',
      '/*\n  X-Fine: a\n  Content-Security-Policy\u0000: x',
    ]
    for (const text of attempts) {
      const parsed = parseHeaders(text)
      assert.ok(parsed.violations.length > 0, text)
      const names = parsed.rules.list.flatMap((rule) => [...rule.set.map((h) => h.lower), ...rule.unset])
      assert.deepEqual(
        names.filter((name) => name.includes('csp') || name.includes('security-policy')),
        [],
        text,
      )
    }
  })
})

describe('the file format', () => {
  test('comments, blank lines, and header lines indented or not', () => {
    const parsed = rules(['# c', '', '/a', 'X-One: 1', '\tX-Two:2', '    # between', '   X-Three :  3  ', '', '/b/', '  X-Four: 4'].join('\n'))
    assert.deepEqual(
      parsed.list.map((r) => [r.line, r.path]),
      [
        [3, '/a'],
        [9, '/b/'],
      ],
    )
    assert.deepEqual(headers(parsed, '/a'), ['X-One: 1', 'X-Two: 2', 'X-Three: 3'])
    assert.deepEqual(headers(parsed, '/b'), ['X-Four: 4'])
  })

  test('a "#" in a value is part of the value', () => {
    assert.deepEqual(headers(rules('/a\n  Link: <https://example.com/#top>; rel="help" # not a comment'), '/a'), [
      'Link: <https://example.com/#top>; rel="help" # not a comment',
    ])
  })

  test('a colon in a value is kept', () => {
    assert.deepEqual(headers(rules('/a\n  Link: <https://example.com:8443/a>'), '/a'), ['Link: <https://example.com:8443/a>'])
  })

  test('CRLF and CR line endings, and a byte order mark', () => {
    const parsed = rules('\ufeff/a\r\n  X-A: 1\r\n\r\n/b\r  X-B: 2\r')
    assert.deepEqual(headers(parsed, '/a'), ['X-A: 1'])
    assert.deepEqual(headers(parsed, '/b'), ['X-B: 2'])
    const found = violations('\ufeff/a\r\n  X-A: 1\r\n  Set-Cookie: a=b\r\n')
    assert.deepEqual(
      found.map(([line]) => line),
      [3],
    )
  })

  test('an empty file has no rules and adds no headers', () => {
    const parsed = rules('')
    assert.deepEqual(parsed.list, [])
    assert.deepEqual(headersFor(parsed, '/'), [])
  })
})

describe('violations, each naming its line', () => {
  const cases: Array<[string, string, number, RegExp]> = [
    ['a header before any path', '# c\n  X-A: 1\n/a\n  X-B: 2', 2, /must follow a path line/],
    ['a detach before any path', '! X-A\n/a\n  X-B: 2', 1, /must follow a path line/],
    ['a path with no headers', '/a\n/b\n  X-B: 2', 1, /"\/a" has no headers under it/],
    ['the last path with no headers', '/a\n  X-A: 1\n\n/b\n# nothing', 4, /"\/b" has no headers/],
    ['a line that is neither', '/a\n  X-A: 1\n  just words', 3, /expected "Name: value"/],
    ['a header with no value', '/a\n  X-A:', 2, /X-A has no value/],
    ['a header with blank value', '/a\n  X-A:    ', 2, /X-A has no value/],
    ['a name with a space', '/a\n  X Custom: 1', 2, /"X Custom" is not a valid header name/],
    ['a name with a bracket', '/a\n  X-(A): 1', 2, /"X-\(A\)" is not a valid header name/],
    ['an empty name', '/a\n  : 1', 2, /"" is not a valid header name/],
    ['a non-ASCII value', '/a\n  X-Name: café', 2, /character other than printable ASCII/],
    ['a NUL in a value', '/a\n  X-Name: a\u0000b', 2, /control character/],
    ['a line too long', `/a\n  X-Long: ${'v'.repeat(MAX_HEADER_LINE_CHARS)}`, 2, /more than the 2000 allowed/],
    ['a path with a space', '/a b\n  X-A: 1', 1, /contains a space/],
    ['a path with a trailing comment', '/a # comment\n  X-A: 1', 1, /contains a space/],
    ['a path with two splats', '/a/*/b/*\n  X-A: 1', 1, /more than one "\*"/],
    ['a path with a query', '/a?x=1\n  X-A: 1', 1, /contains "\?" or "#"/],
    ['a path with a bad placeholder', '/:1\n  X-A: 1', 1, /":1" is not a placeholder/],
    ['a full URL', 'https://example.com/*\n  X-A: 1', 1, /full URL/],
    ['a path with a bad %-escape', '/a%zz\n  X-A: 1', 1, /not a %XX escape/],
  ]
  for (const [name, text, line, pattern] of cases) test(name, () => violation(text, line, pattern))

  test('the header lines of a refused path are checked, and do not count as missing a path', () => {
    assert.deepEqual(
      violations('https://example.com/*\n  X-A: 1\n  Set-Cookie: a=b\n/ok\n  X-B: 2').map(([line]) => line),
      [1, 3],
    )
  })

  test('a rule whose header lines were all refused is not also reported as empty', () => {
    assert.deepEqual(
      violations('/a\n  Set-Cookie: a=b\n/b\n  X-B: 1').map(([line]) => line),
      [2],
    )
  })

  test('every violation of a file is listed, the good rules kept', () => {
    const parsed = parseHeaders('/a\n  X-A: 1\n  Vary: x\n/b\n  Server: y\n/c\n  X-C: 3')
    assert.deepEqual(
      parsed.violations.map((v: RuleViolation) => v.line),
      [3, 5],
    )
    assert.deepEqual(
      parsed.rules.list.map((r) => r.path),
      ['/a', '/c'],
    )
  })

  test('more than 1,000 rules', () => {
    const lines: string[] = []
    for (let i = 0; i < MAX_HEADER_RULES; i++) lines.push(`/p${i}`, '  X-A: 1')
    assert.equal(parseHeaders(lines.join('\n')).violations.length, 0, 'exactly 1,000 rules are fine')
    lines.push('/too-many', '  X-A: 1')
    const found = violations(lines.join('\n'))
    assert.equal(found.length, 1)
    assert.equal(found[0]![0], 2 * MAX_HEADER_RULES + 1)
    assert.match(found[0]![1], /more than 1000 rules/)
  })

  test('more header lines than allowed', () => {
    const lines = ['/*']
    for (let i = 0; i <= MAX_HEADER_LINES; i++) lines.push(`  X-H${i}: v`)
    const found = violations(lines.join('\n'))
    assert.equal(found.length, 1)
    assert.equal(found[0]![0], MAX_HEADER_LINES + 2)
    assert.match(found[0]![1], /more than 2000 header lines/)
  })

  test('a file that is wrong everywhere reports a bounded number of violations', () => {
    assert.equal(parseHeaders('/a\n' + '  Set-Cookie: x\n'.repeat(1000)).violations.length, MAX_RULE_VIOLATIONS)
  })
})

describe('headersFor', () => {
  test('trailing slashes, splats and exact paths', () => {
    const parsed = rules('/docs/\n  X-Docs: 1\n/docs/*\n  X-Tree: 1\n/*.pdf\n  X-Robots-Tag: noindex\n/\n  X-Home: 1')
    assert.deepEqual(headers(parsed, '/docs'), ['X-Docs: 1', 'X-Tree: 1'])
    assert.deepEqual(headers(parsed, '/docs/a/b.pdf'), ['X-Tree: 1', 'X-Robots-Tag: noindex'])
    assert.deepEqual(headers(parsed, '/report.pdf'), ['X-Robots-Tag: noindex'])
    assert.deepEqual(headers(parsed, '/'), ['X-Home: 1'])
    assert.deepEqual(headers(parsed, '/other'), [])
  })

  test('paths match decoded and case-sensitively', () => {
    const parsed = rules('/caf%C3%A9/*\n  X-Cafe: 1\n/Upper\n  X-Upper: 1')
    assert.deepEqual(headers(parsed, '/café/menu'), ['X-Cafe: 1'])
    assert.deepEqual(headers(parsed, '/upper'), [])
    assert.deepEqual(headers(parsed, '/Upper'), ['X-Upper: 1'])
  })

  test('the result is frozen, and the same for the same path', () => {
    const parsed = rules('/*\n  X-A: 1')
    const result = headersFor(parsed, '/x')
    assert.ok(Object.isFrozen(result) && Object.isFrozen(result[0]))
    assert.deepEqual(headersFor(parsed, '/x'), result)
    assert.deepEqual(headersFor(parsed, 'no-slash'), [])
  })

  test('1,000 splat rules against a long path: linear matching, correct answer', () => {
    const lines: string[] = []
    for (let i = 0; i < MAX_HEADER_RULES - 1; i++) lines.push(`/${'a/'.repeat(20)}*${'b'.repeat(50)}${i}/:p/end`, `  X-R${i}: v`)
    lines.push('/*/needle', '  X-Found: yes')
    const parsed = rules(lines.join('\n'))
    assert.deepEqual(headers(parsed, `/${'a/'.repeat(20_000)}needle`), ['X-Found: yes'])
    assert.deepEqual(headers(parsed, `/${'*'.repeat(50_000)}`), [])
  })
})
