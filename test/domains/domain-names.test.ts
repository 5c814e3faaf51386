/** Which names can be custom domains, and the one spelling they are stored in. */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { loadConfig } from '../../src/config.ts'
import { checkDomain, domainRulesOf, requestedHost } from '../../src/domains/domain-names.ts'

const rules = domainRulesOf(
  loadConfig({ PLINTH_BASE_URL: 'https://api.plinth.example', PLINTH_SITE_URL: 'https://www.plinth.example', PLINTH_SITE_DOMAIN: 'plinth-sites.net' }),
)
const problem = (input: string) => checkDomain(input, rules).problem ?? ''

describe('custom domain names', () => {
  test('names are stored lowercase, in punycode, without a trailing dot', () => {
    assert.equal(checkDomain('  WWW.Example.COM ', rules).domain, 'www.example.com')
    assert.equal(checkDomain('www.example.com.', rules).domain, 'www.example.com')
    assert.equal(checkDomain('Bücher.example', rules).domain, 'xn--bcher-kva.example')
    assert.equal(checkDomain('xn--bcher-kva.example', rules).domain, 'xn--bcher-kva.example')
    assert.equal(checkDomain('a-b.c-d.example.co.uk', rules).domain, 'a-b.c-d.example.co.uk')
  })

  test('IP addresses and names that parse as one are refused', () => {
    for (const ip of ['192.0.2.1', '[2001:db8::1]', '2001:db8::1', '1.2.3', '0x7f.1', 'shop.example.123']) assert.match(problem(ip), /IP address/, ip)
  })

  test('malformed names say what is wrong', () => {
    assert.match(problem(''), /Enter a domain name/)
    assert.match(problem('https://www.example.com/'), /no https:\/\/ and no path/)
    assert.match(problem('www.example.com/shop'), /no path/)
    assert.match(problem('www.example.com:8443'), /without a port/)
    assert.match(problem('example'), /at least two parts/)
    assert.match(problem('www..example.com'), /no empty parts/)
    assert.match(problem('.example.com'), /no empty parts/)
    assert.match(problem('-shop.example.com'), /cannot start or end with a hyphen/)
    assert.match(problem('shop-.example.com'), /cannot start or end with a hyphen/)
    assert.match(problem('my_shop.example.com'), /letters, digits and hyphens only/)
    assert.match(problem('shop example.com'), /letters, digits, hyphens and dots only/)
    assert.match(problem('ex%41mple.com'), /letters, digits, hyphens and dots only/)
    assert.match(problem(`${'a'.repeat(64)}.example.com`), /at most 63 characters; "a{64}" has 64/)
    assert.equal(checkDomain(`${'a'.repeat(63)}.example.com`, rules).domain, `${'a'.repeat(63)}.example.com`)
    const long = `${Array.from({ length: 4 }, () => 'b'.repeat(63)).join('.')}.com`
    assert.match(problem(long), /at most 253 characters; this one has 259/)
  })

  test("Plinth's own hosts are refused: the site domain, names under it, the API and web site hosts, localhost", () => {
    assert.match(problem('plinth-sites.net'), /Names under plinth-sites\.net are this Plinth's own site addresses/)
    assert.match(problem('shop.plinth-sites.net'), /Names under plinth-sites\.net/)
    assert.match(problem('api.plinth.example'), /api\.plinth\.example is this Plinth's own address/)
    assert.match(problem('WWW.plinth.example.'), /www\.plinth\.example is this Plinth's own address/)
    assert.equal(checkDomain('shop.plinth.example', rules).domain, 'shop.plinth.example', 'a name beside the service hosts is fine')
    assert.match(problem('localhost'), /localhost names only ever reach your own machine/)
    assert.match(problem('shop.localhost'), /localhost names only ever reach your own machine/)
  })

  test('the site domain is compared without its port', () => {
    const local = domainRulesOf(loadConfig({ PLINTH_SITE_DOMAIN: 'plinth.test:8080', PLINTH_BASE_URL: 'http://api.plinth.test:8080' }))
    assert.match(checkDomain('shop.plinth.test', local).problem ?? '', /Names under plinth\.test/)
    assert.equal(local.sitePort, '8080')
  })

  test('hosts asked about by the TLS proxy or serving: lowercased, one trailing dot dropped, garbage refused', () => {
    assert.equal(requestedHost('WWW.Example.com.'), 'www.example.com')
    for (const garbage of ['', '.', 'a..b', 'exa mple.com', 'a/b', `${'a'.repeat(64)}.com`, 'é.com', 'a'.repeat(254)])
      assert.equal(requestedHost(garbage), null, garbage)
  })
})
