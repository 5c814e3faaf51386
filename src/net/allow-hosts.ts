/**
 * The hosts the safe fetcher may reach although they resolve to private, loopback or other
 * non-public addresses (tests, intranets). An entry is a host name or IP literal, optionally with
 * a port: `images.intranet`, `10.0.0.5`, `[fd00::5]`, `127.0.0.1:8081`. Without a port every port
 * of the host is allowed; with one, only that port. Entries are compared after the URL parser's
 * normalization (lowercase, punycode, IPv4 shorthands expanded, IPv6 compressed), so the same
 * host always matches however it is written. Kept free of network code so config.ts can use it.
 */

const ENTRY = /^(\[[0-9a-fA-F:.]+\]|[^:[\]/\\@?#\s]+)(?::(\d{1,5}))?$/

/** The canonical form of one allow-list entry, or null when it is not a host with an optional port. */
export function normalizeHostEntry(entry: string): string | null {
  const match = ENTRY.exec(entry.trim())
  if (!match) return null
  const [, host, port] = match
  let hostname: string
  try {
    hostname = new URL(`http://${host}/`).hostname
  } catch {
    return null
  }
  if (!hostname) return null
  if (port === undefined) return hostname
  const number = Number(port)
  return number >= 1 && number <= 65535 ? `${hostname}:${number}` : null
}

/** Parses a comma-separated list (the PLINTH_FETCH_ALLOW_HOSTS form); empty items are skipped. */
export function parseHostList(list: string): { hosts: string[]; invalid: string[] } {
  const hosts: string[] = []
  const invalid: string[] = []
  for (const item of list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const normalized = normalizeHostEntry(item)
    if (normalized === null) invalid.push(item)
    else if (!hosts.includes(normalized)) hosts.push(normalized)
  }
  return { hosts, invalid }
}

/** Canonical entries of a set given by a caller, so raw and normalized entries both work. */
export function normalizeHostSet(entries: Iterable<string>): Set<string> {
  const set = new Set<string>()
  for (const entry of entries) {
    const normalized = normalizeHostEntry(entry)
    if (normalized !== null) set.add(normalized)
  }
  return set
}

/**
 * Whether a URL host is allowed. `hostname` is as the URL parser gives it (IPv6 in brackets) or
 * a bare IPv6 address (as a connector sees it); `port` is the effective port.
 */
export function isHostAllowed(allow: ReadonlySet<string>, hostname: string, port: number): boolean {
  if (allow.size === 0) return false
  const host = hostname.includes(':') && !hostname.startsWith('[') ? `[${hostname}]` : hostname.toLowerCase()
  return allow.has(host) || allow.has(`${host}:${port}`)
}
