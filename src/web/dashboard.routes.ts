/**
 * The dashboard: the sites a person owns and edits, and per site its versions (promote any of
 * them: a rollback is a promote of an older one), its editors, its password, its collections and
 * entries, and its deletion. Every action calls the same service as REST and MCP, as the signed-in person.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { PromotionRequests } from '../approvals/promotion-requests.ts'
import type { PromotionSchedules } from '../approvals/promotion-schedules.ts'
import type { Account } from '../auth/accounts.service.ts'
import type { Principal } from '../core/principal.ts'
import type { CollectionsService } from '../content/collections.service.ts'
import type { EntriesService } from '../content/entries.service.ts'
import type { OAuthService } from '../oauth/oauth.service.ts'
import type { PageViews } from '../browser/page-views.ts'
import { AppError, notFound } from '../core/errors.ts'
import { type BundleLimits, formatSize, SITE_PASSWORD_MAX, SITE_PASSWORD_MIN } from '../core/limits.ts'
import { CATEGORIES } from '../core/enums.ts'
import { statusOf } from '../http/error-status.ts'
import type { MembersService } from '../websites/members.service.ts'
import type { SitePasswords } from '../websites/site-passwords.ts'
import type { VersionFiles } from '../websites/version-files.ts'
import type { VersionPromoter } from '../websites/version-promotion.ts'
import type { WebsiteDeletion } from '../websites/website-deletion.ts'
import type { WebsiteQueries } from '../websites/website-queries.ts'
import { accountOf, field, fieldRefusal, principalOf } from './forms.ts'
import { sendPage } from './pages.ts'
import { pageContext, type WebContext } from './web-context.ts'
import { clipped, quoted } from '../core/text.ts'

export interface DashboardServices {
  websites: WebsiteQueries
  promotion: VersionPromoter
  /** A version's changes from the live one, on its page. */
  versionFiles: VersionFiles
  deletion: WebsiteDeletion
  members: MembersService
  sitePasswords: SitePasswords
  /** The apps connected by OAuth, listed under the sites. */
  oauth: Pick<OAuthService, 'connections'>
  collections: CollectionsService
  entries: EntriesService
  /** Whether pages show thumbnails: only when the instance has a browser. */
  pageViews: PageViews
  /** The requests waiting for a person's decision, listed on the site's page. */
  promotionRequests: PromotionRequests
  /** The promotions scheduled for later, listed on the site's page. */
  schedules: PromotionSchedules
}

const NOTICES: Record<string, string> = {
  promoted: 'The version is live now.',
  'schedule-cancelled': 'The scheduled promotion is cancelled.',
  'editor-removed': 'The editor was removed.',
  'invitation-removed': 'The invitation was withdrawn.',
  deleted: 'The site was deleted. Its address is free again.',
  'password-set': 'The password is set. Visitors enter it once per browser and address; earlier unlocks no longer work.',
  'password-removed': 'The password is removed. The site is open to everyone.',
  disconnected: 'The app was disconnected. Its tokens no longer work.',
}

/** Entries are listed with their first few fields, each value shortened. */
const SHOWN_FIELDS = 3
const CELL_MAX = 80

function cellText(value: unknown, type: string): string {
  if (value === null || value === undefined || value === '') return '—'
  if (type === 'richText') return 'rich text'
  const text = typeof value === 'string' ? value : JSON.stringify(value)
  return clipped(text, CELL_MAX)
}

type SiteParams = { Params: { websiteId: string }; Querystring: { done?: string; invited?: string } }

/** How each line of a unified diff is shown: the file names, a hunk's header, a line added, removed or kept. */
type DiffLineKind = 'meta' | 'hunk' | 'add' | 'del' | 'ctx'

/**
 * Each line of a unified diff with its kind. The file names are the lines before the first hunk:
 * inside a hunk a line is told by its first character alone, so a removed `-- x` (`--- x`) or an
 * added `++ x` (`+++ x`) is a line of the file, not a file name.
 */
export function diffLines(diff: string): Array<{ kind: DiffLineKind; text: string }> {
  const lines = diff.endsWith('\n') ? diff.slice(0, -1).split('\n') : diff.split('\n')
  let inHunk = false
  return lines.map((text) => {
    if (text.startsWith('@@')) inHunk = true
    const kind: DiffLineKind = text.startsWith('@@')
      ? 'hunk'
      : !inHunk || text.startsWith('\\')
        ? 'meta'
        : text.startsWith('+')
          ? 'add'
          : text.startsWith('-')
            ? 'del'
            : 'ctx'
    return { kind, text }
  })
}

/** What the drop area says of the limits, and the categories a new site may take. */
const deployArea = (limits: BundleLimits) => ({
  deployLimits: {
    maxFiles: limits.maxFiles,
    maxFileBytes: limits.maxFileBytes,
    fileSize: formatSize(limits.maxFileBytes),
    bundleSize: formatSize(limits.maxBundleBytes),
  },
  categories: CATEGORIES,
})

