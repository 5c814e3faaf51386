/**
 * The counter and the flush rows, without a server: top lists are bounded, with the rest under
 * `(other)`; referring hosts are read from http(s) URLs only; a flush's rows carry visitor hashes
 * and never an address or a user agent, one row per visitor however often they came; the same
 * visitor under another day's salt is another hash.
 */
import assert from 'node:assert/strict'
import type { IncomingMessage } from 'node:http'
import { describe, test } from 'node:test'
import { addKey, hostOf, MAX_KEYS_PER_HOUR, OTHER_KEY, TrafficCounter } from '../../src/traffic/traffic-counter.ts'
import { incrementsOf } from '../../src/traffic/traffic-flush.ts'
import { CHROME, GOOGLEBOT } from './visits.ts'

const HTML = ['Content-Type', 'text/html; charset=utf-8', 'Content-Length', '120']
const request = (url: string, agent: string, address: string, referer?: string) =>
  ({ method: 'GET', url, headers: { host: 'site.example', 'user-agent': agent, ...(referer ? { referer } : {}) }, address }) as unknown as IncomingMessage

describe('the traffic counter', () => {
  test('keeps a bounded number of keys, counting the rest under (other)', () => {
    const keys = new Map<string, number>()
    for (let i = 0; i < MAX_KEYS_PER_HOUR + 5; i++) addKey(keys, `/p${i}`)
    addKey(keys, '/p0', 2)
    assert.equal(keys.size, MAX_KEYS_PER_HOUR + 1)
    assert.equal(keys.get(OTHER_KEY), 5)
    assert.equal(keys.get('/p0'), 3)
  })

  test('reads the host of http(s) referrers only', () => {
    assert.equal(hostOf('https://News.Example.com:8443/a?b'), 'news.example.com')
    assert.equal(hostOf('http://user:pw@example.org/'), 'example.org')
    assert.equal(hostOf('android-app://com.example'), null)
    assert.equal(hostOf('not a url'), null)
  })

  test('writes visitors as hashes, once each, and a new day’s salt gives new hashes', () => {
    let now = Date.parse('2026-11-28T10:15:00Z')
    const counter = new TrafficCounter({ clientAddress: (req) => (req as unknown as { address: string }).address, now: () => now })
    for (const url of ['/', '/a', '/b']) counter.count('web_1', request(url, CHROME, '198.51.100.7', 'https://ref.example/x'), 200, HTML)
    counter.count('web_1', request('/', GOOGLEBOT, '66.249.66.1'), 200, HTML)
    const day1 = incrementsOf(counter.drain(), () => 'salt-of-day-1')
    assert.equal(day1.visitors.length, 1)
    assert.equal(day1.hours[0]!.page_views, 3)
    assert.equal(day1.hours[0]!.bots, 1)
    assert.equal(day1.hours[0]!.hour, '2026-11-28T10')
    const written = JSON.stringify(day1)
    for (const raw of ['198.51.100.7', '66.249.66.1', 'Mozilla', 'Googlebot']) assert.ok(!written.includes(raw), `${raw} is not in what a flush writes`)

    now += 86_400_000
    counter.count('web_1', request('/', CHROME, '198.51.100.7'), 200, HTML)
    const day2 = incrementsOf(counter.drain(), () => 'salt-of-day-2')
    assert.notEqual(day2.visitors[0]!.visitor, day1.visitors[0]!.visitor)
    assert.equal(day2.hours[0]!.hour, '2026-11-29T10')
  })
})
