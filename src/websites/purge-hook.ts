/**
 * Tells a CDN in front of Plinth that a site's host changed, so it can purge what it cached
 * (`PLINTH_PURGE_URL`). After a version goes live (a publish that promotes, a promotion, a
 * rollback), after a deletion, and when a site password is set or removed, Plinth POSTs to the URL:
 *
 *   {"event": "promote" | "delete" | "protect", "websiteId": "...", "hosts": ["slug.sites.example.com"],
 *    "urls": ["https://slug.sites.example.com/"]}
 *
 * The call never holds the request that caused it: it runs after the answer is decided, is given
 * up after 5 s, and is tried three times in all (after 1 s and 4 s) on a network error or a 5xx;
 * a failure is logged. Pages are served with `must-revalidate` anyway (docs/guide/self-hosting.md,
 * "Caching"), so a missed purge costs a CDN one revalidation, not stale pages.
 */
import { pageUrlFor } from '../core/site-address.ts'

export type PurgeEvent = 'promote' | 'delete' | 'protect'

export interface PurgeHook {
  siteChanged(event: PurgeEvent, site: { id: string; slug: string }): void
}

export const NO_PURGE: PurgeHook = { siteChanged: () => {} }

const TIMEOUT_MS = 5_000
const RETRY_DELAYS_MS = [1_000, 4_000]

export function createPurgeHook(
  url: string | null,
  config: { siteScheme: string; siteDomain: string },
  log: { warn(obj: unknown, msg?: string): void },
): PurgeHook {
  if (url === null) return NO_PURGE
  const post = async (body: string): Promise<void> => {
    for (let attempt = 0; ; attempt++) {
      let failure: string
      try {
        const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal: AbortSignal.timeout(TIMEOUT_MS) })
        await res.body?.cancel()
        if (res.ok) return
        failure = `HTTP ${res.status}`
        if (res.status < 500) break
      } catch (error) {
        failure = (error as Error).message
      }
      if (attempt >= RETRY_DELAYS_MS.length) {
        log.warn({ purgeUrl: url, failure }, 'the purge hook did not answer; the CDN revalidates instead')
        return
      }
      await new Promise((resolve) => setTimeout(resolve, RETRY_DELAYS_MS[attempt]))
    }
    log.warn({ purgeUrl: url }, 'the purge hook refused the call; the CDN revalidates instead')
  }
  return {
    siteChanged(event, site) {
      const pageUrl = pageUrlFor(config, site.slug)
      // Every failure is caught and logged inside: the call is left to run on its own.
      void post(JSON.stringify({ event, websiteId: site.id, hosts: [new URL(pageUrl).host], urls: [pageUrl] }))
    },
  }
}
