/**
 * What a custom domain may be, and the one spelling it is stored and looked up in: lowercase
 * ASCII (punycode for international names), without a trailing dot. A name typed with a trailing
 * dot is the same name written as absolute, so it is accepted and the dot dropped.
 */
import { isIP } from 'node:net'
import { domainToASCII } from 'node:url'
import type { Config } from '../config.ts'
import { DOMAIN_LABEL_MAX, DOMAIN_MAX } from '../core/limits.ts'
import { hostName } from '../serving/site-host.ts'

/** The hosts a custom domain may never be: Plinth's own. */
export interface DomainRules {
  /** The site domain's host name (no port): neither it nor a name under it is a custom domain. */
  siteDomain: string
  /** The API and web site host names. */
  serviceHosts: readonly string[]
  /** The port published sites are reached on when site_domain names one (a local set-up), else null. */
  sitePort: string | null
}

export function domainRulesOf(config: Pick<Config, 'siteDomain' | 'baseUrl' | 'siteUrl'>): DomainRules {
  const port = /:(\d+)$/.exec(config.siteDomain)?.[1] ?? null
  return {
    siteDomain: hostName(config.siteDomain) ?? config.siteDomain,
    serviceHosts: [new URL(config.baseUrl).hostname, new URL(config.siteUrl).hostname],
    sitePort: port,
  }
}

const LABEL = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/
/** A last label that WHATWG host parsing reads as a number: the name would be an IPv4 address. */
const NUMERIC_LABEL = /^(?:0x[0-9a-f]*|[0-9]+)$/

export type DomainCheck = { domain: string; problem?: undefined } | { domain?: undefined; problem: string }

/** The stored spelling of a domain typed by a person, or why it cannot be a custom domain (a sentence). */
export function checkDomain(input: string, rules: DomainRules): DomainCheck {
  const typed = input.trim().toLowerCase()
  if (typed === '') return { problem: 'Enter a domain name, such as www.example.com.' }
  if (/^[a-z][a-z0-9+.-]*:\/\//.test(typed) || typed.includes('/')) {
    return { problem: 'Enter the domain name alone, such as www.example.com: no https:// and no path.' }
  }
  if (typed.startsWith('[') || isIP(typed) !== 0) return { problem: 'An IP address cannot be a custom domain: enter a domain name, such as www.example.com.' }
  if (typed.includes(':')) return { problem: 'Enter the domain name without a port.' }
  if (/[\s@%?#\\]/.test(typed)) return { problem: 'A domain name has letters, digits, hyphens and dots only.' }
  const name = typed.endsWith('.') ? typed.slice(0, -1) : typed
  const labels = name.split('.')
  const topLabel = name.slice(name.lastIndexOf('.') + 1)
  if (NUMERIC_LABEL.test(topLabel)) {
    return { problem: 'An IP address cannot be a custom domain: enter a domain name, such as www.example.com.' }
  }
  if (name === 'localhost' || name.endsWith('.localhost')) return { problem: 'localhost names only ever reach your own machine: enter a public domain name.' }
  if (labels.some((label) => label === '')) return { problem: 'A domain name has no empty parts: check for two dots in a row, or a dot at the start.' }
  if (labels.length < 2) return { problem: `A custom domain has at least two parts, such as example.com; "${name}" has one.` }

  const ascii = domainToASCII(name)
  if (ascii === '') return { problem: 'This is not a valid domain name: use letters, digits and hyphens between the dots.' }
  if (isIP(ascii) !== 0) return { problem: 'An IP address cannot be a custom domain: enter a domain name, such as www.example.com.' }
  for (const label of ascii.split('.')) {
    if (label.length > DOMAIN_LABEL_MAX)
      return { problem: `Each part of a domain name is at most ${DOMAIN_LABEL_MAX} characters; "${label}" has ${label.length}.` }
    if (!LABEL.test(label)) {
      return /^-|-$/.test(label)
        ? { problem: `A part of a domain name cannot start or end with a hyphen: "${label}".` }
        : { problem: `A part of a domain name has letters, digits and hyphens only: "${label}".` }
    }
  }
  if (ascii.length > DOMAIN_MAX) return { problem: `A domain name is at most ${DOMAIN_MAX} characters; this one has ${ascii.length}.` }

  if (rules.serviceHosts.includes(ascii)) return { problem: `${ascii} is this Plinth's own address.` }
  if (ascii === rules.siteDomain || ascii.endsWith(`.${rules.siteDomain}`)) {
    return { problem: `Names under ${rules.siteDomain} are this Plinth's own site addresses, not custom domains.` }
  }
  return { domain: ascii }
}

/**
 * The host name a TLS or serving question asks about, as a Host value gives it (hostName: lowercased,
 * a port and a trailing dot set aside, since a certificate names no port); null when it cannot be a host name at all.
 */
export function requestedHost(value: string): string | null {
  const name = hostName(value)
  if (name === null || name.length > DOMAIN_MAX || !/^[a-z0-9.-]+$/.test(name)) return null
  return name.split('.').every((label) => label !== '' && label.length <= DOMAIN_LABEL_MAX) ? name : null
}

/** The record a domain's owner creates to prove control of it. */
export const challengeRecordName = (domain: string): string => `_plinth-challenge.${domain}`

/** The address a verified domain serves the site at. */
export const domainUrl = (domain: string, scheme: string, rules: DomainRules): string => `${scheme}://${domain}${rules.sitePort ? `:${rules.sitePort}` : ''}/`
