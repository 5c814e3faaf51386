/**
 * Which URLs a webhook may be sent to: https, or http to a host the operator allows
 * (PLINTH_FETCH_ALLOW_HOSTS); no credentials in it, no fragment; an IP address only when public or
 * allowed. A name is checked where it matters, when each delivery connects (net/safe-fetch.ts):
 * a name that resolves to a private address then fails the attempt.
 */
import net from 'node:net'
import { WEBHOOK_URL_MAX_CHARS } from '../core/limits.ts'
import { isHostAllowed, normalizeHostSet } from '../net/allow-hosts.ts'
import { addressProblem } from '../net/public-address.ts'

/** What is wrong with `raw` as a webhook URL, or null when it may be used. */
export function webhookUrlProblem(raw: string, allowHosts: Iterable<string>): string | null {
  if (raw.length > WEBHOOK_URL_MAX_CHARS) return `must be at most ${WEBHOOK_URL_MAX_CHARS} characters`
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return 'must be an absolute https URL, such as https://example.com/hooks/plinth'
  }
  const allow = normalizeHostSet(allowHosts)
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80
  const allowed = isHostAllowed(allow, url.hostname, port)
  if (url.protocol === 'http:' && !allowed) return 'must use https (http is sent only to hosts the operator allows)'
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must use https'
  if (url.username || url.password) return 'must not carry a user name or password: check the signature instead'
  if (url.hash) return 'must not have a #fragment'
  const literal = url.hostname.replace(/^\[|\]$/g, '')
  if (net.isIP(literal) && !allowed) {
    const problem = addressProblem(literal)
    if (problem) return `must reach a public address: ${literal} is ${problem}`
  }
  return null
}
