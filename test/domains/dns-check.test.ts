/**
 * The TXT challenge check against a DNS server on loopback: chunks joined, each failure told apart
 * (no such name, no TXT record, another value, DNS not answering).
 */
import assert from 'node:assert/strict'
import dgram from 'node:dgram'
import { Resolver } from 'node:dns/promises'
import { after, before, describe, test } from 'node:test'
import { loadConfig } from '../../src/config.ts'
import { DNS_CHECK_TIMING, DnsChallengeChecker } from '../../src/domains/dns-check.ts'
import { TestDnsServer } from './dns-server.ts'

const CHALLENGE = 'plinth-verify=AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_'

describe('DNS challenge check', () => {
  let dns: TestDnsServer
  let checker: DnsChallengeChecker

  before(async () => {
    dns = await TestDnsServer.start()
    checker = new DnsChallengeChecker({ servers: [dns.address], ...DNS_CHECK_TIMING })
  })
  after(() => dns?.close())

  test('a TXT record split in chunks is joined before it is compared', async () => {
    dns.txt.set('_plinth-challenge.chunks.example', [['v=spf1 -all'], [CHALLENGE.slice(0, 20), CHALLENGE.slice(20)]])
    const raw = new Resolver()
    raw.setServers([dns.address])
    assert.deepEqual(
      await raw.resolveTxt('_plinth-challenge.chunks.example'),
      [['v=spf1 -all'], [CHALLENGE.slice(0, 20), CHALLENGE.slice(20)]],
      'sent as two chunks',
    )
    assert.deepEqual(await checker.check('chunks.example', CHALLENGE), { found: true })
  })

  test('quotes pasted around the value are forgiven', async () => {
    dns.txt.set('_plinth-challenge.quoted.example', [[`"${CHALLENGE}"`]])
    assert.deepEqual(await checker.check('quoted.example', CHALLENGE), { found: true })
  })

  test('a name that does not exist, a name without TXT and a wrong value are told apart', async () => {
    const missing = await checker.check('missing.example', CHALLENGE)
    assert.equal(missing.found, false)
    assert.match(!missing.found ? missing.problem : '', /No DNS record named _plinth-challenge\.missing\.example exists/)
    assert.equal(!missing.found && missing.unreachable, false)

    dns.withoutTxt.add('_plinth-challenge.empty.example')
    const empty = await checker.check('empty.example', CHALLENGE)
    assert.match(!empty.found ? empty.problem : '', /_plinth-challenge\.empty\.example has no TXT record/)

    dns.txt.set('_plinth-challenge.wrong.example', [['plinth-verify=someone-else']])
    const wrong = await checker.check('wrong.example', CHALLENGE)
    assert.match(!wrong.found ? wrong.problem : '', /holds "plinth-verify=someone-else", not the value shown here/)
  })

  test('a DNS server that does not answer is reported as unreachable, within the deadline', async () => {
    // A socket that reads queries and never answers.
    const silent = dgram.createSocket('udp4')
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve))
    try {
      const port = silent.address().port
      const slow = new DnsChallengeChecker({ servers: [`127.0.0.1:${port}`], timeoutMs: 100, tries: 2, deadlineMs: 2000 })
      const started = Date.now()
      const result = await slow.check('silent.example', CHALLENGE)
      assert.equal(result.found, false)
      assert.equal(!result.found && result.unreachable, true)
      assert.match(!result.found ? result.problem : '', /The DNS could not be asked about _plinth-challenge\.silent\.example/)
      assert.ok(Date.now() - started < 2500, 'bounded by the timeout and the tries')
    } finally {
      silent.close()
    }
  })

  test('the deadline cuts off a question however the resolver is set', async () => {
    const silent = dgram.createSocket('udp4')
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve))
    try {
      const port = silent.address().port
      const stuck = new DnsChallengeChecker({ servers: [`127.0.0.1:${port}`], timeoutMs: 5000, tries: 3, deadlineMs: 300 })
      const started = Date.now()
      const result = await stuck.check('stuck.example', CHALLENGE)
      assert.match(!result.found ? result.problem : '', /no answer in time/)
      assert.ok(Date.now() - started < 1500)
    } finally {
      silent.close()
    }
  })

  test('PLINTH_DNS_SERVERS takes IP addresses and host names with optional ports, IPv6 in brackets; empty is the system resolver', () => {
    assert.deepEqual(loadConfig({}).dnsServers, [])
    assert.deepEqual(
      loadConfig({ PLINTH_DNS_SERVERS: '192.0.2.53, 192.0.2.54:5353,[2001:db8::53]:53, 2001:db8::54, Unbound, dns.example.com:5353' }).dnsServers,
      ['192.0.2.53:53', '192.0.2.54:5353', '[2001:db8::53]:53', '[2001:db8::54]:53', 'unbound:53', 'dns.example.com:5353'],
    )
    for (const bad of [
      'dns_1.example.com',
      '-dns.example.com',
      'dns..example',
      '192.0.2.53:0',
      '192.0.2.53:65536',
      '192.0.2',
      '[192.0.2.53]',
      '[2001:db8::53',
      '[dns.example.com]:53',
    ]) {
      assert.throws(() => loadConfig({ PLINTH_DNS_SERVERS: bad }), /PLINTH_DNS_SERVERS must list IP addresses or host names/, bad)
    }
  })

  test('a server given by name is looked up at each check; a name that does not resolve is reported as unreachable', async () => {
    dns.txt.set('_plinth-challenge.named.example', [[CHALLENGE]])
    const port = dns.address.split(':').at(-1)!
    const named = new DnsChallengeChecker({ servers: loadConfig({ PLINTH_DNS_SERVERS: `localhost:${port}` }).dnsServers, ...DNS_CHECK_TIMING })
    assert.deepEqual(await named.check('named.example', CHALLENGE), { found: true })
    assert.ok(dns.asked.includes('_plinth-challenge.named.example'), 'the server the name stands for was asked')

    const nowhere = new DnsChallengeChecker({ servers: ['no-such-dns-server.invalid:53'], ...DNS_CHECK_TIMING })
    const result = await nowhere.check('named.example', CHALLENGE)
    assert.equal(result.found, false)
    assert.equal(!result.found && result.unreachable, true)
    // Where the system's resolver itself cannot answer in time, the deadline speaks instead.
    assert.match(!result.found ? result.problem : '', /The DNS server this instance asks \(PLINTH_DNS_SERVERS\) could not be found|no answer in time/)
  })
})
