/**
 * Accounts on the web site over real HTTP: sign-up (open and closed), sign-in with throttling
 * per account and per client address, sessions in cookies (their flags on http and https),
 * sign-out here and everywhere, password changes, CSRF and cross-site refusals, and the rule
 * that a session is never a bearer token and a token never opens a session.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { verifyPassword } from '../../src/core/passwords.ts'
import { SIGN_IN_FAILURES_PER_ACCOUNT, SIGN_IN_FAILURES_PER_ADDRESS } from '../../src/core/limits.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'
import { alertText, captured, uniqueEmail, WebVisitor } from '../helpers/web.ts'

const PASSWORD = 'correct horse battery'

/** The session cookie of a visitor on http (no `__Host-` prefix there). */
const SESSION = 'plinth_session'

for (const store of STORES) {
  describe(`web accounts (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    before(async () => {
      server = await startTestServer(store.name)
    })
    after(async () => server?.close())

    test('sign-up opens a session in an HttpOnly, SameSite=Lax cookie and lands on the dashboard', async () => {
      const visitor = new WebVisitor(server)
      const address = uniqueEmail('new')
      const response = await visitor.signUp(address)
      assert.equal(response.status, 303)
      assert.equal(response.headers.get('location'), '/dashboard')
      const cookie = response.setCookies.find((c) => c.startsWith(`${SESSION}=`))
      assert.ok(cookie, 'a session cookie is set')
      assert.match(cookie, /; HttpOnly/)
      assert.match(cookie, /; SameSite=Lax/)
      assert.match(cookie, /; Path=\//)
      assert.doesNotMatch(cookie, /; Secure/, 'not Secure on a plain-http site')
      const dashboard = await visitor.get('/dashboard')
      assert.equal(dashboard.status, 200)
      assert.match(dashboard.text, /<h1>Your sites<\/h1>/)
      assert.match(dashboard.text, /Sign out/)
      assert.equal((await server.server.services.users.findByEmail(address))?.email, address)
    })

    test('sign-up refuses a bad email, a short password and a taken email, and creates nothing', async () => {
      const visitor = new WebVisitor(server)
      const bad = await visitor.submit('/sign-up', '/sign-up', { email: 'not-an-email', password: 'short' })
      assert.equal(bad.status, 422)
      assert.match(bad.text, /Email must be an email address/)
      assert.match(bad.text, /Password must be at least 8 characters/)
      assert.equal(bad.setCookies.filter((c) => c.startsWith(SESSION)).length, 0)

      const taken = uniqueEmail('taken')
      await server.server.services.users.create({ email: taken, password: PASSWORD })
      const again = await visitor.submit('/sign-up', '/sign-up', { email: taken, password: 'another password' })
      assert.equal(again.status, 422)
      assert.equal(visitor.cookies.has(SESSION), false, 'no session for a taken email')
    })

    test('sign-in: wrong password and unknown email get the same answer; the right one opens a session', async () => {
      const address = uniqueEmail('signin')
      await server.server.services.users.create({ email: address, password: PASSWORD })
      const visitor = new WebVisitor(server)
      const wrong = await visitor.signIn(address, 'not the password')
      const unknown = await visitor.signIn(uniqueEmail('nobody'), 'not the password')
      assert.equal(wrong.status, 401)
      assert.equal(unknown.status, 401)
      assert.ok(alertText(wrong.text))
      assert.equal(alertText(wrong.text), alertText(unknown.text), 'no user enumeration: one message for both')
      assert.equal(visitor.cookies.has(SESSION), false)

      const right = await visitor.signIn(address)
      assert.equal(right.status, 303)
      assert.ok(visitor.cookies.has(SESSION))
      assert.equal((await visitor.get('/dashboard')).status, 200)
    })

    test('sign-in goes back to a local `next` path, never to another origin', async () => {
      const address = uniqueEmail('next')
      await server.server.services.users.create({ email: address, password: PASSWORD })
      const visitor = new WebVisitor(server)
      const signedOut = await visitor.get('/dashboard')
      assert.equal(signedOut.status, 303)
      assert.equal(signedOut.headers.get('location'), '/sign-in?next=%2Fdashboard')
      await visitor.get('/sign-in?next=%2Fmcp')
      const back = await visitor.post('/sign-in', { email: address, password: PASSWORD, next: '/mcp' })
      assert.equal(back.headers.get('location'), '/mcp')

      const other = new WebVisitor(server)
      await other.get('/sign-in')
      const offsite = await other.post('/sign-in', { email: address, password: PASSWORD, next: '//evil.example/' })
      assert.equal(offsite.headers.get('location'), '/dashboard')
    })

    test('sign-out ends the session on the server: the old cookie opens nothing', async () => {
      const visitor = new WebVisitor(server)
      await visitor.signUp(uniqueEmail('out'))
      const oldCookie = visitor.cookieHeader()
      await visitor.get('/dashboard')
      const out = await visitor.post('/sign-out', {})
      assert.equal(out.status, 303)
      assert.equal(visitor.cookies.has(SESSION), false, 'the cookie is cleared')
      const replay = await fetch(`${server.url}/dashboard`, { headers: { cookie: oldCookie }, redirect: 'manual' })
      assert.equal(replay.status, 303, 'the ended session is not accepted again')
    })

    test('sign out everywhere ends every session of the account', async () => {
      const address = uniqueEmail('everywhere')
      const first = new WebVisitor(server)
      await first.signUp(address)
      const second = new WebVisitor(server)
      await second.signIn(address)
      assert.equal((await second.get('/dashboard')).status, 200)

      await first.get('/account')
      const response = await first.post('/account/sign-out-everywhere', {})
      assert.equal(response.status, 303)
      assert.equal((await first.get('/dashboard')).status, 303)
      assert.equal((await second.get('/dashboard')).status, 303, 'the other browser is signed out too')
    })

    test('changing the password needs the current one, ends other sessions, keeps this one', async () => {
      const address = uniqueEmail('password')
      const here = new WebVisitor(server)
      await here.signUp(address)
      const elsewhere = new WebVisitor(server)
      await elsewhere.signIn(address)

      const wrong = await here.submit('/account', '/account/password', { currentPassword: 'not it', newPassword: 'a new password' })
      assert.equal(wrong.status, 422)
      assert.match(alertText(wrong.text) ?? '', /current password is not right/)
      const short = await here.submit('/account', '/account/password', { currentPassword: PASSWORD, newPassword: 'short' })
      assert.equal(short.status, 422)
      assert.match(alertText(short.text) ?? '', /at least 8 characters/)

      const changed = await here.submit('/account', '/account/password', { currentPassword: PASSWORD, newPassword: 'a brand new password' })
      assert.equal(changed.status, 303)
      assert.equal((await here.get('/dashboard')).status, 200, 'this session stays')
      assert.equal((await elsewhere.get('/dashboard')).status, 303, 'the other session ended')
      assert.equal((await new WebVisitor(server).signIn(address, PASSWORD)).status, 401)
      assert.equal((await new WebVisitor(server).signIn(address, 'a brand new password')).status, 303)
    })

    test('every form is refused without the CSRF token of its session, and nothing changes', async () => {
      const visitor = new WebVisitor(server)
      await visitor.signUp(uniqueEmail('csrf'))
      const userId = (await server.server.services.users.findByEmail(captured(/<strong>([^<]+@example\.com)<\/strong>/, (await visitor.get('/account')).text)))!
        .id

      const missing = await visitor.post('/mcp/tokens', { _csrf: null, name: 'forged', access: 'both', expires: '0' })
      assert.equal(missing.status, 403)
      assert.match(missing.text, /This form has expired/)
      const forged = await visitor.post('/mcp/tokens', { _csrf: 'not-a-token', name: 'forged', access: 'both', expires: '0' })
      assert.equal(forged.status, 403)

      // A token of another session (here: of a signed-out page) does not work in this one.
      const stranger = new WebVisitor(server)
      await stranger.get('/sign-in')
      const borrowed = await visitor.post('/mcp/tokens', { _csrf: stranger.csrf, name: 'forged', access: 'both', expires: '0' })
      assert.equal(borrowed.status, 403)

      // A form posted from another site is refused by its Origin, whatever it carries.
      await visitor.get('/mcp')
      const crossSite = await visitor.post('/mcp/tokens', { name: 'forged', access: 'both', expires: '0' }, { origin: 'https://evil.example' })
      assert.equal(crossSite.status, 403)
      const fetchSite = await visitor.post('/sign-out', {}, { 'sec-fetch-site': 'cross-site' })
      assert.equal(fetchSite.status, 403)

      assert.equal((await server.server.services.tokens.list(userId)).length, 0, 'no token was created')
      assert.equal((await visitor.get('/dashboard')).status, 200, 'still signed in')

      const signIn = await new WebVisitor(server).post('/sign-in', { _csrf: null, email: 'x@example.com', password: PASSWORD })
      assert.equal(signIn.status, 403, 'sign-in needs its token too')
    })

    test('a session cookie is never accepted on /v1 or /mcp, and a bearer token never opens a page', async () => {
      const visitor = new WebVisitor(server)
      await visitor.signUp(uniqueEmail('cross'))
      const token = await visitor.mintToken('crossing')
      const cookie = visitor.cookieHeader()

      const rest = await fetch(`${server.url}/v1/websites`, { headers: { cookie } })
      assert.equal(rest.status, 401)
      assert.equal((await rest.json()).error.code, 'AUTH_REQUIRED')
      const mcp = await fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      })
      assert.equal(mcp.status, 401)

      const page = await fetch(`${server.url}/dashboard`, { headers: { authorization: `Bearer ${token}` }, redirect: 'manual' })
      assert.equal(page.status, 303, 'the dashboard sends a token holder to sign in')
      const tokenPage = await fetch(`${server.url}/mcp`, { headers: { authorization: `Bearer ${token}`, accept: 'text/html' } })
      const html = await tokenPage.text()
      assert.match(html, /Sign in to create a token/, 'the token page is the signed-out one')
      assert.equal(tokenPage.headers.getSetCookie().filter((c) => c.startsWith(SESSION)).length, 0, 'no session was opened')

      const withToken = await fetch(`${server.url}/v1/websites`, { headers: { authorization: `Bearer ${token}` } })
      assert.equal(withToken.status, 200, 'the token itself works on the API')
    })

    test('the token page mints a token shown once, lists it by hint, and revokes it', async () => {
      const visitor = new WebVisitor(server)
      await visitor.signUp(uniqueEmail('tokens'))
      const signedOut = await new WebVisitor(server).get('/mcp')
      assert.match(signedOut.text, /Sign in to create a token/)

      const page = await visitor.submit('/mcp', '/mcp/tokens', { name: 'Claude', access: 'mcp', expires: '30' })
      assert.equal(page.status, 201)
      assert.equal(page.headers.get('cache-control'), 'no-store')
      const token = captured(/<pre id="token-value"><code>(plinth_[A-Za-z0-9]+)<\/code>/, page.text)
      assert.ok(page.text.includes(`claude mcp add --transport http plinth http://api.plinth.test:8080/mcp --header "Authorization: Bearer ${token}"`))
      assert.match(page.text, /"mcpServers": \{/, 'a Cursor configuration')
      assert.match(page.text, /"type": "http"/, 'a VS Code configuration')
      assert.match(page.text, /curl http:\/\/api\.plinth\.test:8080\/v1\/websites -H/)

      const list = await visitor.get('/mcp')
      assert.ok(!list.text.includes(token), 'the list never shows the token again')
      assert.ok(list.text.includes(`<code>${token.slice(0, 11)}…</code>`), 'it shows its hint')
      assert.match(list.text, /<td[^>]*>Claude<\/td>/)
      assert.match(list.text, /<td data-label="Access">MCP only<\/td>/)

      // MCP-only: refused on REST, accepted on MCP.
      assert.equal((await server.api('GET', '/v1/websites', { token })).status, 403)

      const tokenId = captured(/action="\/mcp\/tokens\/(tok_[A-Za-z0-9]+)\/revoke"/, list.text)
      const revoked = await visitor.post(`/mcp/tokens/${tokenId}/revoke`, {})
      assert.equal(revoked.status, 303)
      const after = await visitor.get('/mcp?revoked=1')
      assert.match(after.text, /<td[^>]*>revoked<\/td>/)
      const call = await server.api('GET', '/v1/websites', { token })
      assert.equal(call.status, 401)
      assert.equal(call.body.error.code, 'AUTH_REQUIRED')
    })

    test('the token form refuses an access or expiry it does not offer, and creates nothing', async () => {
      const visitor = new WebVisitor(server)
      const address = uniqueEmail('badtoken')
      await visitor.signUp(address)
      const userId = (await server.server.services.users.findByEmail(address))!.id
      const access = await visitor.submit('/mcp', '/mcp/tokens', { name: 'x', access: 'admin', expires: '0' })
      assert.equal(access.status, 422)
      const expiry = await visitor.submit('/mcp', '/mcp/tokens', { name: 'x', access: 'both', expires: '100000' })
      assert.equal(expiry.status, 422)
      const name = await visitor.submit('/mcp', '/mcp/tokens', { name: 'x'.repeat(200), access: 'both', expires: '0' })
      assert.equal(name.status, 422)
      assert.equal((await server.server.services.tokens.list(userId)).length, 0)
    })

    test('failed sign-ins are throttled per account, with a 429 page and Retry-After', async () => {
      const address = uniqueEmail('throttle')
      await server.server.services.users.create({ email: address, password: PASSWORD })
      const visitor = new WebVisitor(server)
      for (let i = 0; i < SIGN_IN_FAILURES_PER_ACCOUNT; i++) assert.equal((await visitor.signIn(address, `wrong ${i}`)).status, 401)
      const blocked = await visitor.signIn(address, PASSWORD)
      assert.equal(blocked.status, 429, 'even the right password waits')
      const retry = Number(blocked.headers.get('retry-after'))
      assert.ok(retry > 0 && retry <= 15 * 60, `Retry-After is the wait in seconds: ${retry}`)
      assert.match(blocked.text, /Too many failed sign-ins\. Try again in \d+ minutes?\./)
      assert.equal(visitor.cookies.has(SESSION), false)

      const other = uniqueEmail('unthrottled')
      await server.server.services.users.create({ email: other, password: PASSWORD })
      assert.equal((await new WebVisitor(server).signIn(other)).status, 303, 'another account from the same address still signs in')
    })
  })
}

