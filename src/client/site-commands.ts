/**
 * The client commands that look at and manage a deployed site: `plinth sites`, `plinth versions
 * SITE`, `plinth promote SITE VERSION` and `plinth open SITE`. A site is named by its slug or its
 * id (`web_…`), among the sites the caller owns or edits.
 */
import { type ApiClient, ApiError } from './api-client.ts'
import { openInBrowser } from './browser.ts'

export interface SiteRecord {
  id: string
  slug: string | null
  name: string
  pageUrl?: string
  versions: Array<{ id: string; version: number; createdAt?: string; instruction?: string; files: Array<{ sha256?: string }> }>
  currentVersionId?: string
}

interface SiteSummary {
  id: string
  slug: string | null
  name: string
  role: string
  pageUrl?: string
  updatedAt: string
}

/** A site by id (`web_…`) or by slug, among the sites the caller owns or edits. */
export async function findSite(api: ApiClient, site: string): Promise<SiteRecord> {
  if (site.startsWith('web_')) return api.call<SiteRecord>('GET', `/v1/websites/${encodeURIComponent(site)}`)
  const slug = site.toLowerCase()
  // A server that does not know the slug filter answers its latest sites: the match is made here too.
  const { items } = await api.call<{ items: SiteSummary[] }>('GET', `/v1/websites?slug=${encodeURIComponent(slug)}`)
  const match = items.find((item) => item.slug === slug)
  if (match === undefined) throw new ApiError(404, 'NOT_FOUND', `No site with the slug ${slug} among the sites you own or edit.`)
  return api.call<SiteRecord>('GET', `/v1/websites/${encodeURIComponent(match.id)}`)
}

/** The caller's sites, most recently changed first: the lines to print, or the JSON value. */
export async function listSites(api: ApiClient): Promise<{ lines: string[]; value: SiteSummary[] }> {
  const { items } = await api.call<{ items: SiteSummary[] }>('GET', '/v1/websites')
  const lines =
    items.length === 0
      ? ['No sites yet: plinth deploy DIR makes one.']
      : items.map((s) => `${s.slug ?? s.id}  ${s.role}  ${s.pageUrl ?? '(not live)'}  ${s.name}`)
  return { lines, value: items }
}

/** A site's versions, newest first, the live one marked. */
export async function listVersions(api: ApiClient, siteName: string): Promise<{ lines: string[]; value: SiteRecord['versions'] }> {
  const site = await findSite(api, siteName)
  const lines = site.versions.map(
    (v) =>
      `${v.id === site.currentVersionId ? '*' : ' '} ${v.version}  ${v.createdAt ?? ''}  ${v.id}${v.instruction ? `  ${v.instruction.split('\n')[0]}` : ''}`,
  )
  return { lines, value: site.versions }
}

/** Makes a version live (a review's promotion, or a rollback); the line to print and the version. */
export async function promoteVersion(api: ApiClient, siteName: string, version: string): Promise<{ lines: string[]; value: unknown }> {
  if (!/^([1-9][0-9]{0,8}|job_[A-Za-z0-9]+)$/.test(version))
    throw new ApiError(0, 'USAGE', `VERSION is a version number or id (job_…), not ${JSON.stringify(version)}`)
  const site = await findSite(api, siteName)
  const promoted = await api.call<{ version: number }>('POST', `/v1/websites/${encodeURIComponent(site.id)}/versions/${encodeURIComponent(version)}/promote`)
  return { lines: [`Version ${promoted.version} of ${site.slug ?? site.id} is live: ${site.pageUrl ?? ''}`], value: promoted }
}

/** The live URL of a site, opened in the browser (browser.ts: BROWSER names one; else the system's opener). */
export async function openSite(api: ApiClient, siteName: string, env: NodeJS.ProcessEnv): Promise<{ lines: string[]; value: { url: string } }> {
  const site = await findSite(api, siteName)
  if (site.pageUrl === undefined) throw new ApiError(404, 'NOT_FOUND', `${siteName} has no live version yet`)
  // No browser on this machine (a server, a container): the URL is printed all the same.
  openInBrowser(site.pageUrl, env)
  return { lines: [site.pageUrl], value: { url: site.pageUrl } }
}
