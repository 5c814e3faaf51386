import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { principalOf } from '../auth/auth.routes.ts'
import { BROWSER_QUEUE_MAX } from '../core/limits.ts'
import { AUTH_ERRORS, BEARER_AUTH as security, errorResponses, success } from '../http/openapi.ts'
import { queryBooleans } from '../http/query-numbers.ts'
import { FileSetRefParam, WebsiteIdParam } from '../websites/websites.schemas.ts'
import { BrowserReportQuery, BrowserReportSchema, ScreenshotQuery } from './browser.schemas.ts'
import type { PageViews } from './page-views.ts'

const tags = ['Publishing']
const PageParams = Type.Object({ websiteId: WebsiteIdParam, versionId: FileSetRefParam })
const BROWSER_ERRORS = [...AUTH_ERRORS, 'NOT_FOUND', 'VALIDATION_FAILED', 'PAGE_UNRESPONSIVE', 'BROWSER_UNAVAILABLE', 'BROWSER_BUSY'] as const
const HOW =
  'The page is loaded in Chromium with no network but the site itself: every request to another origin is refused and reported, and the site is served as visitors get it (its Content-Security-Policy and _headers included), without its password. Results are kept per version (a draft until it changes), path and viewport. A few pages load at once; past ' +
  `${BROWSER_QUEUE_MAX} waiting, BROWSER_BUSY with Retry-After. Without a browser on the instance, BROWSER_UNAVAILABLE. Owners and editors.`

/** Screenshots and browser reports of a version's or a draft's pages, under /v1 (authenticated). */
export function browserRoutes(pageViews: PageViews): FastifyPluginAsyncTypebox {
  // eslint-disable-next-line @typescript-eslint/require-await -- Fastify awaits an async plugin, so a throw while registering rejects register()
  return async (app) => {
    app.get(
      '/websites/:websiteId/versions/:versionId/screenshot',
      {
        preValidation: queryBooleans('fullPage'),
        schema: {
          operationId: 'getPageScreenshot',
          tags,
          security,
          summary: "A screenshot of a version's page",
          description: `A PNG of the page at path as a real browser shows it, at the viewport's width. versionId is the version id (job_...), its number, or a draft id (drf_...). ${HOW}`,
          params: PageParams,
          querystring: ScreenshotQuery,
          response: {
            200: { description: 'The screenshot.', content: { 'image/png': { schema: Type.Unsafe<Buffer>({ type: 'string', format: 'binary' }) } } },
            ...errorResponses([...BROWSER_ERRORS]),
          },
        },
      },
      async (request, reply) => {
        const { websiteId, versionId } = request.params
        const { png } = await pageViews.screenshot(principalOf(request), websiteId, versionId, request.query)
        return reply.type('image/png').send(png)
      },
    )

    app.get(
      '/websites/:websiteId/versions/:versionId/browser-report',
      {
        schema: {
          operationId: 'getBrowserReport',
          tags,
          security,
          summary: "What a real browser saw on a version's page",
          description: `The page's status, title and load time, the errors its scripts logged or threw, the requests that got nothing or an error, what the site's Content-Security-Policy refused, and whether the page scrolls sideways (at the mobile viewport, a layout that does not fit a phone). versionId is the version id (job_...), its number, or a draft id (drf_...). ${HOW}`,
          params: PageParams,
          querystring: BrowserReportQuery,
          response: { 200: success(BrowserReportSchema, 'The report.'), ...errorResponses([...BROWSER_ERRORS]) },
        },
      },
      (request) => {
        const { websiteId, versionId } = request.params
        return pageViews.report(principalOf(request), websiteId, versionId, request.query)
      },
    )
  }
}
