/**
 * Websites and their versions as their owners and editors read them: the list of a caller's
 * sites, one site, its versions (all, or a page at a time) and the history with who published
 * each version. Reading changes nothing.
 */
import type { Config } from '../config.ts'
import { mayEverCall } from '../core/capabilities.ts'
import { VERSION_PAGE_DEFAULT, VERSION_PAGE_MAX, WEBSITE_LIST_LIMIT } from '../core/limits.ts'
import type { Principal } from '../core/principal.ts'
import type { VisibleWebsite, WebsiteAccess } from '../db/access.ts'
import type { VersionRow } from '../db/types.ts'
import type { WebsitesRepository } from './websites.repository.ts'
import type {
  Version,
  VersionPage,
  VersionPageQuery,
  Website,
  WebsiteList,
  WebsiteListQuery,
  WebsiteSummary,
  WebsiteWithVersionPage,
} from './websites.schemas.ts'
import { decodeVersionCursor, encodeVersionCursor, livePageUrl, versionView, websiteSummaryView } from './websites.views.ts'

/** A version as the Version view shows it, with who published it. */
export type PublishedVersion = Version & { publishedBy: { name: string | null; email: string } }

/** The window of `usage.formSubmissionsLast30Days`. */
const RECENT_USAGE_MS = 30 * 24 * 60 * 60 * 1000

export interface WebsiteQueriesOptions {
  config: Config
  access: WebsiteAccess
  repo: WebsitesRepository
}

export class WebsiteQueries {
  constructor(private readonly options: WebsiteQueriesOptions) {}

  async list(principal: Principal, query: WebsiteListQuery = {}): Promise<WebsiteList> {
    return (await this.listWithRows(principal, query.slug)).list
  }

  /** The list, each site with the number of its live version (the dashboard's). */
  async listWithLiveVersions(principal: Principal): Promise<WebsiteList & { items: Array<WebsiteSummary & { liveVersion: number | null }> }> {
    const { rows, list } = await this.listWithRows(principal)
    return { ...list, items: list.items.map((item, i) => ({ ...item, liveVersion: rows[i]?.live_version ?? null })) }
  }

  async get(principal: Principal, websiteId: string): Promise<Website> {
    const site = await this.options.access.requireSite(principal, websiteId, 'see')
    const [versions, usage] = await Promise.all([this.versionsOf(site), this.usageOf(site.id)])
    return this.websiteView(site, versions, usage)
  }

  /** A website with one page of its versions, newest first, instead of every version. */
  async getWithVersionPage(principal: Principal, websiteId: string, query: VersionPageQuery): Promise<WebsiteWithVersionPage> {
    const site = await this.options.access.requireSite(principal, websiteId, 'see')
    const page = await this.versionRowsPage(site.id, query)
    // currentVersion describes the served version even when it is on another page.
    const currentId = site.current_version_id
    const current = currentId && !page.rows.some((row) => row.id === currentId) ? await this.options.repo.findVersion(site.id, currentId) : undefined
    const [versions, usage] = await Promise.all([this.versionsOf(site, current ? [...page.rows, current] : page.rows), this.usageOf(site.id)])
    return { ...this.websiteView(site, versions, usage), versions: versions.views.slice(0, page.rows.length), nextCursor: page.nextCursor }
  }

  async listVersions(principal: Principal, websiteId: string): Promise<{ versions: Version[] }> {
    const site = await this.options.access.requireSite(principal, websiteId, 'see')
    return { versions: (await this.versionsOf(site)).views }
  }

  /** One page of a website's versions, newest first; nextCursor gives the next, older page. */
  async listVersionsPage(principal: Principal, websiteId: string, query: VersionPageQuery): Promise<VersionPage> {
    const site = await this.options.access.requireSite(principal, websiteId, 'see')
    const page = await this.versionRowsPage(site.id, query)
    return { versions: (await this.versionsOf(site, page.rows)).views, nextCursor: page.nextCursor }
  }

