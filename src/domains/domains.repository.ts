/**
 * Queries over custom domains. Serving and the TLS question read by primary key (the domain) or
 * by the websites' unique slug, so each costs one indexed lookup.
 */
import type { Kysely } from 'kysely'
import type { Role } from '../core/enums.ts'
import type { CustomDomainRow, Database } from '../db/types.ts'

/** A site as the domains pages need it, with the caller's role. */
export interface DomainSite {
  id: string
  name: string
  slug: string
  role: Role
}

/** What a served custom domain stands for. */
export interface ServedSite {
  websiteId: string
  slug: string
}

export class DomainsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  listForSite(websiteId: string): Promise<CustomDomainRow[]> {
    return this.db.selectFrom('custom_domains').selectAll().where('website_id', '=', websiteId).orderBy('created_at').orderBy('domain').execute()
  }

  async countForSite(websiteId: string): Promise<number> {
    const row = await this.db
      .selectFrom('custom_domains')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('website_id', '=', websiteId)
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }

  find(domain: string): Promise<CustomDomainRow | undefined> {
    return this.db.selectFrom('custom_domains').selectAll().where('domain', '=', domain).executeTakeFirst()
  }

  /** Inserts a new claim; throws the store's unique violation when the domain is held already. */
  async insert(row: CustomDomainRow): Promise<void> {
    await this.db.insertInto('custom_domains').values(row).execute()
  }

  /** Drops a claim of another site that was never verified and is older than `before`; true when one was dropped. */
  async releaseStalePending(domain: string, websiteId: string, before: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('custom_domains')
      .where('domain', '=', domain)
      .where('website_id', '!=', websiteId)
      .where('verified_at', 'is', null)
      .where('created_at', '<', before)
      .executeTakeFirst()
    return Number(result.numDeletedRows) > 0
  }

  /** Records a check: verified (when `verifiedAt` is given) or failed with `error`. Only while the domain is still the site's. */
  async recordCheck(domain: string, websiteId: string, check: { at: string; verifiedAt: string | null; error: string | null }): Promise<boolean> {
    const result = await this.db
      .updateTable('custom_domains')
      .set({ last_checked_at: check.at, last_error: check.error, ...(check.verifiedAt ? { verified_at: check.verifiedAt } : {}) })
      .where('domain', '=', domain)
      .where('website_id', '=', websiteId)
      .executeTakeFirst()
    return Number(result.numUpdatedRows) > 0
  }

  async delete(domain: string, websiteId: string): Promise<boolean> {
    const result = await this.db.deleteFrom('custom_domains').where('domain', '=', domain).where('website_id', '=', websiteId).executeTakeFirst()
    return Number(result.numDeletedRows) > 0
  }

  /** Every verified domain with the site it serves (sites not deleted): what serving holds in memory. */
  allServed(): Promise<Array<ServedSite & { domain: string }>> {
    return this.served().select(['custom_domains.domain', 'websites.id as websiteId', 'websites.slug']).execute()
  }

  /** The site a verified domain serves, unless it was deleted. */
  findServed(domain: string): Promise<ServedSite | undefined> {
    return this.served().select(['websites.id as websiteId', 'websites.slug']).where('custom_domains.domain', '=', domain).executeTakeFirst()
  }

  /** Verified domains joined to the sites they serve, those sites not deleted. */
  private served() {
    return this.db
      .selectFrom('custom_domains')
      .innerJoin('websites', 'websites.id', 'custom_domains.website_id')
      .where('custom_domains.verified_at', 'is not', null)
      .where('websites.status', '!=', 'deleted')
  }

  /** Whether a site with this slug exists and has a live version. */
  async isLive(slug: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('websites')
      .select('websites.id')
      .where('websites.slug', '=', slug)
      .where('websites.status', '!=', 'deleted')
      .where('websites.current_version_id', 'is not', null)
      .executeTakeFirst()
    return row !== undefined
  }
}
