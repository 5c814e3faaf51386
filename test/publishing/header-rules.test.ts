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

  test('the attach example: the headers Plinth sets itself and the host rule are refused by line', () => {
    const found = violations(example)
    assert.deepEqual(
      found.map(([line]) => line),
      [3, 4, 11],
    )
    assert.match(found[0]![1], /X-Frame-Options cannot be set: Plinth sets it/)
    assert.match(found[1]![1], /X-Content-Type-Options cannot be set: Plinth sets it/)
    assert.match(found[2]![1], /full URL: rules for one host are not supported/)
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
    // Cloudflare's own example detaches a Content-Security-Policy, which no rule may touch here.
    assert.deepEqual(
      violations("/*\n  Content-Security-Policy: default-src 'self';\n\n/*.jpg\n  ! Content-Security-Policy").map(([line]) => line),
      [2, 5],
    )
    const parsed = rules('/*\n  Cache-Control: no-cache\n  X-Robots-Tag: noindex\n\n/*.jpg\n  ! Cache-Control')
    assert.deepEqual(headers(parsed, '/index.html'), ['Cache-Control: no-cache', 'X-Robots-Tag: noindex'])
    assert.deepEqual(headers(parsed, '/img/cat.jpg'), ['X-Robots-Tag: noindex'])
  })

  test('a detach removes what earlier rules set, and a rule may set the header again', () => {
    const parsed = rules('/*\n  X-Tag: a\n/b/*\n  ! X-Tag\n  X-Tag: b\n/b/c\n  X-Tag: c')
    assert.deepEqual(headers(parsed, '/b/c'), ['X-Tag: b, c'])
  })

  test('placeholders match, but are not substituted in values', () => {
    violation('/movies/:title\n  x-movie-name: You are watching ":title"', 2, /uses :title: placeholders are not substituted/)
    violation('/assets/*\n  X-Asset: :splat', 2, /uses :splat/)
    const parsed = rules('/movies/:title\n  X-Section: movies\n  Link: <https://example.com:443/x>; rel="preconnect"')
    assert.deepEqual(headers(parsed, '/movies/up'), ['X-Section: movies', 'Link: <https://example.com:443/x>; rel="preconnect"'])
    assert.deepEqual(headers(parsed, '/movies'), [])
    assert.deepEqual(headers(parsed, '/movies/up/cast'), [])
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

  test('the hardening example: the allowed headers pass, the others are refused by line', () => {
    const found = violations(
      [
        '/app/*',
        '  X-Frame-Options: DENY',
        '  X-Content-Type-Options: nosniff',
        '  Referrer-Policy: no-referrer',
        '  Permissions-Policy: document-domain=()',
        "  Content-Security-Policy: script-src 'self'; frame-ancestors 'none';",
      ].join('\n'),
    )
    assert.deepEqual(
      found.map(([line]) => line),
      [2, 3, 6],
    )
    const parsed = rules('/app/*\n  Referrer-Policy: no-referrer\n  Permissions-Policy: document-domain=()')
    assert.deepEqual(headers(parsed, '/app/x'), ['Referrer-Policy: no-referrer', 'Permissions-Policy: document-domain=()'])
  })
})

describe("Netlify's examples", () => {
  test('the syntax example with comments inside the rule', () => {
    const found = violations(
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
    )
    assert.deepEqual(
      found.map(([line]) => line),
      [4, 5, 9],
    )
    const parsed = rules(['# a path:', '/templates/index.html', '  # headers for that path:', '  X-Robots-Tag: noindex'].join('\n'))
    assert.deepEqual(headers(parsed, '/templates/index.html'), ['X-Robots-Tag: noindex'])
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
    violation('/path\n  test: one', 2, /test is not a header a site may set: allowed are Cache-Control, Link, .*Permissions-Policy and custom X- headers/)
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
    violation('/*\n  content-SECURITY-policy: x', 2, /cannot be set/)
  })

  const refused: Array<[string, RegExp]> = [
    ['Content-Security-Policy', /Plinth sets it.*enforces the authoring rules/],
    ['Content-Security-Policy-Report-Only', /Plinth sets it/],
    ['X-Content-Type-Options', /Plinth sets it/],
    ['X-Frame-Options', /Plinth sets it/],
    ['X-XSS-Protection', /Plinth sets it/],
    ['Set-Cookie', /may not set cookies/],
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
    ['Content-Length', /computes it/],
    ['Content-Encoding', /computes it/],
    ['ETag', /computes it/],
    ['Vary', /computes it/],
    ['Location', /_redirects rule/],
    ['X-Accel-Redirect', /instructs the reverse proxy/],
    ['X-Accel-Buffering', /instructs the reverse proxy/],
    ['X-Sendfile', /instructs the reverse proxy/],
    ['X-LiteSpeed-Location', /instructs the reverse proxy/],
    ['Server', /not a header a site may set/],
    ['Access-Control-Allow-Private-Network', /not a header a site may set/],
    ['Cross-Origin-Embedder-Policy', /not a header a site may set/],
  ]
  for (const [name, pattern] of refused) {
    test(`${name} is refused, naming the line`, () => {
      violation(`# comment\n/*\n  X-Fine: yes\n  ${name}: value`, 4, new RegExp(`${name}.*`))
      violation(`# comment\n/*\n  X-Fine: yes\n  ${name}: value`, 4, pattern)
      violation(`/*\n  X-Fine: yes\n  ! ${name}`, 3, pattern)
    })
  }

  test('no rule can set, remove or weaken the Content-Security-Policy, under any of its names', () => {
    const attempts = [
      '/*\n  Content-Security-Policy: default-src *',
      '/*\n  content-security-policy: default-src *',
      '/*\n  Content-Security-Policy-Report-Only: default-src *',
      '/*\n  X-Content-Security-Policy: default-src *',
      '/*\n  X-WebKit-CSP: default-src *',
      '/*\n  ! Content-Security-Policy',
      '/*\n  !Content-Security-Policy',
      '/*\n  Content-Security-Policy : default-src *',
      '/*\n  X-Fine: a\r\n  Content-Security-Policy: x',
      '/*\n  X-Fine: a\n\tContent-Security-Policy:x',
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
      assert.deepEqual(
        headersFor(parsed.rules, '/').filter(([name]) => /csp|security-policy/i.test(name)),
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