  /** Every version of a website, newest first, each with who published it (the dashboard's history). */
  async history(principal: Principal, websiteId: string): Promise<PublishedVersion[]> {
    const site = await this.options.access.requireSite(principal, websiteId, 'see')
    const rows = await this.options.repo.listVersionsWithPublisher(site.id)
    const { views } = await this.versionsOf(site, rows)
    return views.map((view, i) => ({ ...view, publishedBy: { name: rows[i]!.publisher_name, email: rows[i]!.publisher_email } }))
  }

  /** The caller's websites with the account limits, and the rows they were made from. */
  private async listWithRows(principal: Principal, slug?: string) {
    const { config, repo } = this.options
    const [rows, count, formSubmissions] = await Promise.all([
      repo.listVisible(principal, WEBSITE_LIST_LIMIT, slug),
      repo.countOwned(principal.userId),
      repo.formSubmissionsOwned(principal.userId),
    ])
    const items = rows.map((row) => websiteSummaryView(config, row))
    // The account's figures are beyond a token limited to some sites; canCreate says what this token may do.
    const websiteLimits =
      principal.sites === null
        ? { count, max: config.maxWebsites, canCreate: count < config.maxWebsites && mayEverCall(principal, 'create-site'), formSubmissions }
        : undefined
    const list: WebsiteList = { items, websites: items, ...(websiteLimits ? { websiteLimits } : {}) }
    return { rows, list }
  }

  /** What a site holds that counts in its usage: its stored form submissions, all and recent. */
  private async usageOf(websiteId: string): Promise<Website['usage']> {
    const since = new Date(Date.now() - RECENT_USAGE_MS).toISOString()
    const counts = await this.options.repo.formSubmissionCounts(websiteId, since)
    return { formSubmissions: counts.total, formSubmissionsLast30Days: counts.recent }
  }

  private websiteView(site: VisibleWebsite, versions: { rows: VersionRow[]; views: Version[] }, usage: Website['usage']): Website {
    const { config } = this.options
    const currentRow = versions.rows.find((row) => row.id === site.current_version_id)
    const current = versions.views.find((v) => v.isCurrent)
    return {
      id: site.id,
      name: site.name,
      slug: site.slug,
      status: site.status,
      role: site.role,
      ...(site.role === 'editor' ? { ownerName: site.owner_name } : {}),
      category: site.category,
      description: site.description,
      ...livePageUrl(config, site),
      ...(site.current_version_id ? { currentVersionId: site.current_version_id } : {}),
      currentVersion: current && currentRow ? { ...current, websiteId: site.id, bytes: Number(currentRow.bytes) } : null,
      freeChangesUsed: Math.max(0, site.last_version_number - 1),
      freeChangesLimit: config.freeChangesLimit,
      passwordProtected: site.password_hash !== null,
      usage,
      versions: versions.views,
      createdAt: site.created_at,
      updatedAt: site.updated_at,
    }
  }

  private async versionRowsPage(websiteId: string, query: VersionPageQuery): Promise<{ rows: VersionRow[]; nextCursor: string | null }> {
    const limit = Math.min(query.limit ?? VERSION_PAGE_DEFAULT, VERSION_PAGE_MAX)
    const before = query.cursor === undefined ? undefined : decodeVersionCursor(query.cursor)
    const rows = await this.options.repo.versionsPage(websiteId, limit + 1, before)
    const page = rows.slice(0, limit)
    const last = page.at(-1)
    return { rows: page, nextCursor: rows.length > limit && last ? encodeVersionCursor(last.number) : null }
  }

  /** The given version rows of a site (every version when none are given) with their views, files and warnings included. */
  private async versionsOf(site: VisibleWebsite, given?: VersionRow[]) {
    const { config, repo } = this.options
    const rows = given ?? (await repo.listVersions(site.id))
    const ids = rows.map((r) => r.id)
    const [files, warnings] = await Promise.all([repo.filesOf(ids), repo.warningsOf(ids)])
    const byVersion = new Map<string, typeof files>()
    for (const file of files) {
      const list = byVersion.get(file.version_id)
      if (list) list.push(file)
      else byVersion.set(file.version_id, [file])
    }
    const views = rows.map((row) => versionView(config, site.slug, row, byVersion.get(row.id) ?? [], site.current_version_id, warnings.get(row.id) ?? []))
    return { rows, views }
  }
}
