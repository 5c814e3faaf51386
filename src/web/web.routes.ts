/**
 * The web site for people, on the site host (`site_url`): public pages, accounts, the token page
 * and the dashboard. Server-rendered HTML that works without JavaScript; forms are urlencoded
 * POSTs, each checked for a CSRF token bound to the session and for a same-origin `Origin`.
 * Cookies and the CSRF secret are registered on the whole app (the token page is served by the
 * MCP routes, which own `/mcp`), but only the web site's own routes read a session: the REST API
 * and MCP read bearer tokens and nothing else.
 */
import { readFileSync } from 'node:fs'
import cookie from '@fastify/cookie'
import csrf from '@fastify/csrf-protection'
import formbody from '@fastify/formbody'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { AccountsService } from '../auth/accounts.service.ts'
import type { TokensService } from '../auth/tokens.service.ts'
import type { Config } from '../config.ts'
import { AppError } from '../core/errors.ts'
import { refuseNulCharacters } from '../http/nul-guard.ts'
import { apiHostTest, pathKind } from '../http/api-paths.ts'
import { checkOrigin } from '../http/origins.ts'
import type { OAuthEndpoint } from '../oauth/oauth.routes.ts'
import type { OAuthService } from '../oauth/oauth.service.ts'
import { accountRoutes, signInRoutes } from './account.routes.ts'
import { webAssets } from './assets.ts'
import { connectRoutes } from './connect.routes.ts'
import { type DashboardServices, dashboardRoutes } from './dashboard.routes.ts'
import { type DeployServices, deployRoutes } from './deploy.routes.ts'
import { loadDocs } from './docs.ts'
import { type DomainPageServices, domainRoutes } from './domains.routes.ts'
import { type FormInboxServices, formInboxRoutes } from './form-inbox.routes.ts'
import { type JobPageServices, jobRoutes } from './jobs.routes.ts'
import { requireSignIn, sendErrorPage } from './forms.ts'
import { negotiate, type Representation } from './pages.ts'
import { notFoundPage, publicRoutes } from './public.routes.ts'
import { pageViewRoutes } from './page-views.routes.ts'
import { tokenRoutes } from './tokens.routes.ts'
import { type WebhookPageServices, webhookRoutes } from './webhooks.routes.ts'
import { type ApprovalPageServices, approvalRoutes } from './approvals.routes.ts'
import { type TrafficPageServices, trafficPageRoutes } from './traffic-page.routes.ts'
import { cookieOptions, csrfUserInfo, webContext } from './web-context.ts'

export interface WebSiteOptions
  extends
    DashboardServices,
    DeployServices,
    DomainPageServices,
    JobPageServices,
    FormInboxServices,
    WebhookPageServices,
    ApprovalPageServices,
    TrafficPageServices {
  config: Config
  accounts: AccountsService
  tokens: TokensService
  oauth: OAuthService
  oauthEndpoint: OAuthEndpoint
  /** Signs the CSRF tokens; the same on every instance. */
  csrfKey: Buffer
}

/** A form is small: the largest (sign-up) is a few hundred bytes. */
const FORM_BODY_LIMIT = 16 * 1024
/** A CSRF token older than this is refused: a form left open for a day is sent again after a reload. */
const CSRF_VALIDITY_MS = 24 * 60 * 60 * 1000
const CROSS_SITE_FORM = 'This form was sent from another site, so it was refused.'

/** What an unknown path offers, first the answer for a client that names no type (or `*\/*`). */
const SITE_FIRST: Representation[] = ['markdown', 'html', 'json']
const API_FIRST: Representation[] = ['json', 'html', 'markdown']

