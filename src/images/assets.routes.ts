import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { principalOf } from '../auth/auth.routes.ts'
import { formatSize } from '../core/limits.ts'
import { ref } from '../core/schemas.ts'
import { AUTH_ERRORS, BEARER_AUTH, BODY_ERRORS, errorResponses, success } from '../http/openapi.ts'
import { WebsiteParams } from '../websites/websites.schemas.ts'
import { ImportAssetRequestSchema, LibraryAssetSchema } from './assets.schemas.ts'
import type { AssetsService } from './assets.service.ts'

/** `maxImageBytes`: the largest image kept, a bundle file's size limit. */
export function assetsRoutes(assets: AssetsService, maxImageBytes: number): FastifyPluginAsyncTypebox {
  // eslint-disable-next-line @typescript-eslint/require-await -- Fastify awaits an async plugin, so a throw while registering rejects register()
  return async (app) => {
    app.post(
      '/websites/:websiteId/assets',
      {
        schema: {
          operationId: 'importAsset',
          tags: ['Content'],
          security: BEARER_AUTH,
          summary: "Add one image to the website's library",
          description:
            'Copies an image into the site-wide image library, by URL (fetched once: a URL already in the library returns the stored asset) or from a completed upload. ' +
            `Fetching is SSRF-safe: http(s) only, public addresses only (checked at connect time and after each of at most 5 redirects), ${formatSize(maxImageBytes)} at most, with timeouts, no cookies or credentials. ` +
            'The type is sniffed from the bytes: PNG, JPEG, GIF, WebP and AVIF are kept; SVG and anything else is refused. Identical bytes are stored once. Owners and editors may import.',
          params: WebsiteParams,
          body: ref(ImportAssetRequestSchema),
          response: {
            201: success(LibraryAssetSchema, 'The asset in the library (the stored one when the URL or bytes were already there).'),
            ...errorResponses([...AUTH_ERRORS, ...BODY_ERRORS, 'NOT_FOUND', 'FETCH_FAILED']),
          },
        },
      },
      async (request, reply) => reply.code(201).send(await assets.importAsset(principalOf(request), request.params.websiteId, request.body)),
    )
  }
}
