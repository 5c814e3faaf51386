/**
 * Making a stored version the live one: publish-time review and instant rollback alike. Owners
 * and editors may promote; a promotion is not rate limited.
 */
import type { Config } from '../config.ts'
import { AppError } from '../core/errors.ts'
import { nowIso } from '../core/ids.ts'
import type { Principal } from '../core/principal.ts'
import { pageUrlFor } from '../core/site-address.ts'
import { quoted } from '../core/text.ts'
import type { WebsiteAccess } from '../db/access.ts'
import { collectionOwning, reservedPathsOf } from '../publishing/reserved-paths.ts'
import type { SiteEvents } from '../serving/site-events.ts'
import type { WebhookEvents } from '../webhooks/webhook-events.ts'
import type { PurgeHook } from './purge-hook.ts'
import { requireVersion, type VersionRef } from './version-refs.ts'
import type { CollectionNames } from './website-publishing.ts'
import type { WebsitesRepository } from './websites.repository.ts'
import type { Version } from './websites.schemas.ts'
import { versionView } from './websites.views.ts'

export interface VersionPromotionOptions {
  config: Config
  access: WebsiteAccess
  repo: WebsitesRepository
  /** Told when a site's live version changes, so every cache (here and on other instances) drops it. */
  siteEvents: SiteEvents
  /** Told when a site's live version changes, for a CDN to purge (PLINTH_PURGE_URL). */
  purge: PurgeHook
  collections: CollectionNames
  /** Told that a version went live, in the transaction that makes it so. */
  webhookEvents: WebhookEvents
}

/** What makes a stored version live, as routes, tools and schedules call it. */
export interface VersionPromoter {
  /** Makes a stored version the live one. `versionId` is a version id (job_...) or a version number. */
  promote(principal: Principal, websiteId: string, versionId: VersionRef): Promise<Version>
}

export class VersionPromotion implements VersionPromoter {
  constructor(private readonly options: VersionPromotionOptions) {}

  /** Makes a stored version the live one. `versionId` is a version id (job_...) or a version number. */
  async promote(principal: Principal, websiteId: string, versionId: VersionRef): Promise<Version> {
    const { config, access, repo, siteEvents, purge } = this.options
    const site = await access.requireSite(principal, websiteId, 'edit')
    const version = await requireVersion(repo, site.id, versionId)
    if (version.status !== 'ready') throw new AppError('VALIDATION_FAILED', 'Only a ready version can be promoted.', { fields: { versionId: 'is not ready' } })
    const files = await repo.filesOf([version.id])
    await this.assertNoReservedPaths(site.id, version.number, files)
    await repo.transaction(async (trx) => {
      await repo.setCurrentVersion(trx, site.id, version.id, nowIso())
      const data = { versionId: version.id, version: version.number, pageUrl: pageUrlFor(config, site.slug) }
      await this.options.webhookEvents.emit(trx, site.id, 'version.promoted', data)
    })
    await siteEvents.siteChanged(site.slug)
    purge.siteChanged('promote', site)
    const warnings = await repo.warningsOf([version.id])
    return versionView(config, site.slug, version, files, version.id, warnings.get(version.id) ?? [])
  }

  /**
   * A version stored before a collection was created may hold files where that collection now
   * serves its entries, listing or feeds: going live again, they would shadow them.
   */
  private async assertNoReservedPaths(websiteId: string, number: number, files: Array<{ path: string }>): Promise<void> {
    const names = await this.options.collections.namesOf(websiteId)
    if (names.length === 0) return
    const clashes = new Map<string, string[]>()
    for (const { path } of files) {
      const name = collectionOwning(path, names)
      if (name !== null) clashes.set(name, [...(clashes.get(name) ?? []), path])
    }
    if (clashes.size === 0) return
    const described = [...clashes].map(([name, paths]) => {
      const shown = paths.slice(0, 10).map((p) => quoted(p, 80))
      const more = paths.length > 10 ? `, and ${paths.length - 10} more` : ''
      return `${shown.join(', ')}${more} (where the collection "${name}" serves ${reservedPathsOf(name).join(', ')})`
    })
    throw new AppError(
      'PROMOTE_CONFLICT',
      `Version ${number} cannot go live: it has files where a collection serves its entries, listing or feeds: ${described.join('; ')}. Publish a version without these files instead.`,
      { fields: { versionId: `has files where ${[...clashes.keys()].map((name) => `the collection "${name}"`).join(' and ')} serves entries` } },
    )
  }
}
