/**
 * `GET /v1`, the one operation that needs no token: where the API's documents and endpoints are,
 * and the bundle limits this instance enforces.
 */
import { type Static, Type } from 'typebox'

export const ApiIndexSchema = Type.Object(
  {
    name: Type.String(),
    version: Type.String(),
    openapi: Type.String({ format: 'uri' }),
    mcp: Type.String({ format: 'uri' }),
    protectedResourceMetadata: Type.String({ format: 'uri' }),
    tokens: Type.String({ format: 'uri' }),
    documentation: Type.String({ format: 'uri' }),
    llms: Type.String({ format: 'uri' }),
    bundleLimits: Type.Object(
      { maxFiles: Type.Integer(), maxFileBytes: Type.Integer(), maxBundleBytes: Type.Integer(), maxHtmlPages: Type.Integer() },
      {
        description:
          'The bundle limits this instance enforces (files, bytes per file, bytes in all, HTML pages), for clients that check a bundle before sending it, such as `plinth deploy`.',
      },
    ),
  },
  { $id: 'ApiIndex' },
)

export type ApiIndex = Static<typeof ApiIndexSchema>