/** What a person reads on the version their deploy made. */
const deployedNotice = (version: number, live: boolean) =>
  live ? `Published: v${version} is live.` : `Published: v${version} is stored for review. Preview it, then make it live.`

/** What the owner reads after adding an editor, whether or not the email has an account. */
const invitedNotice = (email: string) => `${email} will be able to edit this site once they sign in, or sign up, with this email.`

export function dashboardRoutes(web: WebContext, services: DashboardServices) {
  const { websites, promotion, deletion, members, collections, entries } = services
  /** A site's own fields, for the pages that show them next to its history or content (which they read themselves). */
  const siteOf = (principal: Principal, websiteId: string) => websites.getWithVersionPage(principal, websiteId, { limit: 1 })

  const sitePage = async (request: FastifyRequest<SiteParams>, reply: FastifyReply, account: Account, extra: Record<string, unknown> = {}, status = 200) => {
    const principal = principalOf(account)
    const websiteId = request.params.websiteId
    const [site, history, people, collectionList, requests, schedules] = await Promise.all([
      siteOf(principal, websiteId),
      websites.history(principal, websiteId),
      members.members(principal, websiteId),
      collections.list(principal, websiteId),
      services.promotionRequests.list(principal, websiteId, 'pending'),
      services.schedules.list(principal, websiteId),
    ])
    const invitations = site.role === 'owner' ? await members.pendingInvitations(principal, websiteId) : []
    // Only an email the site lists is repeated on the page: a link cannot make it say anything else.
    const invited = request.query.invited
    const listed = invited !== undefined && [...people, ...invitations].some((p) => p.email === invited)
    const data = {
      title: `${site.name} · Plinth`,
      site,
      versions: history,
      members: people,
      invitations,
      collections: collectionList.items,
      requests: requests.items,
      schedules: schedules.items.filter((s) => s.status === 'pending').reverse(),
      notice: listed ? invitedNotice(invited) : request.query.done ? NOTICES[request.query.done] : undefined,
      passwordLength: { min: SITE_PASSWORD_MIN, max: SITE_PASSWORD_MAX },
      ...deployArea(web.config.bundleLimits),
      thumbnails: services.pageViews.unavailable() === null,
      ...extra,
    }
    return sendPage(reply, pageContext(web, request, reply), 'site', data, { status })
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- Fastify awaits an async plugin, so a throw while registering rejects register()
  return async (app: FastifyInstance) => {
    app.get<{ Querystring: { done?: string } }>('/dashboard', { schema: { hide: true } }, async (request, reply) => {
      const account = accountOf(request)
      // A person already signed in takes up invitations made since, as signing in would.
      await members.acceptInvitations({ id: account.userId, email: account.email })
      const [list, apps] = await Promise.all([websites.listWithLiveVersions(principalOf(account)), services.oauth.connections(account.userId)])
      const data = {
        title: 'Dashboard · Plinth',
        sites: list.items,
        apps,
        limits: list.websiteLimits,
        thumbnails: services.pageViews.unavailable() === null,
        notice: request.query.done ? NOTICES[request.query.done] : undefined,
        ...deployArea(web.config.bundleLimits),
      }
      return sendPage(reply, pageContext(web, request, reply), 'dashboard', data)
    })

    app.get<SiteParams>('/dashboard/sites/:websiteId', { schema: { hide: true } }, async (request, reply) => {
      const account = accountOf(request)
      // A link to the site an invitation names works at once, as the dashboard does.
      await members.acceptInvitations({ id: account.userId, email: account.email })
      return sitePage(request, reply, account)
    })

    app.get<{ Params: { websiteId: string; version: string }; Querystring: { done?: string } }>(
      '/dashboard/sites/:websiteId/versions/:version',
      { schema: { hide: true } },
      async (request, reply) => {
        const principal = principalOf(accountOf(request))
        const { websiteId } = request.params
        const [site, history] = await Promise.all([siteOf(principal, websiteId), websites.history(principal, websiteId)])
        const version = history.find((v) => String(v.version) === request.params.version)
        if (!version) throw notFound(`Version ${quoted(request.params.version, 20)} of this site`)
        const live = history.find((v) => v.isCurrent)
        // What making this version live would change: the live version's files against its own.
        const comparison = live && !version.isCurrent ? await services.versionFiles.compare(principal, site.id, live.id, version.id) : null
        const changes = comparison?.files.map((file) => ({ ...file, lines: file.diff === undefined ? null : diffLines(file.diff) }))
        const deployed = request.query.done === 'deployed' ? deployedNotice(version.version, version.isCurrent) : undefined
        const thumbnails = services.pageViews.unavailable() === null
        const data = {
          title: `v${version.version} · ${site.name} · Plinth`,
          site,
          version,
          live: live ?? null,
          changes: changes ?? null,
          notice: deployed,
          thumbnails,
        }
        return sendPage(reply, pageContext(web, request, reply), 'version', data)
      },
    )

    app.post<SiteParams>('/dashboard/sites/:websiteId/promote', { schema: { hide: true } }, async (request, reply) => {
      const account = accountOf(request)
      await promotion.promote(principalOf(account), request.params.websiteId, field(request, 'versionId'))
      return reply.redirect(`/dashboard/sites/${encodeURIComponent(request.params.websiteId)}?done=promoted`, 303)
    })

    app.post<SiteParams>('/dashboard/sites/:websiteId/editors', { schema: { hide: true } }, async (request, reply) => {
      const account = accountOf(request)
      const email = field(request, 'email')
      let invited: string
      try {
        invited = await members.addEditor(principalOf(account), request.params.websiteId, email)
      } catch (error) {
        // Not an email, or the owner's own: said on the page, next to the form.
        const refused = fieldRefusal(error, 'email')
        if (!refused) throw error
        return sitePage(request, reply, account, { editorError: { message: refused.message }, editorEmail: email }, statusOf(refused))
      }
      return reply.redirect(`/dashboard/sites/${encodeURIComponent(request.params.websiteId)}?invited=${encodeURIComponent(invited)}`, 303)
    })

    app.post<SiteParams>('/dashboard/sites/:websiteId/editors/remove', { schema: { hide: true } }, async (request, reply) => {
      const account = accountOf(request)
      await members.removeEditor(principalOf(account), request.params.websiteId, field(request, 'userId'))
      return reply.redirect(`/dashboard/sites/${encodeURIComponent(request.params.websiteId)}?done=editor-removed`, 303)
    })

    app.post<SiteParams>('/dashboard/sites/:websiteId/invitations/remove', { schema: { hide: true } }, async (request, reply) => {
      const account = accountOf(request)
      await members.removeInvitation(principalOf(account), request.params.websiteId, field(request, 'email'))
      return reply.redirect(`/dashboard/sites/${encodeURIComponent(request.params.websiteId)}?done=invitation-removed`, 303)
    })

    app.post<SiteParams>('/dashboard/sites/:websiteId/password', { schema: { hide: true } }, async (request, reply) => {
      const account = accountOf(request)
      // Kept as typed, as REST and MCP keep it and as the unlock form sends it: spaces count.
      const password = field(request, 'password', { trim: false })
      try {
        await services.sitePasswords.set(principalOf(account), request.params.websiteId, password)
      } catch (error) {
        const refused = fieldRefusal(error, 'password')
        if (!refused) throw error
        return sitePage(request, reply, account, { passwordError: { message: refused.message } }, statusOf(refused))
      }
      return reply.redirect(`/dashboard/sites/${encodeURIComponent(request.params.websiteId)}?done=password-set`, 303)
    })

    app.post<SiteParams>('/dashboard/sites/:websiteId/password/remove', { schema: { hide: true } }, async (request, reply) => {
      const account = accountOf(request)
      await services.sitePasswords.set(principalOf(account), request.params.websiteId, null)
      return reply.redirect(`/dashboard/sites/${encodeURIComponent(request.params.websiteId)}?done=password-removed`, 303)
    })

    app.post<SiteParams>('/dashboard/sites/:websiteId/delete', { schema: { hide: true } }, async (request, reply) => {
      const account = accountOf(request)
      const principal = principalOf(account)
      const site = await siteOf(principal, request.params.websiteId)
      if (site.role !== 'owner') throw new AppError('OWNER_ONLY', "Only the site's owner can delete it.")
      if (field(request, 'confirmSlug') !== site.slug) {
        return sitePage(request, reply, account, { deleteError: { message: `Type the site's address, ${site.slug}, to delete it.` } }, 422)
      }
      await deletion.delete(principal, site.id)
      return reply.redirect('/dashboard?done=deleted', 303)
    })

    app.get<{ Params: { websiteId: string; collection: string }; Querystring: { cursor?: string } }>(
      '/dashboard/sites/:websiteId/collections/:collection',
      { schema: { hide: true } },
      async (request, reply) => {
        const account = accountOf(request)
        const principal = principalOf(account)
        const { websiteId, collection } = request.params
        const [site, loaded, list] = await Promise.all([
          siteOf(principal, websiteId),
          collections.get(principal, websiteId, collection),
          entries.list(principal, websiteId, collection, { cursor: request.query.cursor, limit: 50 }),
        ])
        const shown = loaded.fields.slice(0, SHOWN_FIELDS)
        const rows = list.items.map((entry) => ({
          slug: entry.slug,
          live: entry.live,
          publishedAt: entry.publishedAt,
          url: entry.live && site.pageUrl ? new URL(entry.path, site.pageUrl).href : null,
          cells: shown.map((f) => cellText(entry.data[f.name], f.type)),
        }))
        const data = { title: `${loaded.label} · ${site.name} · Plinth`, site, collection: loaded, shown, rows, nextCursor: list.nextCursor }
        return sendPage(reply, pageContext(web, request, reply), 'collection', data)
      },
    )
  }
}
