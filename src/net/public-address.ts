/**
 * Which IP addresses the server may fetch from on a user's behalf: public unicast only. Anything
 * else could reach the machine itself, its network or a cloud metadata service (SSRF).
 */
import ipaddr from 'ipaddr.js'

/** What ipaddr.js calls the ranges we name in messages, in plain words. */
const RANGE_WORDS: Record<string, string> = {
  unspecified: 'an unspecified address',
  broadcast: 'a broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address (this includes cloud metadata services)',
  loopback: 'a loopback address',
  carrierGradeNat: 'a carrier-grade NAT address',
  private: 'a private address',
  reserved: 'a reserved address',
  uniqueLocal: 'a unique-local (private) IPv6 address',
  ipv4Mapped: 'an IPv4-mapped IPv6 address',
  rfc6145: 'an IPv4-translated IPv6 address',
  rfc6052: 'a local-use NAT64 address',
  '6to4': 'a 6to4 tunnel address',
  teredo: 'a Teredo tunnel address',
  deprecatedSiteLocal: 'a site-local IPv6 address',
}

/** The RFC 6052 well-known NAT64 prefix: the public IPv4 address it embeds decides. */
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96')

/**
 * Why an address may not be fetched from, in words for an error message, or null when it is a
 * public unicast address. IPv4-mapped and NAT64 addresses are judged by the IPv4 address inside;
 * 6to4, Teredo and IPv4-compatible (`::a.b.c.d`) addresses are refused outright, as their
 * tunnels could lead anywhere.
 */
export function addressProblem(address: string): string | null {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6
  try {
    parsed = ipaddr.parse(address.replace(/^\[|\]$/g, ''))
  } catch {
    return 'not an IP address'
  }
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6
    if (v6.isIPv4MappedAddress()) return problemOf(v6.toIPv4Address())
    if (v6.match(NAT64_WELL_KNOWN)) return problemOf(new ipaddr.IPv4(v6.toByteArray().slice(12)))
    const problem = problemOf(v6)
    if (problem === null && v6.parts.slice(0, 6).every((part) => part === 0)) return 'an IPv4-compatible IPv6 address'
    return problem
  }
  return problemOf(parsed)
}

function problemOf(address: ipaddr.IPv4 | ipaddr.IPv6): string | null {
  const range = address.range()
  if (range === 'unicast') return null
  return RANGE_WORDS[range] ?? `a special-purpose address (${range})`
}
