/** The network a client address is counted as by the throttles: IPv4 itself, IPv6 by its /64. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { clientNetwork } from '../../src/core/client-network.ts'

test('IPv4 is itself; IPv6 is its /64 however it is written; an IPv4-mapped address is its IPv4', () => {
  assert.equal(clientNetwork('203.0.113.5'), '203.0.113.5')
  assert.equal(clientNetwork('2001:db8:5:7::1'), '2001:db8:5:7::/64')
  assert.equal(clientNetwork('2001:0DB8:0005:0007:ffff:1:2:3'), '2001:db8:5:7::/64')
  assert.equal(clientNetwork('::ffff:203.0.113.5'), '203.0.113.5')
  assert.equal(clientNetwork('::1'), '0:0:0:0::/64')
  assert.equal(clientNetwork('unknown'), 'unknown')
})
