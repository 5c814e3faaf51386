/**
 * Custom domains over real HTTP, on every store, with a DNS server on loopback as the resolver
 * (PLINTH_DNS_SERVERS): the owner adds a domain, sees its TXT record, verifies it (a missing and a
 * wrong record are refused with their reasons) and removes it; nobody else changes anything; the
 * TLS question answers for exactly the hosts Plinth serves; no token reaches any of it.
 */
import assert from 'node:assert/strict'
import http from 'node:http'
import { after, before, describe, test } from 'node:test'
import { createSite } from '../helpers/factories.ts'
import { bundle, SITE_DOMAIN, startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'
import { alertText, uniqueEmail, WebVisitor } from '../helpers/web.ts'
import { TestDnsServer } from './dns-server.ts'

/** A request to the server with the given Host header (a custom domain), as a proxy in front would forward it. */
function viaHost(server: TestServer, host: string, path: string, headers: Record<string, string> = {}) {
  const { port } = new URL(server.url)
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, agent: false, headers: { host, ...headers } }, (res) => {
      let body = ''
      res.on('data', (c) => (body += c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
    })
    req.on('error', reject)
    req.end()
  })
}

/** A domain no other test uses. */
const domainName = (label: string) => `${label}-${Math.random().toString(36).slice(2, 8)}.example.com`
const challengeOf = (html: string, domain: string): string => {
  const at = html.indexOf(`<code>_plinth-challenge.${domain}</code>`)
  assert.ok(at !== -1, `the record name of ${domain} is shown`)
  const value = /<code>(plinth-verify=[A-Za-z0-9_-]{32})<\/code>/.exec(html.slice(at))?.[1]
  assert.ok(value, 'the challenge value is shown after its name')
  return value
}

