import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { PromoteRequestSchema, ScheduleSchema } from '../approvals/approvals.schemas.ts'
import type { PromotionSchedules } from '../approvals/promotion-schedules.ts'
import { principalOf } from '../auth/auth.routes.ts'
import { WEBSITE_LIST_LIMIT } from '../core/limits.ts'
import { ref } from '../core/schemas.ts'
import { AUTH_ERRORS, BEARER_AUTH as security, BODY_ERRORS, errorResponses, OPTIONAL_BODY, success } from '../http/openapi.ts'
import { rateLimitHeaders } from '../http/rate-limit-headers.ts'
import {
  JobIdParam,
  JobSchema,
  type PublishRequestSchemas,
  PublishVersionResultSchema,
  PublishWebsiteResultSchema,
  SitePasswordSchema,
  SlugSuggestionSchema,
  SlugSuggestValue,
  VersionIdParam,
  VersionListSchema,
  VersionSchema,
  WebsiteIdParam,
  WebsiteParams,
  WebsiteListQuery,
  WebsiteListSchema,
  WebsiteSchema,
} from './websites.schemas.ts'
import type { JobDetails } from './job-details.ts'
import type { SitePasswords } from './site-passwords.ts'
import type { SlugClaims } from './slug-claims.ts'
import type { VersionFiles } from './version-files.ts'
import type { VersionPatches } from './version-patches.ts'
import type { VersionPromoter } from './version-promotion.ts'
import type { WebsiteDeletion } from './website-deletion.ts'
import type { WebsitePublishing } from './website-publishing.ts'
import type { WebsiteQueries } from './website-queries.ts'

const tags = ['Publishing']

/** The services behind the publishing and inspection operations, over REST and MCP alike. */
export interface WebsiteServices {
  websites: WebsiteQueries
  publishing: WebsitePublishing
  /** createWebsiteVersion: a whole bundle, or changes to a base version. */
  patches: VersionPatches
  promotion: VersionPromoter
  versionFiles: VersionFiles
  deletion: WebsiteDeletion
  jobDetails: JobDetails
  slugs: SlugClaims
  sitePasswords: SitePasswords
  /** Scheduled promotions (promoteWebsiteVersion with promoteAt). */
  schedules: PromotionSchedules
}

/**
 * The eight publishing and inspection operations plus promote, delete and the site password, under
 * /v1 (authenticated). `publish`: the publish requests with this instance's bundle limits.
 */
