import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { principalOf } from '../auth/auth.routes.ts'
import { COLLECTION_NAME_MAX_CHARS } from '../core/limits.ts'
import { ref } from '../core/schemas.ts'
import { AUTH_ERRORS, BEARER_AUTH, BODY_ERRORS, errorResponses, success } from '../http/openapi.ts'
import { WebsiteIdParam, WebsiteParams } from '../websites/websites.schemas.ts'
import type { CollectionsService } from './collections.service.ts'
import { CollectionCreateSchema, CollectionListSchema, CollectionSchema, CollectionUpdateSchema } from './content.schemas.ts'

export const tags = ['Content']
export const security = BEARER_AUTH
export const CollectionParam = Type.String({ minLength: 1, maxLength: COLLECTION_NAME_MAX_CHARS, description: 'Collection name.' })
export const CollectionParams = Type.Object({ websiteId: WebsiteIdParam, collection: CollectionParam })

/** listCollections, createCollection, getCollection, updateCollection. Owners and editors alike. */
export function collectionsRoutes(collections: CollectionsService): FastifyPluginAsyncTypebox {
  // eslint-disable-next-line @typescript-eslint/require-await -- Fastify awaits an async plugin, so a throw while registering rejects register()
  return async (app) => {
    app.get(
      '/websites/:websiteId/collections',
      {
        schema: {
          operationId: 'listCollections',
          tags,
          security,
          summary: "List a website's collections",
          params: WebsiteParams,
          response: { 200: success(CollectionListSchema, 'The collections, by name.'), ...errorResponses([...AUTH_ERRORS, 'NOT_FOUND']) },
        },
      },
      (request) => collections.list(principalOf(request), request.params.websiteId),
    )

    app.post(
      '/websites/:websiteId/collections',
      {
        schema: {
          operationId: 'createCollection',
          tags,
          security,
          summary: 'Create a collection',
          description:
            'A collection named `posts` serves its entries at `/posts-{slug}` and reserves the root paths `posts-*`, `posts`, `posts.html`, `posts/`, `posts.json` and `posts.xml`; a name whose paths clash with files of the live version is refused (409 COLLECTION_CONFLICT), and later publishes may not add such files (PUBLISH_INVALID / RESERVED_PATH).',
          params: WebsiteParams,
          body: ref(CollectionCreateSchema),
          response: {
            201: success(CollectionSchema, 'The collection, created.'),
            ...errorResponses([...AUTH_ERRORS, ...BODY_ERRORS, 'NOT_FOUND', 'COLLECTION_EXISTS', 'COLLECTION_CONFLICT', 'COLLECTION_LIMIT_REACHED']),
          },
        },
      },
      async (request, reply) => reply.code(201).send(await collections.create(principalOf(request), request.params.websiteId, request.body)),
    )

    app.get(
      '/websites/:websiteId/collections/:collection',
      {
        schema: {
          operationId: 'getCollection',
          tags,
          security,
          summary: 'Get a collection with its fields',
          params: CollectionParams,
          response: { 200: success(CollectionSchema, 'The collection with its fields.'), ...errorResponses([...AUTH_ERRORS, 'NOT_FOUND']) },
        },
      },
      (request) => collections.get(principalOf(request), request.params.websiteId, request.params.collection),
    )

    app.patch(
      '/websites/:websiteId/collections/:collection',
      {
        schema: {
          operationId: 'updateCollection',
          tags,
          security,
          summary: 'Change the label or the fields of a collection',
          description:
            'fields replaces the whole list. No stored value is ever lost: a removed field moves to removedFields and its values stay in entry data; a field cannot change type while entries hold values for it (409 FIELD_IN_USE). Validation uses the current fields from the next write on.',
          params: CollectionParams,
          body: ref(CollectionUpdateSchema),
          response: {
            200: success(CollectionSchema, 'The collection, changed.'),
            ...errorResponses([...AUTH_ERRORS, ...BODY_ERRORS, 'NOT_FOUND', 'FIELD_IN_USE']),
          },
        },
      },
      (request) => collections.update(principalOf(request), request.params.websiteId, request.params.collection, request.body),
    )
  }
}