describe('web accounts: throttling per client address, closed sign-up, https cookies', () => {
  test('failed sign-ins from one address across many accounts are throttled', async () => {
    const server = await startTestServer('sqlite')
    try {
      const visitor = new WebVisitor(server)
      for (let i = 0; i < SIGN_IN_FAILURES_PER_ADDRESS; i++) assert.equal((await visitor.signIn(uniqueEmail(`spray${i}`), 'wrong')).status, 401)
      const address = uniqueEmail('victim')
      await server.server.services.users.create({ email: address, password: PASSWORD })
      const blocked = await visitor.signIn(address)
      assert.equal(blocked.status, 429)
      assert.ok(Number(blocked.headers.get('retry-after')) > 0)
    } finally {
      await server.close()
    }
  })

  test('behind a trusted proxy (PLINTH_TRUST_PROXY) the throttle counts the forwarded client address', async () => {
    const server = await startTestServer('sqlite', { PLINTH_TRUST_PROXY: '127.0.0.1' })
    try {
      const signIn = async (visitor: WebVisitor, address: string, password: string, client: string) => {
        await visitor.get('/sign-in')
        return visitor.post('/sign-in', { email: address, password }, { 'x-forwarded-for': client })
      }
      const guesser = new WebVisitor(server)
      for (let i = 0; i < SIGN_IN_FAILURES_PER_ADDRESS; i++) assert.equal((await signIn(guesser, uniqueEmail(`spray${i}`), 'wrong', '203.0.113.5')).status, 401)
      const address = uniqueEmail('behind-proxy')
      await server.server.services.users.create({ email: address, password: PASSWORD })
      assert.equal((await signIn(guesser, address, PASSWORD, '203.0.113.5')).status, 429, 'the guessing client waits')
      assert.equal((await signIn(new WebVisitor(server), address, PASSWORD, '203.0.113.6')).status, 303, 'everyone else behind the same proxy signs in')
    } finally {
      await server.close()
    }
  })

  test('changing the password is throttled like sign-in, per account and per client address; a throttled change changes nothing', async () => {
    const server = await startTestServer('sqlite', { PLINTH_TRUST_PROXY: '127.0.0.1' })
    try {
      const from = (client: string) => ({ 'x-forwarded-for': client })
      const signedUp = async (client: string) => {
        const visitor = new WebVisitor(server)
        const address = uniqueEmail('changer')
        await visitor.get('/sign-up')
        assert.equal((await visitor.post('/sign-up', { email: address, password: PASSWORD }, from(client))).status, 303)
        return { visitor, address }
      }
      const change = async (visitor: WebVisitor, currentPassword: string, client: string) => {
        await visitor.get('/account')
        return visitor.post('/account/password', { currentPassword, newPassword: 'a brand new password' }, from(client))
      }
      const passwordIs = async (address: string, password: string) =>
        verifyPassword(password, (await server.server.services.users.findByEmail(address))!.password_hash)

      // Per account: wrong current passwords, then even the right one waits.
      const { visitor, address } = await signedUp('203.0.113.1')
      for (let i = 0; i < SIGN_IN_FAILURES_PER_ACCOUNT; i++) assert.equal((await change(visitor, `wrong ${i}`, '203.0.113.1')).status, 422)
      const blocked = await change(visitor, PASSWORD, '203.0.113.2')
      assert.equal(blocked.status, 429, 'the right password waits too, from any address')
      assert.ok(Number(blocked.headers.get('retry-after')) > 0)
      assert.match(blocked.text, /Try again in \d+ minutes?\./)
      assert.equal(await passwordIs(address, PASSWORD), true, 'the password did not change')
      assert.equal(await passwordIs(address, 'a brand new password'), false)
      assert.equal((await new WebVisitor(server).signIn(address)).status, 429, 'the account is throttled for sign-in as well: one count')

      // Per client address: failed sign-ins from an address throttle a password change from it.
      const guesser = new WebVisitor(server)
      for (let i = 0; i < SIGN_IN_FAILURES_PER_ADDRESS; i++) {
        await guesser.get('/sign-in')
        assert.equal((await guesser.post('/sign-in', { email: uniqueEmail(`spray${i}`), password: 'wrong' }, from('203.0.113.9'))).status, 401)
      }
      const other = await signedUp('203.0.113.3')
      assert.equal((await change(other.visitor, PASSWORD, '203.0.113.9')).status, 429)
      assert.equal(await passwordIs(other.address, PASSWORD), true, 'the password did not change')
      assert.equal((await change(other.visitor, PASSWORD, '203.0.113.3')).status, 303, 'from its own address the change goes through')
      assert.equal(await passwordIs(other.address, 'a brand new password'), true)
    } finally {
      await server.close()
    }
  })

  test('PLINTH_SIGNUP=closed closes the sign-up page and form; the admin still creates users', async () => {
    const server = await startTestServer('sqlite', { PLINTH_SIGNUP: 'closed' })
    try {
      const visitor = new WebVisitor(server)
      const page = await visitor.get('/sign-up')
      assert.equal(page.status, 403)
      assert.match(page.text, /Sign-up is closed/)
      assert.doesNotMatch((await visitor.get('/sign-in')).text, /href="\/sign-up/, 'no sign-up link')
      const address = uniqueEmail('closed')
      const post = await visitor.post('/sign-up', { email: address, password: PASSWORD })
      assert.equal(post.status, 403)
      assert.equal(await server.server.services.users.findByEmail(address), undefined, 'no account was created')
      await server.server.services.users.create({ email: address, password: PASSWORD })
      assert.equal((await new WebVisitor(server).signIn(address)).status, 303)
    } finally {
      await server.close()
    }
  })

  test('on an https site the cookies are Secure and __Host- prefixed', async () => {
    const server = await startTestServer('sqlite', { PLINTH_SITE_URL: 'https://plinth.test', PLINTH_BASE_URL: 'https://plinth.test' })
    try {
      const visitor = new WebVisitor(server)
      const form = await visitor.get('/sign-up')
      const csrfCookie = form.setCookies.find((c) => c.startsWith('__Host-plinth_csrf='))
      assert.ok(csrfCookie, `the CSRF cookie is __Host- prefixed: ${form.setCookies.join(' | ')}`)
      assert.match(csrfCookie, /; Secure/)
      const response = await visitor.post('/sign-up', { email: uniqueEmail('https'), password: PASSWORD })
      const session = response.setCookies.find((c) => c.startsWith('__Host-plinth_session='))
      assert.ok(session, 'a __Host- session cookie')
      assert.match(session, /; Secure/)
      assert.match(session, /; HttpOnly/)
      assert.match(session, /; SameSite=Lax/)
      assert.match(session, /; Path=\//)
      assert.doesNotMatch(session, /; Domain=/i, 'host-only')
    } finally {
      await server.close()
    }
  })
})