export function websitesRoutes(services: WebsiteServices, publish: PublishRequestSchemas): FastifyPluginAsyncTypebox {
  const { websites, publishing, patches, promotion, deletion, jobDetails, slugs, sitePasswords, schedules } = services
  // eslint-disable-next-line @typescript-eslint/require-await -- Fastify awaits an async plugin, so a throw while registering rejects register()
  return async (app) => {
    app.get(
      '/websites',
      {
        schema: {
          operationId: 'listWebsites',
          tags,
          security,
          summary: 'List the websites you own or edit',
          description: `Up to ${WEBSITE_LIST_LIMIT} websites, most recently updated first, with your role on each and the account limits; with slug, only the site of that slug.`,
          querystring: WebsiteListQuery,
          response: { 200: success(WebsiteListSchema, 'The websites, with the account limits.'), ...errorResponses([...AUTH_ERRORS, 'VALIDATION_FAILED']) },
        },
      },
      (request) => websites.list(principalOf(request), request.query),
    )

    app.post(
      '/websites',
      {
        schema: {
          operationId: 'createWebsite',
          tags,
          security,
          summary: 'Publish a new website',
          description:
            'Checks the bundle against the authoring rules, stores it as version 1 and serves it at once at pageUrl. Publishing is synchronous: the job is ready when the response is sent.',
          body: ref(publish.PublishWebsiteRequestSchema),
          response: {
            201: success(PublishWebsiteResultSchema, 'Published: version 1 is live at pageUrl.'),
            ...errorResponses([...AUTH_ERRORS, ...BODY_ERRORS, 'WEBSITE_LIMIT_REACHED', 'SLUG_TAKEN', 'PUBLISH_INVALID', 'RATE_LIMITED']),
          },
        },
      },
      async (request, reply) => {
        const { result, rateLimit } = await publishing.create(principalOf(request), request.body)
        return reply.code(201).headers(rateLimitHeaders(rateLimit)).send(result)
      },
    )

    app.get(
      '/websites/:websiteId',
      {
        schema: {
          operationId: 'getWebsite',
          tags,
          security,
          summary: 'Get a website with every version',
          params: WebsiteParams,
          response: { 200: success(WebsiteSchema, 'The website with every version.'), ...errorResponses([...AUTH_ERRORS, 'NOT_FOUND']) },
        },
      },
      (request) => websites.get(principalOf(request), request.params.websiteId),
    )

    app.delete(
      '/websites/:websiteId',
      {
        schema: {
          operationId: 'deleteWebsite',
          tags,
          security,
          summary: 'Delete a website (owner only)',
          description:
            'Deletes the website for good, with every version, member, collection, entry and library image. Its live URL and preview URLs stop serving at once and its slug is free again at once. Only the owner may delete a site: an editor gets 403 OWNER_ONLY. A website already deleted is 404 NOT_FOUND.',
          params: WebsiteParams,
          response: {
            204: Type.Null({ description: 'Deleted: nothing of the website is served any more.' }),
            ...errorResponses([...AUTH_ERRORS, 'OWNER_ONLY', 'NOT_FOUND']),
          },
        },
      },
      async (request, reply) => {
        await deletion.delete(principalOf(request), request.params.websiteId)
        return reply.code(204).send(null)
      },
    )

    app.put(
      '/websites/:websiteId/password',
      {
        schema: {
          operationId: 'setWebsitePassword',
          tags,
          security,
          summary: 'Set or replace the site password',
          description:
            'Visitors of every host of the site (its address and its previews) then get a password page (401) until they enter it; entering it unlocks that host for 7 days. A new password ends every earlier unlock. Owner or editor.',
          params: WebsiteParams,
          body: ref(SitePasswordSchema),
          response: {
            204: Type.Null({ description: 'Set: the site asks for the password from the next request on.' }),
            ...errorResponses([...AUTH_ERRORS, ...BODY_ERRORS, 'NOT_FOUND']),
          },
        },
      },
      async (request, reply) => {
        await sitePasswords.set(principalOf(request), request.params.websiteId, request.body.password)
        return reply.code(204).send(null)
      },
    )

    app.delete(
      '/websites/:websiteId/password',
      {
        schema: {
          operationId: 'removeWebsitePassword',
          tags,
          security,
          summary: 'Remove the site password',
          description: 'The site is open to everyone again from the next request on. Owner or editor; removing a password the site does not have is fine.',
          params: WebsiteParams,
          response: {
            204: Type.Null({ description: 'Removed.' }),
            ...errorResponses([...AUTH_ERRORS, 'NOT_FOUND']),
          },
        },
      },
      async (request, reply) => {
        await sitePasswords.set(principalOf(request), request.params.websiteId, null)
        return reply.code(204).send(null)
      },
    )

    app.get(
      '/websites/:websiteId/versions',
      {
        schema: {
          operationId: 'listWebsiteVersions',
          tags,
          security,
          summary: "List a website's versions, newest first",
          params: WebsiteParams,
          response: { 200: success(VersionListSchema, 'Every version, newest first.'), ...errorResponses([...AUTH_ERRORS, 'NOT_FOUND']) },
        },
      },
      (request) => websites.listVersions(principalOf(request), request.params.websiteId),
    )

    app.post(
      '/websites/:websiteId/versions',
      {
        schema: {
          operationId: 'createWebsiteVersion',
          tags,
          security,
          summary: 'Publish a new version of a website',
          description:
            'The complete replacement bundle (files), or a patch: baseVersion and changes (put, delete, move, edit) applied to its files, every other file published as it is there. Either way the whole new version is checked against the authoring rules. On a baseVersion, a version newer than it refuses the publish with 409 VERSION_CONFLICT naming the newer versions, unless overwrite is true. With promote (default true) it goes live at once; with promote false the live version stays and the new one is stored, reviewable at its previewUrl, and can be made live later with promoteWebsiteVersion.',
          params: WebsiteParams,
          body: ref(publish.PublishVersionRequestSchema),
          response: {
            201: success(PublishVersionResultSchema, 'Published: the version is stored, and live when promoted.'),
            ...errorResponses([
              ...AUTH_ERRORS,
              ...BODY_ERRORS,
              'NOT_FOUND',
              'BAD_REQUEST',
              'VERSION_CONFLICT',
              'PUBLISH_INVALID',
              'EDIT_NO_MATCH',
              'EDIT_AMBIGUOUS',
              'RATE_LIMITED',
            ]),
          },
        },
      },
      async (request, reply) => {
        const { result, rateLimit } = await patches.publish(principalOf(request), request.params.websiteId, request.body)
        return reply.code(201).headers(rateLimitHeaders(rateLimit)).send(result)
      },
    )

    app.post(
      '/websites/:websiteId/versions/:versionId/promote',
      {
        preValidation: OPTIONAL_BODY.preValidation,
        schema: {
          ...OPTIONAL_BODY.schema,
          operationId: 'promoteWebsiteVersion',
          tags,
          security,
          summary: 'Make a stored version live (review or instant rollback)',
          description:
            'Serves the given version at the live URL from the next request on. Works for any stored version: one published with promote false, or an older one to roll back to. versionId is the version id (job_...) or its number (`/versions/2/promote`). A version with files where a collection created since serves its entries, listing or feeds is refused (409 PROMOTE_CONFLICT, naming the files and the collection). Owners and editors may promote. With promoteAt, the promotion is scheduled instead (202): it happens within a minute after that time, on one instance, after a restart too; list schedules with listSchedules and cancel one with cancelSchedule. promoteAt in the past, unparseable or more than a year ahead is 400 BAD_REQUEST.',
          params: Type.Object({ websiteId: WebsiteIdParam, versionId: VersionIdParam }),
          body: ref(PromoteRequestSchema),
          // A POST: a body, though not needed, is still parsed, so the body errors apply too.
          response: {
            200: success(VersionSchema, 'The version, now live.'),
            202: success(ScheduleSchema, 'The promotion, scheduled: scheduleId, versionId, promoteAt.'),
            ...errorResponses([...AUTH_ERRORS, ...BODY_ERRORS, 'BAD_REQUEST', 'NOT_FOUND', 'PROMOTE_CONFLICT']),
          },
        },
      },
      async (request, reply) => {
        const { params, body } = request
        if (body.promoteAt === undefined) return promotion.promote(principalOf(request), params.websiteId, params.versionId)
        return reply.code(202).send(await schedules.schedule(principalOf(request), params.websiteId, params.versionId, body.promoteAt))
      },
    )

    app.get(
      '/jobs/:jobId',
      {
        schema: {
          operationId: 'getJob',
          tags,
          security,
          summary: 'Get a publish job',
          description: 'Jobs created through the API are already ready; useful for auditing.',
          params: Type.Object({ jobId: JobIdParam }),
          response: { 200: success(JobSchema, 'The job.'), ...errorResponses([...AUTH_ERRORS, 'NOT_FOUND']) },
        },
      },
      (request) => jobDetails.getJob(principalOf(request), request.params.jobId),
    )

    app.get(
      '/slugs/suggest',
      {
        schema: {
          operationId: 'suggestSlug',
          tags,
          security,
          summary: 'Check a slug and get an available one',
          description: 'Always returns an available suggestion, whether or not the input is valid and free.',
          querystring: Type.Object({ value: SlugSuggestValue }, { additionalProperties: false }),
          response: {
            200: success(SlugSuggestionSchema, 'Whether the input is a valid, free slug, and an available suggestion.'),
            ...errorResponses([...AUTH_ERRORS, 'VALIDATION_FAILED']),
          },
        },
      },
      (request) => slugs.suggest(request.query.value),
    )
  }
}
