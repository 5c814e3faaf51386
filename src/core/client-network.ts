import ipaddr from 'ipaddr.js'

/**
 * The network a client address stands for when its attempts are counted (sign-ins, site
 * passwords, form posts, OAuth registrations): an IPv4 address itself, an IPv6 address its /64.
 * One subscriber holds a whole /64 and may take any address in it, so a throttle per IPv6 address
 * would let one client guess without end. An IPv4-mapped IPv6 address is its IPv4 address; text
 * that is no address (a test's name for a client) is itself.
 */
export function clientNetwork(address: string): string {
  if (!ipaddr.isValid(address)) return address
  const parsed = ipaddr.process(address)
  if (parsed.kind() === 'ipv4') return parsed.toString()
  const prefix = (parsed as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16))
  return `${prefix.join(':')}::/64`
}
