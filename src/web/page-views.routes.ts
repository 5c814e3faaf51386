/**
 * What a real browser shows of a site's versions, on the dashboard: thumbnails (a version's page
 * at the desktop width, as a PNG the dashboard's pages load lazily) and a version's browser
 * report at both widths. For the site's owners and editors, by their session; without a browser
 * on the instance the pages show no thumbnails and the report page says why.
 */
import type { FastifyInstance } from 'fastify'
import type { PageViews } from '../browser/page-views.ts'
import { VIEWPORTS } from '../core/enums.ts'
import { AppError, notFound } from '../core/errors.ts'
import { quoted } from '../core/text.ts'
import type { WebsiteQueries } from '../websites/website-queries.ts'
import { accountOf, principalOf } from './forms.ts'
import { sendPage } from './pages.ts'
import { pageContext, type WebContext } from './web-context.ts'

export interface PageViewServices {
  pageViews: Pick<PageViews, 'screenshot' | 'report'>
  websites: WebsiteQueries
}

type VersionParams = { Params: { websiteId: string; version: string } }

/** A thumbnail is kept by the browser for a while: a version's files never change. */
const THUMBNAIL_CACHE = 'private, max-age=300'

export function pageViewRoutes(web: WebContext, { pageViews, websites }: PageViewServices) {
  // eslint-disable-next-line @typescript-eslint/require-await -- Fastify awaits an async plugin, so a throw while registering rejects register()
  return async (app: FastifyInstance) => {
    app.get<VersionParams>('/dashboard/sites/:websiteId/versions/:version/thumbnail.png', { schema: { hide: true } }, async (request, reply) => {
      const { websiteId, version } = request.params
      const { png } = await pageViews.screenshot(principalOf(accountOf(request)), websiteId, version, { path: '/', viewport: 'desktop', fullPage: false })
      return reply.type('image/png').header('Cache-Control', THUMBNAIL_CACHE).send(png)
    })

    app.get<VersionParams>('/dashboard/sites/:websiteId/versions/:version/browser-report', { schema: { hide: true } }, async (request, reply) => {
      const principal = principalOf(accountOf(request))
      const { websiteId, version } = request.params
      if (!/^[1-9][0-9]{0,8}$/.test(version)) throw notFound(`Version ${quoted(version, 20)} of this site`)
      const site = await websites.getWithVersionPage(principal, websiteId, { limit: 1 })
      const reports = await Promise.all(
        VIEWPORTS.map(async (viewport) => {
          try {
            return { viewport, report: await pageViews.report(principal, websiteId, version, { path: '/', viewport }), problem: null }
          } catch (error) {
            // What stops the browser is said on the page; anything else is the page's error.
            if (error instanceof AppError && error.code !== 'NOT_FOUND') return { viewport, report: null, problem: error.message }
            throw error
          }
        }),
      )
      const data = { title: `Browser report, v${version} · ${site.name} · Plinth`, site, version, reports }
      return sendPage(reply, pageContext(web, request, reply), 'browser-report', data)
    })
  }
}
