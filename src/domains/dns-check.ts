/**
 * Asks DNS whether a domain's TXT challenge is in place. The resolver is node's (c-ares), pointed
 * at `PLINTH_DNS_SERVERS` when set, with a short timeout and a bounded number of tries, and the
 * whole question is cut off after a few seconds: the owner is waiting on a page for the answer.
 */
import { lookup, Resolver } from 'node:dns/promises'
import { isIP } from 'node:net'
import { challengeRecordName } from './domain-names.ts'
import { clipped } from '../core/text.ts'

/** Whether the challenge was found, or why not in words for the domain's owner; `unreachable` when DNS could not be asked. */
export type ChallengeCheck = { found: true } | { found: false; problem: string; unreachable: boolean }

/** Asks whether the TXT record of a domain's challenge holds the expected value. */
export interface ChallengeChecker {
  check(domain: string, challenge: string): Promise<ChallengeCheck>
}

export interface DnsCheckOptions {
  /** `host:port` entries (config.dnsServers), a host an address or a name; empty: the system's resolver. */
  servers: readonly string[]
  /** The first try's timeout per server; c-ares doubles it for each retry. */
  timeoutMs: number
  /** Tries per server. */
  tries: number
  /** The most the whole question may take, whatever the servers do. */
  deadlineMs: number
}

/** How a server asks: 1.5 s for the first try, two tries a server, 8 s at most in all. */
export const DNS_CHECK_TIMING = { timeoutMs: 1500, tries: 2, deadlineMs: 8000 } satisfies Omit<DnsCheckOptions, 'servers'>

/** Values found that are shown back to the owner, each shortened. */
const SHOWN_VALUES = 3
const SHOWN_VALUE_CHARS = 80

/** Error codes of node's resolver that mean "the DNS could not be asked", not "the answer is no". */
const UNREACHABLE = new Set([
  'ETIMEOUT',
  'ECONNREFUSED',
  'ESERVFAIL',
  'EREFUSED',
  'ECANCELLED',
  'EBADRESP',
  'ECONNRESET',
  'EFORMERR',
  'ENOTIMP',
  'EDEADLINE',
  'ENOSERVER',
])

export class DnsChallengeChecker implements ChallengeChecker {
  constructor(private readonly options: DnsCheckOptions) {}

  async check(domain: string, challenge: string): Promise<ChallengeCheck> {
    const name = challengeRecordName(domain)
    let records: string[][]
    try {
      records = await this.resolveTxt(name)
    } catch (error) {
      const code = (error as { code?: string }).code
      return { found: false, problem: describeFailure(name, code), unreachable: code !== undefined && UNREACHABLE.has(code) }
    }
    // A TXT record longer than 255 bytes arrives in chunks, and providers split long values
    // anywhere: the value is the chunks joined. Quotes pasted around the value are forgiven.
    const values = records.map((chunks) =>
      chunks
        .join('')
        .trim()
        .replace(/^"(.*)"$/, '$1'),
    )
    if (values.includes(challenge)) return { found: true }
    if (values.length === 0) return { found: false, problem: describeFailure(name, 'ENODATA'), unreachable: false }
    const shown = values.slice(0, SHOWN_VALUES).map((v) => `"${clipped(v, SHOWN_VALUE_CHARS)}"`)
    const more = values.length > SHOWN_VALUES ? ` and ${values.length - SHOWN_VALUES} more` : ''
    return {
      found: false,
      problem: `The TXT record ${name} holds ${shown.join(', ')}${more}, not the value shown here. Change it to that value, then verify again.`,
      unreachable: false,
    }
  }

  /** One resolver per question: cancelling it ends only this question's queries. The deadline covers finding named servers too. */
  private async resolveTxt(name: string): Promise<string[][]> {
    const resolver = new Resolver({ timeout: this.options.timeoutMs, tries: this.options.tries })
    let timer: NodeJS.Timeout | undefined
    let cutOff = false
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        cutOff = true
        resolver.cancel()
        reject(deadlinePassed())
      }, this.options.deadlineMs)
    })
    const asked = (async () => {
      if (this.options.servers.length) resolver.setServers((await Promise.all(this.options.servers.map(serverAddresses))).flat())
      if (cutOff) throw deadlinePassed()
      return resolver.resolveTxt(name)
    })()
    try {
      return await Promise.race([asked, deadline])
    } finally {
      clearTimeout(timer)
    }
  }
}

const deadlinePassed = () => Object.assign(new Error('DNS deadline passed'), { code: 'EDEADLINE' })

/**
 * A server of PLINTH_DNS_SERVERS as the resolver takes it: an address as it is, a name looked up
 * with the system's resolver now (a container's address may change between checks), every
 * address it has, which the resolver tries in turn; ENOSERVER when it has none.
 */
async function serverAddresses(server: string): Promise<string[]> {
  const at = server.lastIndexOf(':')
  const host = server.slice(0, at)
  const port = server.slice(at)
  if (host.startsWith('[') || isIP(host) !== 0) return [server]
  try {
    const found = await lookup(host, { all: true })
    return found.map(({ address, family }) => (family === 6 ? `[${address}]${port}` : `${address}${port}`))
  } catch {
    throw Object.assign(new Error(`the DNS server ${host} could not be found`), { code: 'ENOSERVER' })
  }
}

function describeFailure(name: string, code: string | undefined): string {
  const wait = 'New records can take a few minutes to appear; verify again then.'
  if (code === 'ENOTFOUND') return `No DNS record named ${name} exists yet. Create the TXT record shown here. ${wait}`
  if (code === 'ENODATA') return `${name} has no TXT record. Create the TXT record shown here. ${wait}`
  if (code === 'ENOSERVER')
    return `The DNS server this instance asks (PLINTH_DNS_SERVERS) could not be found by its name, so ${name} could not be checked. Try again in a minute.`
  if (code !== undefined && UNREACHABLE.has(code)) {
    return `The DNS could not be asked about ${name} (${code === 'EDEADLINE' ? 'no answer in time' : code}), so the record could not be checked. Try again in a minute.`
  }
  return `Looking up ${name} failed (${code ?? 'unknown error'}). Check the record, then verify again.`
}
