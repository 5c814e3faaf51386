import type { IncomingMessage, ServerResponse } from 'node:http'

/**
 * Counting a site's traffic (implemented by traffic/traffic-counter.ts): the site server tells it
 * of each request from the network to a live site once it knows which site that is; the counter
 * reads the answer (status, type, length) when the response has finished, off the request's path.
 */
export interface SiteTraffic {
  observe(websiteId: string, req: IncomingMessage, res: ServerResponse): void
}
