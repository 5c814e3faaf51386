/**
 * buildApp: the Fastify application for the API host and the site host. Registers every plugin
 * and route module explicitly (grep a path to find its file) and reads no environment.
 */
import swagger from '@fastify/swagger'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Ajv } from 'ajv'
import Fastify, { type FastifyBaseLogger, type FastifyServerFactory } from 'fastify'
import { authenticate, registerResourceMetadata, requireCapabilities, resourceMetadataUrl } from './auth/auth.routes.ts'
import type { Services } from './services.ts'
import type { Config } from './config.ts'
import { browserRoutes } from './browser/browser.routes.ts'
import { BROWSER_SCHEMAS } from './browser/browser.schemas.ts'
import { browserTools } from './browser/browser.tools.ts'
import { collectionsRoutes } from './content/collections.routes.ts'
import { draftsRoutes } from './drafts/drafts.routes.ts'
import { DRAFT_SCHEMAS } from './drafts/drafts.schemas.ts'
import { approvalsRoutes } from './approvals/approvals.routes.ts'
import { APPROVAL_SCHEMAS } from './approvals/approvals.schemas.ts'
import { approvalsTools } from './approvals/approvals.tools.ts'
import { formsRoutes } from './forms/forms.routes.ts'
import { formsTools } from './forms/forms.tools.ts'
import { FORM_SCHEMAS } from './forms/forms.schemas.ts'
import { FORM_DECLARATION_SCHEMAS } from './publishing/publishing.schemas.ts'
import { draftsTools } from './drafts/drafts.tools.ts'
import { EDITING_SCHEMAS } from './editing/editing.schemas.ts'
import { CONTENT_SCHEMAS } from './content/content.schemas.ts'
import { contentTools } from './content/content.tools.ts'
import { entriesRoutes } from './content/entries.routes.ts'
import { maxBodyBytes } from './core/limits.ts'
import { tlsAskRoutes } from './domains/domains.routes.ts'
import { CLIENT_ONLY_KEYWORD, mergeClientOnlyConstraints, SHARED_SCHEMAS } from './core/schemas.ts'
import { clientErrors, frameworkErrors, registerErrorHandling } from './http/errors.http.ts'
import { optionalBodies, success, TOKEN_SCOPE, wildcardAsPath } from './http/openapi.ts'
import { registerJsonBody } from './http/json-body.ts'
import { refuseNulCharacters } from './http/nul-guard.ts'
import { strictQueries } from './http/strict-queries.ts'
import { lazySerializers, lazyValidators } from './http/lazy-compilers.ts'
import { assetsRoutes } from './images/assets.routes.ts'
import { ASSET_SCHEMAS } from './images/assets.schemas.ts'
import { imagesTools } from './images/images.tools.ts'
import type { Logger } from './log.ts'
import type { OAuthEndpoint } from './oauth/oauth.routes.ts'
import { mcpRoutes } from './mcp/mcp.routes.ts'
import type { Metrics } from './ops/metrics.ts'
import { operationsRoutes } from './ops/ops.routes.ts'
import type { ReadinessProbes } from './ops/readiness.ts'
import { REQUEST_ID_OPTIONS, trackFastifyRequests, trackFrameworkErrors } from './ops/request-tracking.ts'
import { uploadContentRoutes, uploadsRoutes } from './uploads/uploads.routes.ts'
import { uploadSchemas } from './uploads/uploads.schemas.ts'
import { versionFilesRoutes } from './websites/version-files.routes.ts'
import { websitesRoutes } from './websites/websites.routes.ts'
import { publishRequestSchemas, websiteSchemas } from './websites/websites.schemas.ts'
import { ApiIndexSchema } from './http/api-index.schemas.ts'
import { websitesTools } from './websites/websites.tools.ts'
import { webhooksRoutes } from './webhooks/webhooks.routes.ts'
import { WEBHOOK_SCHEMAS } from './webhooks/webhooks.schemas.ts'
import { trafficRoutes } from './traffic/traffic.routes.ts'
import { TRAFFIC_SCHEMAS } from './traffic/traffic.schemas.ts'
import { trafficTools } from './traffic/traffic.tools.ts'
import { createWebSite } from './web/web.routes.ts'
import { siteUrlPattern } from './core/site-address.ts'

const API_VERSION = '1.0.0'

/** Paths whose answers are never cached: the REST API and the MCP endpoint. */
const API_ANSWER = /^\/(?:v1|mcp)(?:[/?]|$)/