for (const store of STORES) {
  describe(`custom domains (${store.name})`, { skip: store.skip }, () => {
    let dns: TestDnsServer
    let server: TestServer
    let owner: WebVisitor
    let ownerToken: string
    let editor: WebVisitor
    let editorEmail: string
    let other: WebVisitor
    let otherToken: string

    before(async () => {
      dns = await TestDnsServer.start()
      server = await startTestServer(store.name, { PLINTH_DNS_SERVERS: dns.address })
      owner = new WebVisitor(server)
      await owner.signUp(uniqueEmail('owner'))
      ownerToken = await owner.mintToken('publisher')
      editor = new WebVisitor(server)
      editorEmail = uniqueEmail('editor')
      await editor.signUp(editorEmail)
      other = new WebVisitor(server)
      await other.signUp(uniqueEmail('other'))
      otherToken = await other.mintToken('publisher')
    })
    after(async () => {
      await server?.close()
      await dns?.close()
    })

    async function publishSite(name: string, token = ownerToken) {
      const { websiteId, slug } = await createSite(server, { owner: { token }, name, files: bundle(name) })
      return { id: websiteId, slug }
    }
    const pageOf = (siteId: string) => `/dashboard/sites/${siteId}/domains`
    const ask = async (domain: string) => (await server.api('GET', `/tls/ask?domain=${encodeURIComponent(domain)}`)).status

    const addDomain = (visitor: WebVisitor, siteId: string, domain: string) => visitor.submit(pageOf(siteId), pageOf(siteId), { domain })
    async function verified(siteId: string, domain: string) {
      const page = await owner.get(pageOf(siteId))
      dns.txt.set(`_plinth-challenge.${domain}`, [[challengeOf(page.text, domain)]])
      const done = await owner.post(`${pageOf(siteId)}/verify`, { domain })
      assert.equal(done.status, 303)
    }

    test('the owner adds a domain, sees the TXT record, and verifies it once the record holds the value', async () => {
      const site = await publishSite('Domain Shop')
      const sitePage = await owner.get(`/dashboard/sites/${site.id}`)
      assert.match(sitePage.text, new RegExp(`<a href="/dashboard/sites/${site.id}/domains">Manage custom domains</a>`))

      const domain = domainName('shop')
      const added = await addDomain(owner, site.id, `  ${domain.toUpperCase()}. `)
      assert.equal(added.status, 303, 'typed in capitals with a trailing dot: stored in one spelling')
      const page = await owner.get(added.headers.get('location')!)
      assert.match(page.text, /The domain was added\. Create its TXT record, then verify it\./)
      assert.match(page.text, /pending: waiting for its TXT record/)
      assert.match(page.text, /<code>TXT<\/code>/)
      const challenge = challengeOf(page.text, domain)
      assert.equal(await ask(domain), 404, 'a pending domain gets no certificate')

      const missing = await owner.post(`${pageOf(site.id)}/verify`, { domain })
      assert.equal(missing.status, 422)
      assert.match(alertText(missing.text) ?? '', new RegExp(`No DNS record named _plinth-challenge\\.${domain.replace(/\./g, '\\.')} exists yet`))
      assert.ok(dns.asked.includes(`_plinth-challenge.${domain}`), 'the DNS server of PLINTH_DNS_SERVERS was asked')

      dns.txt.set(`_plinth-challenge.${domain}`, [['plinth-verify=not-this-one']])
      const wrong = await owner.post(`${pageOf(site.id)}/verify`, { domain })
      assert.equal(wrong.status, 422)
      assert.match(alertText(wrong.text) ?? '', /holds &#34;plinth-verify=not-this-one&#34;, not the value shown here/)
      assert.match((await owner.get(pageOf(site.id))).text, /Last checked [0-9-]+ [0-9:]+ UTC: The TXT record/, 'the last failure is kept with the domain')
      assert.equal(await ask(domain), 404)

      // Long values are split into chunks by some providers: the value is the chunks joined.
      dns.txt.set(`_plinth-challenge.${domain}`, [['v=something-else'], [challenge.slice(0, 17), challenge.slice(17)]])
      const done = await owner.post(`${pageOf(site.id)}/verify`, { domain })
      assert.equal(done.status, 303)
      const after = await owner.get(done.headers.get('location')!)
      assert.match(after.text, /The domain is verified/)
      assert.match(after.text, /<strong class="badge">verified<\/strong>/)
      assert.match(after.text, new RegExp(`<a href="http://${domain.replace(/\./g, '\\.')}:8080/">`), 'its address, on the port sites are served on')
      assert.doesNotMatch(after.text, />Verify<span/, 'nothing left to verify')
      assert.equal(await ask(domain), 200)
      assert.equal(await ask(`${domain.toUpperCase()}.`), 200, 'the question is asked in any case, with a trailing dot')
      assert.deepEqual(await server.server.services.servedDomains.findServed(domain), { websiteId: site.id, slug: site.slug })
    })

    test('the TLS question answers 200 only for verified domains and live site addresses, 400 for garbage', async () => {
      const site = await publishSite('Tls Ask Site')
      assert.equal(await ask(`${site.slug}.plinth.test`), 200, 'a live site address')
      assert.equal(await ask(`${site.slug}.${SITE_DOMAIN}`), 200, '{slug}.{site_domain}, port and all')
      assert.equal(await ask(`no-such-site.${SITE_DOMAIN}`), 404)
      assert.equal(await ask(`${site.slug}.plinth.test:port`), 400, 'a port is digits')
      assert.equal(await ask(`${site.slug}--v1.plinth.test`), 404, 'previews are covered by the wildcard certificate')
      assert.equal(await ask('no-such-site.plinth.test'), 404)
      assert.equal(await ask('a.b.plinth.test'), 404)
      assert.equal(await ask('plinth.test'), 404)
      assert.equal(await ask('api.plinth.test'), 404)
      assert.equal(await ask(domainName('unknown')), 404)
      assert.equal(await ask('192.0.2.1'), 404)
      for (const garbage of ['', 'exa mple.com', 'a..b', '<script>', `${'a'.repeat(64)}.com`]) assert.equal(await ask(garbage), 400, garbage)
      const missing = await server.api('GET', '/tls/ask')
      assert.equal(missing.status, 400)
      assert.equal(missing.body.error.code, 'BAD_REQUEST')
      assert.equal((await server.api('GET', '/tls/ask?domain=a.example.com&domain=b.example.com')).status, 400)
      const yes = await server.api('GET', `/tls/ask?domain=${site.slug}.plinth.test`)
      assert.equal(yes.text, '', 'an empty answer')
      assert.equal(yes.headers.get('cache-control'), 'no-store')
      const openapi = await server.api('GET', '/openapi.json')
      assert.equal(openapi.body.paths['/tls/ask'], undefined, 'not part of the API document')
    })

    test('a domain belongs to one site: another owner cannot take it, pending or verified, nor learn whose it is', async () => {
      const site = await publishSite('First Holder')
      const theirs = await publishSite('Second Holder', otherToken)
      const domain = domainName('held')
      assert.equal((await addDomain(owner, site.id, domain)).status, 303)

      const taken = await addDomain(other, theirs.id, domain)
      assert.equal(taken.status, 409)
      const message = alertText(taken.text) ?? ''
      assert.match(message, new RegExp(`${domain.replace(/\./g, '\\.')} is added to another site already`))
      for (const secret of [site.id, site.slug, 'First Holder']) assert.ok(!taken.text.includes(secret), `the page does not name ${secret}`)

      await verified(site.id, domain)
      assert.equal((await addDomain(other, theirs.id, domain)).status, 409)
      assert.equal((await addDomain(owner, site.id, domain)).status, 422, 'the same site adding it twice')
    })

    test('a claim never verified is freed after a week for the next site that adds the domain', async () => {
      const site = await publishSite('Parked Claim')
      const theirs = await publishSite('Real Owner', otherToken)
      const domain = domainName('parked')
      assert.equal((await addDomain(owner, site.id, domain)).status, 303)
      const eightDaysAgo = new Date(Date.now() - 8 * 24 * 60 * 60 * 1000).toISOString()
      await server.server.db.kysely.updateTable('custom_domains').set({ created_at: eightDaysAgo }).where('domain', '=', domain).execute()
      assert.equal((await addDomain(other, theirs.id, domain)).status, 303)
      const page = await owner.get(pageOf(site.id))
      assert.ok(!page.text.includes(`<strong>${domain}</strong>`), 'gone from the first site')
    })

    test('editors see the domains but cannot add, verify or remove one; strangers see nothing', async () => {
      const site = await publishSite('Edited Domains')
      const domain = domainName('team')
      assert.equal((await addDomain(owner, site.id, domain)).status, 303)
      assert.equal((await owner.submit(`/dashboard/sites/${site.id}`, `/dashboard/sites/${site.id}/editors`, { email: editorEmail })).status, 303)

      const sitePage = await editor.get(`/dashboard/sites/${site.id}`)
      assert.match(sitePage.text, /See custom domains/)
      const page = await editor.get(pageOf(site.id))
      assert.equal(page.status, 200)
      assert.match(page.text, new RegExp(`<strong>${domain.replace(/\./g, '\\.')}</strong>`))
      assert.match(page.text, /Only the site's owner adds, verifies and removes domains/)
      assert.doesNotMatch(page.text, /Add domain|>Verify<|>Remove</)
      for (const [action, fields] of [
        ['', { domain: domainName('editor') }],
        ['/verify', { domain }],
        ['/remove', { domain }],
      ] as const) {
        const refused = await editor.post(`${pageOf(site.id)}${action}`, fields)
        assert.equal(refused.status, 403, action || 'add')
        assert.match(refused.text, /Only the site&#39;s owner can/)
      }
      assert.equal((await other.get(pageOf(site.id))).status, 404, 'not shared with them')
      assert.equal((await other.post(`${pageOf(site.id)}/remove`, { domain })).status, 404)
      assert.match((await owner.get(pageOf(site.id))).text, new RegExp(`<strong>${domain.replace(/\./g, '\\.')}</strong>`), 'still there')
    })

    test('a verified domain serves the live site as its own address does: files, rules, entry pages and the password', async () => {
      const files = [
        ...bundle('Own Domain Home'),
        { path: '_redirects', content: '/old /new.html 301\n' },
        { path: 'new.html', content: '<!doctype html><title>n</title><p>New page</p>' },
      ]
      const created = await createSite(server, { owner: { token: ownerToken }, name: 'Own Domain', files })
      const site = { id: created.websiteId, slug: created.slug }
      const domain = domainName('own')
      const onDomain = (path: string, headers: Record<string, string> = {}) => viaHost(server, domain, path, headers)
      // An unknown host is answered by Plinth's own site, never by a published one.
      assert.doesNotMatch((await onDomain('/')).body, /Own Domain Home/, 'not served before it is verified')

      assert.equal((await addDomain(owner, site.id, domain)).status, 303)
      await verified(site.id, domain)
      const home = await onDomain('/')
      assert.equal(home.status, 200)
      assert.match(home.body, /Own Domain Home/)
      assert.match(String(home.headers['content-security-policy']), /script-src 'self'/)
      const moved = await onDomain('/old')
      assert.equal(moved.status, 301)
      assert.equal(moved.headers.location, '/new.html')
      assert.equal((await onDomain('/', { host: `${domain.toUpperCase()}:8443` })).status, 200, 'case and port variants of the host are the same site')

      const v2 = await server.api('POST', `/v1/websites/${site.id}/versions`, { token: ownerToken, body: { files: bundle('Own Domain v2') } })
      assert.equal(v2.status, 201)
      assert.match((await onDomain('/')).body, /Own Domain v2/, 'the live version, at once')

      assert.equal((await server.api('PUT', `/v1/websites/${site.id}/password`, { token: ownerToken, body: { password: 'domain secret' } })).status, 204)
      const locked = await onDomain('/')
      assert.equal(locked.status, 401)
      assert.doesNotMatch(locked.body, /Own Domain v2/)

      assert.equal((await owner.post(`${pageOf(site.id)}/remove`, { domain })).status, 303)
      const after = await onDomain('/')
      assert.notEqual(after.status, 401, 'no longer a site host')
      assert.doesNotMatch(after.body, /Own Domain/)
    })

    test('removing a verified domain stops it at once and frees it', async () => {
      const site = await publishSite('Removed Domain')
      const domain = domainName('gone')
      assert.equal((await addDomain(owner, site.id, domain)).status, 303)
      await verified(site.id, domain)
      assert.equal(await ask(domain), 200)

      const removed = await owner.post(`${pageOf(site.id)}/remove`, { domain })
      assert.equal(removed.status, 303)
      const page = await owner.get(removed.headers.get('location')!)
      assert.match(page.text, /The domain was removed/)
      assert.match(page.text, /This site has no custom domain\./)
      assert.equal(await ask(domain), 404)
      assert.equal(await server.server.services.servedDomains.findServed(domain), null)
      assert.equal((await owner.post(`${pageOf(site.id)}/remove`, { domain })).status, 404, 'removed already')

      const theirs = await publishSite('Takes It Over', otherToken)
      assert.equal((await addDomain(other, theirs.id, domain)).status, 303)
    })

    test('deleting a site takes its domains with it', async () => {
      const site = await publishSite('Deleted With Domain')
      const domain = domainName('deleted')
      assert.equal((await addDomain(owner, site.id, domain)).status, 303)
      await verified(site.id, domain)
      assert.equal((await owner.submit(`/dashboard/sites/${site.id}`, `/dashboard/sites/${site.id}/delete`, { confirmSlug: site.slug })).status, 303)
      assert.equal(await ask(domain), 404)
      assert.equal(await ask(`${site.slug}.plinth.test`), 404)
    })

    test('invalid domains are refused with what is wrong, and a site has at most 10', async () => {
      const site = await publishSite('Invalid Domains')
      const refusals: Array<[string, RegExp]> = [
        ['192.0.2.7', /An IP address cannot be a custom domain/],
        ['shop.plinth.test', /Names under plinth\.test are this Plinth&#39;s own site addresses/],
        ['api.plinth.test', /api\.plinth\.test is this Plinth&#39;s own address/],
        [`${'x'.repeat(64)}.example.com`, /Each part of a domain name is at most 63 characters/],
        ['https://www.example.com/', /no https:\/\/ and no path/],
        ['localhost', /localhost names only ever reach your own machine/],
        ['nodot', /at least two parts/],
      ]
      for (const [input, message] of refusals) {
        const refused = await addDomain(owner, site.id, input)
        assert.equal(refused.status, 422, input)
        assert.match(alertText(refused.text) ?? '', message, input)
        assert.match(refused.text, /aria-invalid="true"/)
      }
      for (let i = 0; i < 10; i++) assert.equal((await addDomain(owner, site.id, domainName(`cap${i}`))).status, 303)
      const over = await addDomain(owner, site.id, domainName('eleventh'))
      assert.equal(over.status, 422)
      assert.match(alertText(over.text) ?? '', /A site has at most 10 custom domains/)
    })

    test('no token reaches custom domains: the dashboard routes ignore bearer tokens, and the API has none', async () => {
      const site = await publishSite('Token Proof')
      const bearer = { authorization: `Bearer ${ownerToken}` }
      const page = await fetch(`${server.url}${pageOf(site.id)}`, { headers: { ...bearer, accept: 'text/html' }, redirect: 'manual' })
      assert.equal(page.status, 303)
      assert.match(page.headers.get('location') ?? '', /^\/sign-in\?next=/)
      const post = await fetch(`${server.url}${pageOf(site.id)}`, {
        method: 'POST',
        headers: { ...bearer, 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
        body: new URLSearchParams({ domain: domainName('token') }).toString(),
        redirect: 'manual',
      })
      assert.equal(post.status, 403, 'refused before any work: a bearer token carries no session and no CSRF token')
      for (const path of [`/v1/websites/${site.id}/domains`, `/v1/websites/${site.id}/custom-domains`]) {
        assert.equal((await server.api('GET', path, { token: ownerToken })).status, 404)
      }
      const listed = await owner.get(pageOf(site.id))
      assert.match(listed.text, /This site has no custom domain\./)
    })

    test('every form needs its CSRF token', async () => {
      const site = await publishSite('Csrf Domains')
      const forged = await owner.submit(pageOf(site.id), pageOf(site.id), { _csrf: null, domain: domainName('forged') })
      assert.equal(forged.status, 403)
      assert.match((await owner.get(pageOf(site.id))).text, /This site has no custom domain\./)
    })
  })
}