export interface WebSite {
  /** The web site's routes; register once. */
  routes: (app: FastifyInstance) => Promise<void>
  /** GET /mcp from a browser: the token page. */
  tokenPage: (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>
  /**
   * The answer to an unknown path: null for the JSON envelope (every path on the API host of a
   * split setup, the API's own paths, and a path that looks like the API's unless the client asks
   * for HTML or markdown), else the web site's 404 as markdown (the default) or as a page.
   */
  notFound: (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply> | null
}

/** Registers cookies and CSRF protection on the app and returns the web site's parts. */
export async function createWebSite(app: FastifyInstance, options: WebSiteOptions): Promise<WebSite> {
  const { config, accounts } = options
  const assets = webAssets()
  const web = webContext(config, accounts, assets.tags)
  const docs = loadDocs(config)
  let rendered: { markdown: string; html: string } | undefined
  // Rendered on first use, as the guide is (docs.ts).
  const homePage = () => (rendered ??= docs.render(readFileSync(new URL('./home.md', import.meta.url), 'utf8')))
  const home = {
    get markdown() {
      return homePage().markdown
    },
    get html() {
      return homePage().html
    },
  }

  app.decorateRequest('account', null)
  await app.register(cookie)
  await app.register(csrf, {
    cookieKey: web.csrfCookie,
    cookieOpts: cookieOptions(web),
    getUserInfo: csrfUserInfo,
    // A form sends its token as the field `_csrf`; the dashboard's script, calling in JSON, as a header.
    getToken: (request) => {
      const token = (request.body as Record<string, unknown> | undefined)?._csrf ?? request.headers['x-csrf-token']
      return typeof token === 'string' ? token : undefined
    },
    csrfOpts: { hmacKey: options.csrfKey, userInfo: true, validity: CSRF_VALIDITY_MS },
  })

  const resolveAccount = async (request: FastifyRequest) => {
    request.account = await accounts.resolve(request.cookies[web.sessionCookie])
  }
  const tokens = tokenRoutes(web, options.tokens, options.websites)
  const onApiHost = apiHostTest(config)

  return {
    routes: async (site) => {
      await site.register(formbody, { bodyLimit: FORM_BODY_LIMIT })
      // A form POST must come from this site: its `Origin` names it, and `Sec-Fetch-Site` (when
      // sent) is not cross-site. The CSRF token is the real check; this refuses forgeries first.
      const formOrigin = checkOrigin(config, { sameHost: true, refusal: CROSS_SITE_FORM })
      site.addHook('onRequest', async (request) => {
        if (request.method === 'POST') {
          if (request.headers['sec-fetch-site'] === 'cross-site') throw new AppError('ORIGIN_NOT_ALLOWED', CROSS_SITE_FORM)
          await formOrigin(request)
        }
        await resolveAccount(request)
      })
      site.setErrorHandler((error, request, reply) => sendErrorPage(web, request, reply, error as FastifyError))
      refuseNulCharacters(site)
      await site.register(publicRoutes(web, docs, home, assets.files))
      await site.register(signInRoutes(web))
      // The pages of a signed-in person, in one scope that sends anyone else to sign in.
      await site.register(async (signedIn) => {
        requireSignIn(signedIn)
        await signedIn.register(accountRoutes(web))
        await signedIn.register(tokens.routes)
        await signedIn.register(dashboardRoutes(web, options))
        await signedIn.register(deployRoutes(web, options))
        await signedIn.register(pageViewRoutes(web, options))
        await signedIn.register(jobRoutes(web, options))
        await signedIn.register(domainRoutes(web, options))
        await signedIn.register(formInboxRoutes(web, options))
        await signedIn.register(webhookRoutes(web, options))
        await signedIn.register(approvalRoutes(web, options))
        await signedIn.register(trafficPageRoutes(web, options))
        await signedIn.register(
          connectRoutes(web, { oauth: options.oauth, endpoint: options.oauthEndpoint, tokens: options.tokens, websites: options.websites }),
        )
      })
    },
    tokenPage: async (request, reply) => {
      await resolveAccount(request)
      return tokens.page(request, reply)
    },
    notFound: (request, reply) => {
      if (onApiHost(request.host)) return null
      const kind = pathKind(request.url.split('?')[0]!)
      if (kind === 'api') return null
      const answer = negotiate(request, kind === 'api-like' ? API_FIRST : SITE_FIRST)
      if (answer !== 'json') return notFoundPage(web, request, reply, answer)
      reply.header('Vary', 'Accept')
      return null
    },
  }
}
