/**
 * Who may do what to a website, the one rule every feature asks before it works on one: its owner
 * and its editors see it and edit it; only its owner owns it (core/enums.ts, SitePermission). A
 * deleted website is seen by no one, and a website the caller may not see does not exist for them
 * (NOT_FOUND), so its id tells nothing.
 */
import { type Kysely, sql, type Transaction } from 'kysely'
import type { Role, SitePermission } from '../core/enums.ts'
import { AppError, notFound } from '../core/errors.ts'
import type { Principal } from '../core/principal.ts'
import type { Database, WebsiteRow } from './types.ts'

export type Executor = Kysely<Database> | Transaction<Database>

/**
 * Who looks: a person, or a token of theirs limited to some websites (`sites`; null or absent:
 * every site the person sees). A site outside the limit is as invisible as a stranger's.
 */
export type SiteViewer = string | (Pick<Principal, 'userId'> & Partial<Pick<Principal, 'sites'>>)

/**
 * Websites the user owns or edits, with the caller's membership row joined as `member`: the query
 * fragment every visibility check, in every repository, is built on.
 */
export function visibleWebsites(db: Executor, viewer: SiteViewer) {
  const userId = typeof viewer === 'string' ? viewer : viewer.userId
  const sites = typeof viewer === 'string' ? null : (viewer.sites ?? null)
  return db
    .selectFrom('websites')
    .leftJoin('website_members as member', (join) => join.onRef('member.website_id', '=', 'websites.id').on('member.user_id', '=', userId))
    .where((eb) => eb.or([eb('websites.owner_id', '=', userId), eb('member.user_id', '=', userId)]))
    .where('websites.status', '!=', 'deleted')
    .$if(sites !== null, (query) => (sites!.length === 0 ? query.where(sql.lit(false)) : query.where('websites.id', 'in', sites!)))
}

/** A website the caller may see, with their role on it and its owner's name (the owner's email when they gave none). */
export interface VisibleWebsite extends WebsiteRow {
  role: Role
  owner_name: string | null
}

/** The websites the user owns or edits, each a VisibleWebsite. */
export function visibleWebsiteRows(db: Executor, viewer: SiteViewer) {
  const userId = typeof viewer === 'string' ? viewer : viewer.userId
  return visibleWebsites(db, viewer)
    .innerJoin('users as owner', 'owner.id', 'websites.owner_id')
    .selectAll('websites')
    .select((eb) => [
      eb.case().when('websites.owner_id', '=', userId).then(sql.lit('owner')).else(sql.lit('editor')).end().$castTo<Role>().as('role'),
      eb.fn.coalesce('owner.name', 'owner.email').as('owner_name'),
    ])
}

export class WebsiteAccess {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * The website, when the caller may do `permission` to it: NOT_FOUND when they may not see it
   * (or their token does not reach it),
   * OWNER_ONLY when only its owner may, saying what they cannot do (`action`, "delete it").
   */
  requireSite(principal: Principal, websiteId: string, permission: 'see' | 'edit'): Promise<VisibleWebsite>
  requireSite(principal: Principal, websiteId: string, permission: 'own', action: string): Promise<VisibleWebsite>
  async requireSite(principal: Principal, websiteId: string, permission: SitePermission, action?: string): Promise<VisibleWebsite> {
    const site = await visibleWebsiteRows(this.db, principal).where('websites.id', '=', websiteId).executeTakeFirst()
    if (!site) throw notFound('Website')
    if (permission === 'own' && site.role !== 'owner') throw new AppError('OWNER_ONLY', `Only the site's owner can ${action}.`)
    return site
  }
}