export interface AppOptions {
  config: Config
  services: Services
  /** The OAuth authorization server's requests, for the consent page. */
  oauthEndpoint: OAuthEndpoint
  log: Logger
  /** Request metrics and /metrics (ops/metrics.ts). */
  metrics: Metrics
  /** What /readyz checks (ops/readiness.ts). */
  readiness: ReadinessProbes
  serverFactory?: FastifyServerFactory
}

export async function buildApp({ config, services, oauthEndpoint, log, metrics, readiness, serverFactory }: AppOptions) {
  // What a bundle may hold on this instance: the rules, the schemas, the descriptions and the body limit say the same.
  const limits = config.bundleLimits
  const bodyLimit = maxBodyBytes(limits)
  const publishSchemas = publishRequestSchemas(limits)
  // Typed as Fastify's base logger, which registered plugins expect; it is the same pino logger.
  const baseLog: FastifyBaseLogger = log
  const app = Fastify({
    loggerInstance: baseLog,
    bodyLimit,
    serverFactory,
    // request.ip: the client's address as the trusted proxies in front report it (PLINTH_TRUST_PROXY).
    trustProxy: config.trustProxy.length > 0 ? [...config.trustProxy] : false,
    forceCloseConnections: 'idle',
    ...REQUEST_ID_OPTIONS,
    frameworkErrors: trackFrameworkErrors(frameworkErrors, metrics),
    clientErrorHandler: clientErrors,
    ajv: {
      customOptions: { allErrors: true, removeAdditional: false, coerceTypes: false, useDefaults: true, discriminator: true },
      // Client-only constraints are not the validator's to enforce: the services check them (core/schemas.ts).
      plugins: [(ajv: Ajv) => ajv.addKeyword({ keyword: CLIENT_ONLY_KEYWORD })],
    },
    // Validators and serializers are compiled on each route's first use, not at start (http/lazy-compilers.ts).
    schemaController: { compilersFactory: { buildValidator: lazyValidators, buildSerializer: lazySerializers } },
  }).withTypeProvider<TypeBoxTypeProvider>()
  app.decorateRequest('principal', null)
  // First, so that every route and the not-found handler return the request id and are counted.
  trackFastifyRequests(app, metrics)

  registerJsonBody(app)
  // API answers are one caller's data: no shared cache (a CDN, a proxy) may keep them.
  app.addHook('onSend', async (request, reply) => {
    if (!reply.hasHeader('cache-control') && API_ANSWER.test(request.url)) reply.header('Cache-Control', 'no-store')
  })
  // The web site for people (site_url): its pages, and its answer to unknown paths outside the API.
  const webSite = await createWebSite(app, {
    config,
    accounts: services.accounts,
    tokens: services.tokens,
    oauth: services.oauth,
    oauthEndpoint,
    websites: services.websites,
    promotion: services.promotion,
    publishing: services.publishing,
    patches: services.patches,
    uploads: services.uploads,
    publishSchemas,
    versionFiles: services.versionFiles,
    deletion: services.deletion,
    jobDetails: services.jobDetails,
    members: services.members,
    sitePasswords: services.sitePasswords,
    collections: services.collections,
    entries: services.entries,
    domains: services.domains,
    pageViews: services.pageViews,
    forms: services.forms,
    webhooks: services.webhooks,
    promotionRequests: services.promotionRequests,
    schedules: services.schedules,
    traffic: services.traffic,
    csrfKey: await services.secrets.key('csrf_key'),
  })
  registerErrorHandling(app, { notFound: webSite.notFound })
  for (const schema of [
    ...SHARED_SCHEMAS,
    ...websiteSchemas(publishSchemas),
    ...EDITING_SCHEMAS,
    ...DRAFT_SCHEMAS,
    ...uploadSchemas(limits),
    ...CONTENT_SCHEMAS,
    ...ASSET_SCHEMAS,
    ...BROWSER_SCHEMAS,
    ...FORM_DECLARATION_SCHEMAS,
    ...FORM_SCHEMAS,
    ...WEBHOOK_SCHEMAS,
    ...APPROVAL_SCHEMAS,
    ...TRAFFIC_SCHEMAS,
    ApiIndexSchema,
  ])
    app.addSchema(schema)

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Plinth API',
        version: API_VERSION,
        // The addresses of this instance, so that the document a client reads is true where it runs.
        description: `Publish static websites as JSON bundles and serve them at once at ${siteUrlPattern(config)} (a version that is not live is served for review at ${siteUrlPattern(config, true)}).`,
      },
      servers: [{ url: config.baseUrl }],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description: `Personal access token (plinth_...), minted at ${config.siteUrl}/mcp. Every token carries the scope \`${TOKEN_SCOPE}\`, which grants the operations of this document plus the MCP endpoint ${config.baseUrl}/mcp; each token also reaches the REST API, MCP or both, as chosen when it was minted (a token without REST access gets 403 TOKEN_NOT_ALLOWED here), and may be limited to some capabilities (each operation's x-plinth-capability; 403 TOKEN_NOT_ALLOWED beyond them) and some websites (any other is 404).`,
          },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (json.$id as string) ?? `def-${i}` },
    transform: wildcardAsPath,
    transformObject: (document) => optionalBodies(mergeClientOnlyConstraints('openapiObject' in document ? document.openapiObject : document.swaggerObject)),
  })

  app.get('/openapi.json', { schema: { hide: true } }, () => app.swagger())
  registerResourceMetadata(app, config)
  // Every /v1 route refuses query parameters it does not take.
  strictQueries(app, '/v1')

  app.get(
    '/v1',
    {
      schema: {
        operationId: 'getApiIndex',
        tags: ['Meta'],
        summary: 'Where everything is',
        security: [],
        response: { 200: success(ApiIndexSchema, 'Where the OpenAPI document, the MCP endpoint, token minting and the documentation are.') },
      },
    },
    () => ({
      name: 'Plinth',
      version: API_VERSION,
      openapi: `${config.baseUrl}/openapi.json`,
      mcp: `${config.baseUrl}/mcp`,
      protectedResourceMetadata: resourceMetadataUrl(config, 'rest'),
      tokens: `${config.siteUrl}/mcp`,
      documentation: `${config.siteUrl}/docs`,
      llms: `${config.siteUrl}/llms.txt`,
      bundleLimits: { maxFiles: limits.maxFiles, maxFileBytes: limits.maxFileBytes, maxBundleBytes: limits.maxBundleBytes, maxHtmlPages: limits.maxHtmlPages },
    }),
  )

  await app.register(
    async (v1) => {
      v1.addHook('onRequest', authenticate(config, services.tokens, 'rest'))
      // Every route below says what it needs of a token (core/capability-map.ts), and is held to it.
      requireCapabilities(v1)
      refuseNulCharacters(v1)
      await v1.register(websitesRoutes(services, publishSchemas))
      await v1.register(draftsRoutes(services))
      await v1.register(versionFilesRoutes(services.versionFiles))
      await v1.register(browserRoutes(services.pageViews))
      await v1.register(uploadsRoutes(services.uploads, limits))
      await v1.register(collectionsRoutes(services.collections))
      await v1.register(entriesRoutes(services.entries))
      await v1.register(assetsRoutes(services.assets, limits.maxFileBytes))
      await v1.register(formsRoutes(services))
      await v1.register(webhooksRoutes(services.webhooks))
      await v1.register(approvalsRoutes(services))
      await v1.register(trafficRoutes(services.traffic))
    },
    { prefix: '/v1' },
  )
  // The upload PUT carries no bearer token (its signed URL is the credential): outside the scope above.
  await app.register(uploadContentRoutes(services.uploads, limits), { prefix: '/v1' })
  // The TLS proxy's question (on-demand certificates): no token, outside /v1 and the OpenAPI document.
  await app.register(tlsAskRoutes(services.servedDomains))
  // Health, readiness and metrics for the operator's tools: no API token, outside /v1 and the OpenAPI document.
  await app.register(operationsRoutes({ metrics, readiness, metricsToken: config.metricsToken }))
  // One tools file per module, each tool calling the same service function as its REST twin; listed in this order.
  const mcpTools = [
    ...websitesTools(services, config, publishSchemas),
    ...browserTools(services.pageViews),
    ...draftsTools(services, config.draftTtlDays),
    ...contentTools({ uploads: services.uploads, collections: services.collections, entries: services.entries, limits }),
    ...imagesTools(services.assets, limits.maxFileBytes),
    ...formsTools(services),
    ...approvalsTools(services),
    ...trafficTools(services.traffic),
  ]
  await app.register(mcpRoutes({ config, tokens: services.tokens, tools: mcpTools, version: API_VERSION, bodyLimit, tokenPage: webSite.tokenPage }))
  await app.register(webSite.routes)

  app.answerWrongMethods()
  return app
}

export type App = Awaited<ReturnType<typeof buildApp>>
