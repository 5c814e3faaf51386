/** Site serving: `{slug}.{siteDomain}` and `{slug}--v{n}.{siteDomain}` straight off node:http. */
export { createSiteServer, type SiteServer, type SiteServerOptions } from './site-handler.ts'
export { parseSiteHost, parseSiteLabel, siteLabel, type SiteHost } from './site-host.ts'
export type { ServedFile, ServedVersion, SiteLookup } from './site-lookup.ts'
export {
  SITE_CONTENT_SECURITY_POLICY,
  SITE_SECURITY_HEADERS,
  CACHE_REVALIDATE,
  contentTypeHeader,
} from './security-headers.ts'
